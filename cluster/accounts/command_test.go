package accounts

import (
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/persistence"
)

// A quota step's command travels in binary, the rare commands in msgpack; both come back
// as they went.
func TestACommandDecodesAsItWasEncoded(t *testing.T) {
	cases := []struct {
		name   string
		cmd    Command
		binary bool
	}{
		{"an admission", Command{ID: "c1", Account: "acct_1", Step: step.Command{Kind: step.Admit, Now: 5, Plan: step.Plan{WindowRequests: 100}, Key: "key_1", Units: 1000, Amount: 40, Node: 2, Inc: 9}}, true},
		{"a settle with its log entry", Command{ID: "c2", Account: "acct_1", Step: step.Command{Kind: step.Settle, Now: 6, ID: 1, Counts: true, Amount: 25,
			Log: &persistence.LogEntry{RequestID: "req_1", Time: 5, AccountID: "acct_1", KeyID: "key_1", Model: "m", Status: 200, OutputTokens: 3}}}, true},
		{"a node's address", Command{ID: "c3", Node: &NodeAddr{ID: 2, Addr: "10.0.0.2:7001", Inc: 9}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.cmd.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if got := b[0] == binaryV1; got != tc.binary {
				t.Fatalf("binary %v, want %v", got, tc.binary)
			}
			got, err := decodeCommand(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.cmd) {
				t.Fatalf("decoded %+v\nwant    %+v", got, tc.cmd)
			}
		})
	}
}
