// Package freeport hands out loopback addresses for processes a test or a bench starts
// and that bind them a moment later.
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// The ports handed out: below Linux's default ephemeral range (32768-60999), so no
// outgoing connection or listener on port 0 takes one before its process binds it.
const low, high = 20000, 32000

// handedOut is every port given in this process: a process that has not bound its ports
// yet (still starting) must not find one of them given to another. locks are the ports'
// lock files, held (flock) until this process exits, so that test processes running side by
// side (go test runs packages in parallel) never hand out the same port either.
var handedOut = struct {
	sync.Mutex
	seen  map[int]bool
	locks []*os.File
}{seen: map[int]bool{}}

// lockDir holds one lock file per port handed out by any process of this machine.
var lockDir = filepath.Join(os.TempDir(), "modelgate-freeport")

// Addr is a loopback address nobody listens on right now and that this process never
// handed out before.
func Addr() (string, error) {
	for range 1000 {
		port := low + rand.IntN(high-low)
		if !claim(port) {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // taken by another process
		}
		addr := l.Addr().String()
		l.Close()
		return addr, nil
	}
	return "", errors.New("freeport: no free loopback port in 20000-32000")
}

// claim reports whether port was not handed out before, by this process or by another one
// still running, and marks it.
func claim(port int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.seen[port] {
		return false
	}
	handedOut.seen[port] = true
	if err := os.MkdirAll(lockDir, 0o777); err != nil {
		return true // no lock files here: this process's own record still holds
	}
	f, err := os.OpenFile(filepath.Join(lockDir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false // another process holds it
	}
	handedOut.locks = append(handedOut.locks, f)
	return true
}
