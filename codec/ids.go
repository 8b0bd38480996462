package codec

import "github.com/modelgate/modelgate/internal/randid"

// RandomID is prefix and 24 random base62 characters (about 143 bits): the id a format mints
// for an answer, an output item or a call that came without one.
func RandomID(prefix string) string {
	var id [64]byte
	return string(randid.Append(append(id[:0], prefix...), 24))
}
