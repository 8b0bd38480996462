//go:build race

package main

// raceBuild is the go build flag that builds what this test runs as the test itself was
// built: with the race detector.
var raceBuild = []string{"-race"}
