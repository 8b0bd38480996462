//go:build !race

package main

// raceBuild is the go build flag that builds what this test runs as the test itself was
// built: without the race detector.
var raceBuild []string
