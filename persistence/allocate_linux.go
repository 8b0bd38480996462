package persistence

import (
	"errors"
	"os"
	"syscall"
)

// allocate reserves n bytes of disk for f: fallocate takes the blocks at once without writing
// them, where the filesystem supports it.
func allocate(f *os.File, n int64) error {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, n)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return writeZeros(f, n)
	}
	return err
}
