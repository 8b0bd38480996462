//go:build faults

package clustertest

// buildTags build the nodes' binary with the fault points the faults tests arm
// (supervise.PanicAtEnv); unarmed, it behaves as the production binary.
var buildTags = []string{"-tags", "faults"}
