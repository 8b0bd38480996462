package simulator

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// startSim runs a simulator on a free loopback port for the duration of the test.
func startSim(t *testing.T) (*Server, string) {
	t.Helper()
	s, base, stop, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return s, base
}

// call sends a request with the test credential, or with auth as the Authorization header
// ("-" sends none), and returns the response with its body read.
func call(t *testing.T, method, url, body, auth string) (*http.Response, []byte) {
	t.Helper()
	headers := map[string]string{"Authorization": "Bearer sk-test"}
	switch auth {
	case "":
	case "-":
		delete(headers, "Authorization")
	default:
		headers["Authorization"] = auth
	}
	return callHeaders(t, method, url, body, headers)
}

func callHeaders(t *testing.T, method, url, body string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s %s: %v", method, url, err)
	}
	return resp, data
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	return call(t, http.MethodPost, url, body, "")
}

// decode unmarshals JSON into a generic value, failing the test on invalid JSON.
func decode(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("invalid JSON %q: %v", data, err)
	}
	return v
}

// assertJSON compares JSON documents structurally (key order and spacing do not matter).
func assertJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	if g, w := decode(t, got), decode(t, []byte(want)); !reflect.DeepEqual(g, w) {
		t.Errorf("JSON mismatch\n got: %s\nwant: %s", bytes.TrimSpace(got), want)
	}
}

// without returns obj's JSON minus the named top-level keys (ids and timestamps vary).
func without(t *testing.T, data []byte, keys ...string) []byte {
	t.Helper()
	obj, ok := decode(t, data).(map[string]any)
	if !ok {
		t.Fatalf("not a JSON object: %s", data)
	}
	for _, k := range keys {
		delete(obj, k)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sseEventT is one parsed stream event.
type sseEventT struct {
	name string // the "event:" line, "" if none
	data string // the "data:" payload, or the whole block of a bare event
	bare bool   // the block had no "data:" line (a Gemini mid-stream error)
}

// parseEvents splits a stream into events separated by sep ("\n\n", or "\r\n\r\n" for
// Gemini), requiring every event to be at most one "event:" line then one "data:" line, or a
// bare JSON object.
func parseEvents(t *testing.T, body, sep string) []sseEventT {
	t.Helper()
	if !strings.HasSuffix(body, sep) {
		t.Fatalf("stream does not end with %q: %q", sep, body)
	}
	var out []sseEventT
	for _, block := range strings.Split(strings.TrimSuffix(body, sep), sep) {
		var ev sseEventT
		rest := block
		if name, after, ok := strings.Cut(rest, "\n"); ok && strings.HasPrefix(name, "event: ") {
			ev.name, rest = strings.TrimPrefix(name, "event: "), after
		}
		data, ok := strings.CutPrefix(rest, "data: ")
		if !ok {
			if ev.name != "" || !strings.HasPrefix(rest, "{") {
				t.Fatalf("malformed event %q", block)
			}
			data, ev.bare = rest, true
		}
		if strings.ContainsAny(data, "\r\n") {
			t.Fatalf("multi-line event %q", block)
		}
		ev.data = data
		out = append(out, ev)
	}
	return out
}

// object decodes a JSON object, failing the test otherwise.
func object(t *testing.T, data string) map[string]any {
	t.Helper()
	m, ok := decode(t, []byte(data)).(map[string]any)
	if !ok {
		t.Fatalf("not a JSON object: %s", data)
	}
	return m
}

// path walks a decoded JSON value by object keys and array indexes.
func path(v any, steps ...any) any {
	for _, s := range steps {
		switch k := s.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// str is path as a string ("" when absent).
func str(v any, steps ...any) string {
	s, _ := path(v, steps...).(string)
	return s
}

// num is path as an int (0 when absent).
func num(v any, steps ...any) int {
	f, _ := path(v, steps...).(float64)
	return int(f)
}

// marshal encodes v for assertJSON.
func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
