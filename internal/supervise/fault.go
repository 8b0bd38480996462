//go:build !faults

package supervise

// Fault marks a turn of a long-lived loop where the faults build (tests tagged faults) can
// make it panic, to prove the loop resumes; in every other build it does nothing and is
// compiled away, so production code carries no switch for it.
func Fault(where string) {}
