//go:build faults

package supervise

import (
	"os"
	"strings"
	"sync"
)

// Injected is the value an armed Fault panics with.
type Injected struct{ Where string }

var (
	faultMu sync.Mutex
	armed   = map[string]int{}
)

// Fault panics when PanicAt armed where, once per arming; else it does nothing.
func Fault(where string) {
	faultMu.Lock()
	n := armed[where]
	if n > 0 {
		armed[where] = n - 1
	}
	faultMu.Unlock()
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

func init() {
	for _, where := range strings.Split(os.Getenv(PanicAtEnv), ",") {
		if where = strings.TrimSpace(where); where != "" {
			PanicAt(where, 1)
		}
	}
}
