//go:build faults

package supervise

import (
	"os"
	"strings"
	"sync"
	"syscall"
)

// Injected is the value an armed Fault panics with.
type Injected struct{ Where string }

var (
	faultMu sync.Mutex
	armed   = map[string]int{}
	killAt  = map[string]bool{}
)

// killSelf is what an armed kill point does: SIGKILL to the process itself, as kill -9 from
// outside (no deferred call, no flush, no answer written), and nothing after it runs.
var killSelf = func() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// Fault kills the process when KillAtEnv named where; else it panics when PanicAt armed
// where, once per arming; else it does nothing.
func Fault(where string) {
	faultMu.Lock()
	kill := killAt[where]
	n := armed[where]
	if n > 0 {
		armed[where] = n - 1
	}
	faultMu.Unlock()
	if kill {
		killSelf()
	}
	if n > 0 {
		panic(Injected{where})
	}
}

// PanicAt arms where: its next n turns panic (tests of the recovery, faults build only).
func PanicAt(where string, n int) {
	faultMu.Lock()
	armed[where] += n
	faultMu.Unlock()
}

// Armed is how many armed panics at where have not fired yet.
func Armed(where string) int {
	faultMu.Lock()
	defer faultMu.Unlock()
	return armed[where]
}

// PanicAtEnv arms fault points in a process of the faults build: a comma-separated list of
// wheres, each armed once at start (the cluster tests arm their nodes' processes with it).
const PanicAtEnv = "MODELGATE_TEST_PANIC_AT"

// KillAtEnv makes fault points of a process of the faults build kill it: a comma-separated
// list of wheres; the first one reached sends the process SIGKILL (the kill -9 tests place
// the kill exactly, between a write made durable and the answer that says so).
const KillAtEnv = "MODELGATE_TEST_KILL_AT"

// faultList is the fault points a comma-separated list names, blanks dropped.
func faultList(list string) []string {
	var wheres []string
	for _, where := range strings.Split(list, ",") {
		if where = strings.TrimSpace(where); where != "" {
			wheres = append(wheres, where)
		}
	}
	return wheres
}

func init() {
	for _, where := range faultList(os.Getenv(PanicAtEnv)) {
		PanicAt(where, 1)
	}
	for _, where := range faultList(os.Getenv(KillAtEnv)) {
		killAt[where] = true
	}
}
