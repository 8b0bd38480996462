package gemini

import "testing"

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
