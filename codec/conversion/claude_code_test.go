package conversion

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/messages"
	"github.com/modelgate/modelgate/codec/reasoning"
)

// claudeCodeDir holds requests Claude Code 2.1.328 sent (see its README).
const claudeCodeDir = "../../testdata/messages/claude_code"

// claudeModel is a Claude model as the catalog would describe one that takes only adaptive
// thinking; the captured requests ask for effort high.
var claudeModel = model{maxOutputTokens: 32000, reasoning: reasoning.Model{
	Class: reasoning.ClassEffort, Efforts: []string{"low", "medium", "high", "max"}, Adaptive: true}}

// TestClaudeCodeRequests: the captured requests decode, with the environment block as a system
// message in its place; every other upstream format gets the expected body and reports what it
// drops; a messages route gets the body as Claude Code sent it, but for the model.
func TestClaudeCodeRequests(t *testing.T) {
	for _, turn := range []string{"first_turn", "tool_followup"} {
		t.Run(turn, func(t *testing.T) {
			body := readFile(t, claudeCodeDir, turn+".json")
			req, err := messages.Format.DecodeRequest(body)
			if err != nil {
				t.Fatalf("the captured request does not decode: %v", err)
			}
			// system blocks (3), the first user turn, then the environment as a system turn
			if roles := roleList(req.Messages); !strings.HasPrefix(roles, "system system system user system ") {
				t.Errorf("roles %s, want the environment block in place after the first user turn", roles)
			}
			d := reasoning.Resolve(claudeModel.reasoning, req.Thinking)
			if d.EffortUsed != "high" || !d.Thinking.Adaptive {
				t.Errorf("decision %+v, want effort high, adaptive", d)
			}
			pass, err := messages.PassBody(body, "claude-opus-4-7", d.Thinking, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := patchJSON(t, body, map[string]any{"model": "claude-opus-4-7"})
			if g, w := mustCanonical(t, pass), mustCanonical(t, want); g != w {
				t.Errorf("the messages route body is not the client's with the route's model id:\n got: %.300s\nwant: %.300s", g, w)
			}
			for _, u := range upstreams {
				if u.name == formatMessages || u.name == formatConverse {
					continue // converse: no goldens for these captures yet (testdata/messages/claude_code)
				}
				t.Run(u.name, func(t *testing.T) { checkClaudeCode(t, turn, req, d, u) })
			}
		})
	}
}

func checkClaudeCode(t *testing.T, turn string, req *ir.Request, d reasoning.Decision, u upstreamSpec) {
	var loss ir.Loss
	got, err := convertBody(req, d, formatMessages, u, claudeModel, &loss)
	if err != nil {
		t.Fatalf("EncodeRequest: %v", err)
	}
	name := filepath.Join(claudeCodeDir, turn+".upstream."+u.name+".json")
	lossName := filepath.Join(claudeCodeDir, turn+".loss."+u.name+".txt")
	if *update {
		writeGolden(t, name, encodeJSON(mustDecode(t, got), "  "))
		writeGolden(t, lossName, []byte(strings.Join(loss.Fields(), "\n")))
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mustCanonical(t, got), mustCanonical(t, want); g != w {
		t.Errorf("the %s upstream request differs from %s", u.name, name)
	}
	if f, w := loss.Fields(), readLoss(lossName); !slices.Equal(f, w) {
		t.Errorf("dropped fields %q, want %q", f, w)
	}
}

func roleList(msgs []ir.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(string(m.Role) + " ")
	}
	return b.String()
}

func mustCanonical(t *testing.T, b []byte) string {
	t.Helper()
	c, err := canonical(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
