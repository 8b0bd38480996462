//go:build faults

package main

// buildTags build the binaries the kill -9 tests run with the fault points the faults tests
// arm (supervise.KillAtEnv, supervise.PanicAtEnv); unarmed, they behave as the production
// binaries.
var buildTags = []string{"-tags", "faults"}
