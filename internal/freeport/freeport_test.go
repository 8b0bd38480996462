package freeport

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

func TestAddrNeverRepeatsAndIsBindable(t *testing.T) {
	seen := map[string]bool{}
	for range 500 {
		addr, err := Addr()
		if err != nil {
			t.Fatal(err)
		}
		if seen[addr] {
			t.Fatalf("%s handed out twice", addr)
		}
		seen[addr] = true
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s not bindable: %v", addr, err)
		}
		l.Close()
	}
}

// A port whose lock file another process holds is not handed out; one nobody holds is.
func TestAPortLockedElsewhereIsNotHandedOut(t *testing.T) {
	held, free := unseenPort(t, high-1), 0
	free = unseenPort(t, held-1)
	if err := os.MkdirAll(lockDir, 0o777); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(lockDir, strconv.Itoa(held)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Another open file description conflicts as another process's would.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Skipf("port %d is held by a running test process: %v", held, err)
	}
	if claim(held) {
		t.Errorf("port %d, locked by another holder, was handed out", held)
	}
	if !claim(free) {
		t.Errorf("port %d, held by nobody, was not handed out", free)
	}
}

// unseenPort is the highest port at or below from that this process has not handed out.
func unseenPort(t *testing.T, from int) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for p := from; p >= low; p-- {
		if !handedOut.seen[p] {
			return p
		}
	}
	t.Fatal("every port was handed out")
	return 0
}
