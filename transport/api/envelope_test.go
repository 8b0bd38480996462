package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// envelope is an error answer read from any of the gateway's envelopes: chat (and
// responses, the same shape), messages, or Google's.
type envelope struct {
	Format    string // "chat", "messages" or "google"
	Type      string // the error type (chat, messages) or status (Google)
	Code      string // code (chat, messages) or ErrorInfo reason, lower-cased (Google)
	Message   string
	RequestID string
	// Fields are the members beside message, type, code and param (Google: ErrorInfo's
	// metadata), as strings: retry_after_seconds, max_rpm, resets_at, replacement.
	Fields map[string]string
}

func readEnvelope(t *testing.T, raw []byte) envelope {
	t.Helper()
	var top struct {
		Type      string                     `json:"type"`
		RequestID string                     `json:"request_id"`
		Error     map[string]json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &top); err != nil || top.Error == nil {
		t.Fatalf("not an error envelope: %s", raw)
	}
	str := func(m map[string]json.RawMessage, k string) string {
		var s string
		json.Unmarshal(m[k], &s)
		return s
	}
	e := envelope{Format: "chat", Type: str(top.Error, "type"), Code: str(top.Error, "code"), Message: str(top.Error, "message"),
		RequestID: str(top.Error, "request_id"), Fields: map[string]string{}}
	if _, google := top.Error["status"]; google {
		var g googleError
		json.Unmarshal(raw, &g)
		e.Format, e.Type = "google", g.Error.Status
		e.RequestID, _ = g.detail("RequestInfo")["requestId"].(string)
		info := g.detail("ErrorInfo")
		reason, _ := info["reason"].(string)
		e.Code = strings.ToLower(reason)
		meta, _ := info["metadata"].(map[string]any)
		for k, v := range meta {
			e.Fields[k] = fmt.Sprint(v)
		}
		return e
	}
	if top.Type == "error" {
		e.Format, e.RequestID = "messages", top.RequestID
		if _, inside := top.Error["request_id"]; inside {
			t.Errorf("messages envelope with request_id inside error: %s", raw)
		}
	}
	for k, v := range top.Error {
		switch k {
		case "message", "type", "code", "param", "request_id":
			continue
		}
		var s any
		json.Unmarshal(v, &s)
		e.Fields[k] = fmt.Sprint(s)
	}
	return e
}
