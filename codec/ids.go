package codec

import (
	crand "crypto/rand"
	"math/rand/v2"
	"sync"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomID is prefix and 24 random base62 characters (about 143 bits): the id a format mints
// for an answer, an output item or a call that came without one. The characters are drawn
// without modulo bias from a ChaCha8 generator (cryptographically strong) seeded from
// crypto/rand: crypto/rand itself costs about 5 ns a byte on a busy machine, some 150 ns an
// id, and a stream may mint one per call.
func RandomID(prefix string) string {
	var id [64]byte
	out := append(id[:0], prefix...)
	need := len(out) + 24
	ids.Lock()
	for len(out) < need {
		x := ids.rng.Uint64()
		for k := 0; k < 10 && len(out) < need; k++ { // ten 6-bit draws a word
			if v := x & 63; v < 62 {
				out = append(out, base62[v])
			}
			x >>= 6
		}
	}
	ids.Unlock()
	return string(out)
}

var ids struct {
	sync.Mutex
	rng *rand.ChaCha8
}

func init() {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // it never fails (it would crash the program instead)
	ids.rng = rand.NewChaCha8(seed)
}
