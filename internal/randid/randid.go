// Package randid draws the gateway's random ids and secrets: base62 characters, each drawn
// uniformly (no modulo bias) from crypto/rand. Every id and secret the gateway mints comes
// from here: API keys and their ids, account ids, admin tokens, asset and video ids, and the
// ids a wire format mints for an answer or a tool call.
package randid

import "crypto/rand"

// Alphabet is the characters an id is drawn from.
const Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// unbiased bounds the bytes kept: 248 is the largest multiple of 62 a byte holds, so a byte
// below it taken mod 62 gives each character the same chance; a byte at or above it is
// dropped (reducing it would favour the first 8 characters).
const unbiased = 248

// Base62 is n characters drawn uniformly from crypto/rand (about 5.95 bits each).
func Base62(n int) string {
	return string(Append(make([]byte, 0, n), n))
}

// Append appends n characters drawn as Base62 draws them to dst.
func Append(dst []byte, n int) []byte {
	var buf [64]byte
	for need := len(dst) + n; len(dst) < need; {
		// A few more bytes than still needed: about 3% are dropped.
		chunk := buf[:min(len(buf), need-len(dst)+(need-len(dst))/16+2)]
		rand.Read(chunk) // never fails: it crashes the program instead
		for _, b := range chunk {
			if b < unbiased && len(dst) < need {
				dst = append(dst, Alphabet[b%62])
			}
		}
	}
	return dst
}

// Is reports whether s is made of base62 characters only.
func Is(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}
