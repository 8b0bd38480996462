//go:build !faults

package clustertest

// buildTags are the go build flags of the nodes' binary: none outside the faults build.
var buildTags []string
