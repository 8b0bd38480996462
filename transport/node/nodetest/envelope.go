package nodetest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Envelope is an error answer read from any of the gateway's envelopes: chat (responses,
// embeddings, images, videos, unrouted paths and the admin API share its shape), messages, or
// Google's.
type Envelope struct {
	Format    string // "chat", "messages" or "google"
	Type      string // the error's type (chat, messages) or status (Google)
	Code      string // its code (chat, messages) or ErrorInfo reason, lower-cased (Google)
	Param     string // its param (chat), or the field of Google's BadRequest violation
	Message   string
	RequestID string // error.request_id (chat), request_id (messages), RequestInfo (Google)
	// Status is Google's error.code, which must equal the HTTP status (0 elsewhere).
	Status int
	// Fields are the members beside message, type, code, param and request_id (Google:
	// ErrorInfo's metadata), as strings: retry_after_seconds, max_rpm, resets_at, replacement.
	Fields map[string]string
}

// ReadEnvelope reads an error answer; the error says why raw is not one.
func ReadEnvelope(raw []byte) (Envelope, error) {
	var top struct {
		Type      string                     `json:"type"`
		RequestID string                     `json:"request_id"`
		Error     map[string]json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &top); err != nil || top.Error == nil {
		return Envelope{}, fmt.Errorf("not an error envelope: %.300s", raw)
	}
	str := func(k string) string {
		var s string
		json.Unmarshal(top.Error[k], &s)
		return s
	}
	e := Envelope{Format: "chat", Type: str("type"), Code: str("code"), Param: str("param"), Message: str("message"),
		RequestID: str("request_id"), Fields: map[string]string{}}
	if _, google := top.Error["status"]; google {
		return readGoogle(raw)
	}
	if top.Type == "error" {
		if _, inside := top.Error["request_id"]; inside {
			return e, fmt.Errorf("messages envelope with request_id inside error: %s", raw)
		}
		e.Format, e.RequestID = "messages", top.RequestID
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
	return e, nil
}

// readGoogle reads Google's envelope: what the others carry as members is in its details.
func readGoogle(raw []byte) (Envelope, error) {
	var g struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
			Details []struct {
				Type            string            `json:"@type"`
				Reason          string            `json:"reason"`
				Metadata        map[string]string `json:"metadata"`
				RequestID       string            `json:"requestId"`
				FieldViolations []struct {
					Field string `json:"field"`
				} `json:"fieldViolations"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return Envelope{}, fmt.Errorf("not a Google error envelope: %.300s", raw)
	}
	e := Envelope{Format: "google", Type: g.Error.Status, Message: g.Error.Message, Status: g.Error.Code, Fields: map[string]string{}}
	for _, d := range g.Error.Details {
		switch {
		case strings.HasSuffix(d.Type, "google.rpc.ErrorInfo"):
			e.Code = strings.ToLower(d.Reason)
			for k, v := range d.Metadata {
				e.Fields[k] = v
			}
		case strings.HasSuffix(d.Type, "google.rpc.RequestInfo"):
			e.RequestID = d.RequestID
		case strings.HasSuffix(d.Type, "google.rpc.BadRequest") && len(d.FieldViolations) > 0:
			e.Param = d.FieldViolations[0].Field
		}
	}
	return e, nil
}
