// Package respond writes the JSON answers of the gateway's HTTP edges (the API's model list,
// the admin API, the account API, the dashboard's auth, the cluster's operator endpoints):
// one way to write a value and one error envelope for all of them.
package respond

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/modelgate/modelgate/codec/chat"
)

// JSON answers v as JSON with status. The answer is not to be cached (Cache-Control:
// no-store, unless the handler set its own): it is an account's, a key's or the node's state
// as of now.
func JSON(w http.ResponseWriter, status int, v any) {
	header(w)
	w.WriteHeader(status)
	w.Write(Marshal(v))
}

// Error answers an error in the chat envelope (the format every client of these edges
// reads), with the answer's request id beside the rest, as the API's errors carry it, so a
// pasted error can be traced.
func Error(w http.ResponseWriter, status int, typ, code, param, msg string) {
	header(w)
	w.WriteHeader(status)
	w.Write(chat.ErrorBodyFor(w.Header().Get("X-Request-Id"), msg, typ, code, param))
}

// Marshal is v as JSON writes it: HTML characters as they are ("text->text", not
// "text-\u003etext"), a newline after.
func Marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return b.Bytes()
}

func header(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
}
