//go:build faults

package supervise

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// TestFaultPanicsOncePerArming: an armed fault point panics with Injected as many times as
// it was armed, then does nothing; other points are not touched.
func TestFaultPanicsOncePerArming(t *testing.T) {
	PanicAt("test.fault", 2)
	var got []any
	for range 4 {
		func() {
			defer func() { got = append(got, recover()) }()
			Fault("test.fault.other")
			Fault("test.fault")
		}()
	}
	want := []any{Injected{"test.fault"}, Injected{"test.fault"}, nil, nil}
	if !reflect.DeepEqual(got, want) || Armed("test.fault") != 0 {
		t.Fatalf("recovered %v (armed %d), want %v", got, Armed("test.fault"), want)
	}
}

// TestFaultKillAtNamesItsPoints: KillAtEnv's list is read as PanicAtEnv's (commas, blanks
// dropped), and only the points it names kill, every time they are reached.
func TestFaultKillAtNamesItsPoints(t *testing.T) {
	if got, want := faultList(" test.kill.a, ,test.kill.b ,"), []string{"test.kill.a", "test.kill.b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("faultList: %q, want %q", got, want)
	}
	if faultList("") != nil {
		t.Fatal("an empty list names fault points")
	}
	var killed []string
	where := ""
	saved := killSelf
	killSelf = func() { killed = append(killed, where) }
	faultMu.Lock()
	killAt["test.kill.a"] = true
	faultMu.Unlock()
	t.Cleanup(func() {
		killSelf = saved
		faultMu.Lock()
		delete(killAt, "test.kill.a")
		faultMu.Unlock()
	})
	for _, where = range []string{"test.kill.a", "test.kill.other", "test.kill.a"} {
		Fault(where)
	}
	if want := []string{"test.kill.a", "test.kill.a"}; !reflect.DeepEqual(killed, want) {
		t.Fatalf("killed at %q, want %q", killed, want)
	}
}

// killChildEnv makes TestFaultKillAtSendsSIGKILL the child it runs.
const killChildEnv = "SUPERVISE_TEST_KILL_CHILD"

// TestFaultKillAtSendsSIGKILL: a process started with KillAtEnv naming a point dies of
// SIGKILL when it reaches it, and nothing after the point runs (this test binary, run again
// as a child).
func TestFaultKillAtSendsSIGKILL(t *testing.T) {
	if os.Getenv(killChildEnv) == "1" {
		Fault("test.kill.unarmed")
		fmt.Println("before")
		Fault("test.kill.child")
		fmt.Println("after")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultKillAtSendsSIGKILL$", "-test.count=1")
	cmd.Env = append(os.Environ(), killChildEnv+"=1", KillAtEnv+"=test.kill.none, test.kill.child")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended with %v, want killed by SIGKILL; output:\n%s", err, out)
	}
	if s := string(out); !strings.Contains(s, "before") || strings.Contains(s, "after") {
		t.Fatalf("the child wrote %q: want the line before the kill point, not the one after", s)
	}
}
