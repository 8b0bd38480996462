package node_test

import (
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// server.log_retention_days on a running node: its background job deletes the entries older
// than the window and keeps the calls within it.
func TestTheNodeDeletesLogEntriesOlderThanItsRetention(t *testing.T) {
	cat := strings.Replace(nodetest.DefaultCatalog, "server: {", "server: {log_retention_days: 1, ", 1)
	env := nodetest.Start(t, cat, nodetest.Options{LogRetentionEvery: 20 * time.Millisecond})
	old := persistence.LogEntry{RequestID: "req_0123456789abcdef01234567", AccountID: env.Account.ID,
		Time: time.Now().Add(-49 * time.Hour).UnixNano(), Status: 200, Model: "chat"}
	if err := env.Node.Store.AppendLog([]persistence.LogEntry{old}); err != nil {
		t.Fatal(err)
	}
	nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`))
	env.WaitIdle()
	deadline := time.Now().Add(5 * time.Second)
	for {
		es, err := env.Node.Store.ListLog(env.Account.ID, time.Time{}, time.Time{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 1 && es[0].RequestID != old.RequestID && es[0].Status == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("log = %+v; want the old entry gone and the call kept", es)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
