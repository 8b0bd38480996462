package gemini

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

var update = flag.Bool("update", false, "rewrite the golden request bodies under testdata/gemini/encode")

const testdata = "../../testdata/gemini"

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// canon re-renders JSON with sorted keys and indentation, so bodies compare by content.
func canon(t testing.TB, b []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// fixedCallIDs makes minted call ids call_test0, call_test1, … for the test's duration.
func fixedCallIDs(t testing.TB) {
	t.Helper()
	prev := newCallID
	n := 0
	newCallID = func() string {
		id := fmt.Sprintf("call_test%d", n)
		n++
		return id
	}
	t.Cleanup(func() { newCallID = prev })
}

func ptr[T any](v T) *T { return &v }

// signedText is a text part carrying a gemini thoughtSignature.
func signedText(s, sig string) ir.Part {
	return ir.Part{Kind: ir.PartText, Text: s, Signature: sig, SignatureFormat: "gemini"}
}
