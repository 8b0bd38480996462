//go:build race

package main

// raceBuild is the go build flag that builds the binaries these tests run as the tests were
// built: with the race detector.
var raceBuild = []string{"-race"}
