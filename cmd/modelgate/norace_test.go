//go:build !race

package main

// raceBuild is the go build flag that builds the binaries these tests run as the tests were
// built: without the race detector.
var raceBuild []string
