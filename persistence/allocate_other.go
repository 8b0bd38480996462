//go:build !linux

package persistence

import "os"

// allocate reserves n bytes of disk for f by writing them.
func allocate(f *os.File, n int64) error { return writeZeros(f, n) }
