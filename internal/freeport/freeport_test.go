package freeport

import (
	"net"
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
