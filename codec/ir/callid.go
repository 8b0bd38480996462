package ir

import (
	"encoding/base64"
	"strings"
)

const thoughtSep = "__thought__"

// JoinCallID carries a gemini thoughtSignature inside a tool-call id that clients echo back,
// so the signature survives a round trip through any client format without gateway state.
func JoinCallID(id, signature string) string {
	if signature == "" {
		return id
	}
	raw, err := base64.StdEncoding.DecodeString(signature)
	if err != nil {
		raw = []byte(signature) // not base64: carry the bytes as they are
	}
	return id + thoughtSep + base64.RawURLEncoding.EncodeToString(raw)
}

// SplitCallID undoes JoinCallID: the original id and the signature in standard base64.
func SplitCallID(id string) (string, string) {
	i := strings.Index(id, thoughtSep)
	if i < 0 {
		return id, ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(id[i+len(thoughtSep):])
	if err != nil {
		return id, ""
	}
	return id[:i], base64.StdEncoding.EncodeToString(raw)
}
