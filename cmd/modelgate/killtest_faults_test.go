//go:build faults

package main

import "testing"

// TestFaultKillNineTwentyTimes is the kill -9 test (killtest_test.go) with twenty kills at
// random moments under load: make test-faults.
func TestFaultKillNineTwentyTimes(t *testing.T) { runKillTest(t, 20) }
