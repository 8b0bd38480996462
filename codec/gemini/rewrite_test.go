package gemini

import (
	"testing"
	"time"
)

func TestRewriteModelVersion(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"compact", `{"candidates":[],"modelVersion":"up-g","responseId":"r"}`,
			`{"candidates":[],"modelVersion":"client","responseId":"r"}`},
		{"pretty and dated", "{\n  \"modelVersion\" :  \"gemini-2.5-flash-001\",\n  \"x\": 1\n}",
			"{\n  \"modelVersion\" :  \"client\",\n  \"x\": 1\n}"},
		{"a nested member of the same name stays", `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"modelVersion":"keep"}}}]}}],"modelVersion":"up"}`,
			`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"modelVersion":"keep"}}}]}}],"modelVersion":"client"}`},
		{"in text it stays", `{"candidates":[{"content":{"parts":[{"text":"\"modelVersion\":\"x\""}]}}]}`,
			`{"candidates":[{"content":{"parts":[{"text":"\"modelVersion\":\"x\""}]}}]}`},
		{"absent", `{"candidates":[]}`, `{"candidates":[]}`},
		{"not an object", `[{"modelVersion":"up"}]`, `[{"modelVersion":"up"}]`},
		{"broken", `{"modelVersion":`, `{"modelVersion":`},
		{"escaped name", `{"modelVersion":"a\"b"}`, `{"modelVersion":"client"}`},
	}
	for _, c := range cases {
		if got := string(RewriteModelVersion([]byte(c.in), "client")); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	cases := []struct {
		name string
		body string
		want time.Duration
		ok   bool
	}{
		{"retry info", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
			{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},
			{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34.4s"}]}}`, 34400 * time.Millisecond, true},
		{"whole seconds", `{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}`, 7 * time.Second, true},
		{"in the stream array", `[{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1s"}]}}]`, time.Second, true},
		{"no retry info", `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`, 0, false},
		{"not a duration", `{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"soon"}]}}`, 0, false},
		{"minutes are not protobuf", `{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1m"}]}}`, 0, false},
		{"not JSON", `<html>`, 0, false},
	}
	for _, c := range cases {
		got, ok := RetryDelay([]byte(c.body))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
