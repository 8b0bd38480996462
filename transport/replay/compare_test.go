package replay

import (
	"encoding/base64"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Status codes a client gets when every route is cooling down after an upstream 429
// (529 for chat and messages clients; responses clients get 503; Gemini clients Google's
// 429 RESOURCE_EXHAUSTED or 503 UNAVAILABLE).
var exhaustedStatus = map[string][]int{"chat": {529}, "messages": {529}, "responses": {503}, "gemini": {429, 503}}

// badRequestType is the client format's error type for a request the upstream refused.
var badRequestType = map[string]string{"chat": "invalid_request_error", "messages": "invalid_request_error",
	"responses": "invalid_request_error", "gemini": "INVALID_ARGUMENT"}

// check compares what the client got with what the recording holds.
func check(t *testing.T, c cell, want answer, got result) {
	t.Helper()
	for _, g := range got.Grammar {
		t.Errorf("stream grammar: %s", g)
	}
	switch {
	case want.Err != nil && want.Err.Status != 0:
		checkRefusal(t, c, want.Err, got)
		return
	case want.Err != nil:
		checkInStreamError(t, c, want, got)
		return
	case got.Err != nil:
		t.Errorf("the client got an error (status %d, %s): %s; the recording is a successful answer", got.Err.Status, got.ErrType, got.ErrMessage)
		return
	}
	if got.Model != c.model {
		t.Errorf("model = %q, want the model the client sent, %q (the recording names %q)", got.Model, c.model, want.Model)
	}
	if got.Text != want.Text {
		t.Errorf("text = %q, want %q", got.Text, want.Text)
	}
	if got.Reasoning != want.Reasoning {
		t.Errorf("reasoning text = %q, want %q", got.Reasoning, want.Reasoning)
	}
	checkCalls(t, c, want.Calls, got.Calls)
	if w, g := clientFinish(c, want), got.NativeStop; g != w {
		t.Errorf("finish = %q, want %q (the recording's %q)", g, w, want.NativeStop)
	}
	checkUsage(t, c.client, want.Usage, got.Usage)
	checkSignatures(t, c, want, got)
}

// clientFinish is the finish the client format must show for the recording's.
func clientFinish(c cell, want answer) string {
	switch c.client {
	case "chat":
		if c.rec.Meta.Format == "chat" && want.Finish != "tool_calls" {
			return want.NativeStop
		}
		return want.Finish
	case "messages":
		if c.rec.Meta.Format == "messages" {
			return want.NativeStop
		}
		return map[string]string{"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "refusal"}[want.Finish]
	case "responses":
		if want.Finish == "stop" || want.Finish == "tool_calls" {
			return "completed"
		}
		return "incomplete"
	case "gemini":
		if c.rec.Meta.Format == "gemini" {
			return want.NativeStop
		}
		return map[string]string{"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP", "content_filter": "SAFETY"}[want.Finish]
	}
	return want.Finish
}

// callID is how a client id must look: ids pass through (messages clients get them made
// valid), gemini calls without ids get minted call_<24 base62>, and a gemini signature
// rides as __thought__<base64url> (docs/conversion.md).
func callIDPattern(client string, want toolCall) *regexp.Regexp {
	base := regexp.QuoteMeta(want.ID)
	if client == "messages" {
		base = regexp.QuoteMeta(regexp.MustCompile(`[^A-Za-z0-9_-]`).ReplaceAllString(want.ID, "_"))
	}
	if want.ID == "" {
		base = `call_[A-Za-z0-9]{24}`
	}
	suffix := ""
	if want.Signature != "" {
		raw, err := base64.StdEncoding.DecodeString(want.Signature)
		if err == nil {
			suffix = regexp.QuoteMeta("__thought__" + base64.RawURLEncoding.EncodeToString(raw))
		}
	}
	return regexp.MustCompile("^" + base + suffix + "$")
}

func checkCalls(t *testing.T, c cell, want, got []toolCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d tool calls %s, want %d %s", len(got), callSummary(got), len(want), callSummary(want))
		return
	}
	for i := range want {
		if got[i].Name != want[i].Name {
			t.Errorf("tool call %d name = %q, want %q", i, got[i].Name, want[i].Name)
		}
		if got[i].Args != want[i].Args {
			t.Errorf("tool call %d arguments = %s, want %s", i, got[i].Args, want[i].Args)
		}
		if c.client == "gemini" {
			continue // Gemini calls may have no id; the gateway's choice is not checked here
		}
		if p := callIDPattern(c.client, want[i]); !p.MatchString(got[i].ID) {
			t.Errorf("tool call %d id = %q, want %s", i, got[i].ID, p)
		}
	}
}

// checkUsage compares usage in the client format's conventions: chat and responses
// show input with the cache and output with reasoning; messages shows input without the
// cache, and no reasoning count of its own.
func checkUsage(t *testing.T, client string, want, got *usage) {
	t.Helper()
	if want == nil {
		return
	}
	if got == nil {
		t.Errorf("no usage, want %+v", *want)
		return
	}
	w, g := *want, *got
	switch client {
	case "messages":
		w.Reasoning, g.Reasoning = 0, 0
	case "gemini": // no field for cache writes
		w.CacheWrite, g.CacheWrite = 0, 0
	}
	if w != g {
		t.Errorf("usage = %+v, want %+v (input incl. cache, output incl. reasoning)", g, w)
	}
}

// checkSignatures: reasoning signatures arrive where the client format can carry them,
// else their loss is reported (X-Modelgate-Dropped on whole answers, the dropped-fields
// counter on streams).
func checkSignatures(t *testing.T, c cell, want answer, got result) {
	t.Helper()
	if len(want.Signatures) == 0 {
		return
	}
	carried := func(sig string) bool {
		for _, s := range got.Signatures {
			if s == sig {
				return true
			}
		}
		raw, _ := base64.StdEncoding.DecodeString(sig)
		return strings.Contains(string(got.Raw), sig) || (len(raw) > 0 && strings.Contains(string(got.Raw), base64.RawURLEncoding.EncodeToString(raw)))
	}
	reported := func() bool {
		if c.rec.Meta.Stream {
			return got.Dropped > 0
		}
		return strings.Contains(got.Header.Get("X-Modelgate-Dropped"), "signature")
	}
	mustCarry := want.SigFormat == "messages" && (c.client == "chat" || c.client == "messages") ||
		want.SigFormat == c.client
	for i, sig := range want.Signatures {
		switch {
		case carried(sig):
		case mustCarry:
			t.Errorf("reasoning signature %d (%s) did not reach the %s client, which can carry it", i, want.SigFormat, c.client)
		case !reported():
			t.Errorf("reasoning signature %d (%s) was lost silently: not in the answer, not in X-Modelgate-Dropped, not counted as dropped", i, want.SigFormat)
		}
	}
}

// checkRefusal: an upstream HTTP error reaches the client in its own envelope.
func checkRefusal(t *testing.T, c cell, want *upstreamError, got result) {
	t.Helper()
	if got.Err == nil {
		t.Errorf("the client got status %d and no error; the upstream refused with %d", got.Status, want.Status)
		return
	}
	switch s := want.Status; {
	case s == http.StatusTooManyRequests:
		if w := exhaustedStatus[c.client]; !containsInt(w, got.Err.Status) {
			t.Errorf("status = %d, want %v after the upstream's 429 (every route cooling down)", got.Err.Status, w)
		}
		ra, err := strconv.Atoi(got.Header.Get("Retry-After"))
		switch min := int(math.Ceil(want.RetryAfter)) - 1; {
		case err != nil:
			t.Errorf("Retry-After = %q, want whole seconds", got.Header.Get("Retry-After"))
		case want.RetryAfter > 0 && ra < min:
			t.Errorf("Retry-After = %d s, want the route's remaining cooldown, at least the provider's %.1f s hint (≥ %d)", ra, want.RetryAfter, min)
		}
		if want.Billing && want.Message != "" && strings.Contains(got.ErrMessage, want.Message) {
			t.Errorf("the client sees the provider's billing message %q", got.ErrMessage)
		}
	case s >= 500:
		if got.Err.Status != http.StatusBadGateway {
			t.Errorf("status = %d, want 502 after the upstream's %d", got.Err.Status, s)
		}
	case s == 401 || s == 403 || s == 404 || s == 408:
		if got.Err.Status != http.StatusBadGateway {
			t.Errorf("status = %d, want 502 (the route's setup is wrong, not the client's request)", got.Err.Status)
		}
	default:
		if got.Err.Status != s {
			t.Errorf("status = %d, want the upstream's %d", got.Err.Status, s)
		}
		if w := badRequestType[c.client]; got.ErrType != w {
			t.Errorf("error type = %q, want %s", got.ErrType, w)
		}
		if !strings.Contains(got.ErrMessage, want.Message) {
			t.Errorf("error message = %q, want the provider's %q", got.ErrMessage, want.Message)
		}
	}
}

// anthropicTypes are the error types anthropic-sdk-go clients know.
var anthropicTypes = map[string]bool{"invalid_request_error": true, "authentication_error": true, "billing_error": true,
	"permission_error": true, "not_found_error": true, "request_too_large": true, "rate_limit_error": true,
	"api_error": true, "timeout_error": true, "overloaded_error": true}

// checkInStreamError: an error inside a 200 stream reaches the client as its format's
// in-band error, with the provider's message — but a billing refusal (insufficient_quota)
// never with the provider's words: it is the operator's problem (decisions.md, Errors).
func checkInStreamError(t *testing.T, c cell, want answer, got result) {
	t.Helper()
	if got.Err == nil {
		t.Errorf("the client got no error; the recorded stream fails with %q", want.Err.Message)
		return
	}
	billing := want.Err.Code == "insufficient_quota" || want.Err.Code == "billing_error"
	switch {
	case billing && want.Err.Message != "" && strings.Contains(got.ErrMessage, want.Err.Message):
		t.Errorf("the client sees the provider's billing message %q", got.ErrMessage)
	case billing && !strings.Contains(got.ErrMessage, "operator"):
		t.Errorf("error message = %q, want the gateway's notice that the refusal is the operator's", got.ErrMessage)
	case !billing && want.Err.Message != "" && !strings.Contains(got.ErrMessage, want.Err.Message):
		t.Errorf("error message = %q, want the provider's %q", got.ErrMessage, want.Err.Message)
	}
	if c.client == "messages" && !anthropicTypes[got.ErrType] {
		t.Errorf("error type = %q, want an Anthropic error type", got.ErrType)
	}
	if got.Text != want.Text {
		t.Errorf("text before the error = %q, want %q", got.Text, want.Text)
	}
}

func containsInt(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// callSummary is name(arguments) per call, short enough for a failure message.
func callSummary(calls []toolCall) string {
	var parts []string
	for _, c := range calls {
		parts = append(parts, c.Name+c.Args)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
