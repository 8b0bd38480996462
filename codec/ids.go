package codec

import (
	"crypto/rand"
	"sync"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomID is prefix and 24 random base62 characters (about 143 bits): the id a format mints
// for an answer, an output item or a call that came without one. The characters are drawn
// without modulo bias from crypto/rand bytes read a block at a time, so minting an id costs a
// copy rather than a call into the kernel's generator (several hundred nanoseconds each on
// a busy machine, and a stream may mint one per call).
func RandomID(prefix string) string {
	var id [64]byte
	out := append(id[:0], prefix...)
	need := len(out) + 24
	ids.Lock()
	for len(out) < need {
		if ids.left == 0 {
			_, _ = rand.Read(ids.block[:])
			ids.left = len(ids.block)
		}
		ids.left--
		if b := ids.block[ids.left]; b < 248 { // 248 = 4×62
			out = append(out, base62[b%62])
		}
	}
	ids.Unlock()
	return string(out)
}

// ids holds random bytes, block[:left] not used yet; a byte is used once.
var ids struct {
	sync.Mutex
	block [1024]byte
	left  int
}
