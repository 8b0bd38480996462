//go:build !faults

package main

// buildTags are the go build flags of the binaries the kill -9 tests run: none outside the
// faults build.
var buildTags []string
