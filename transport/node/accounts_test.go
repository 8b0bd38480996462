package node_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// TestStartWarnsOfAccountsSharingAnEmail: a store written before e-mails were unique (account
// records only, two sharing an e-mail in different case) starts: every start names the
// sharers in a WARN line (never the e-mail), both stay listed and usable, and the e-mail is
// refused to a new account.
func TestStartWarnsOfAccountsSharingAnEmail(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{FormatMajorVersion: pebble.FormatNewest, Logger: quietPebble{t}})
	if err != nil {
		t.Fatal(err)
	}
	old := []persistence.Account{
		{ID: "acct_SSSSSSSSSSSSSSSSSSSS", Email: "shared@example.com", Plan: "demo", CreatedAt: 1700000000},
		{ID: "acct_TTTTTTTTTTTTTTTTTTTT", Email: "Shared@Example.com", Plan: "pro", CreatedAt: 1700000001},
		{ID: "acct_UUUUUUUUUUUUUUUUUUUU", Email: "alone@example.com", Plan: "free", CreatedAt: 1700000002},
	}
	for _, a := range old { // the layout the store wrote before its account indexes
		v, _ := msgpack.Marshal(a)
		if err := db.Set([]byte("acct/"+a.ID), v, pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	var logs nodetest.LogBuffer
	env := nodetest.Start(t, "", nodetest.Options{DataDir: dir, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	env.Restart()
	var warnings int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l struct {
			Level, Msg string
			Accounts   []string
		}
		json.Unmarshal([]byte(line), &l)
		if strings.HasPrefix(l.Msg, "accounts share an e-mail address") {
			warnings++
			if l.Level != "WARN" || !slices.Equal(l.Accounts, []string{old[0].ID, old[1].ID}) || strings.Contains(line, "xample.com") {
				t.Fatalf("warning %s", line)
			}
		}
	}
	if warnings != 2 {
		t.Fatalf("%d warnings in two starts:\n%s", warnings, logs.String())
	}

	resp := env.Admin(http.MethodGet, "/admin/v1/accounts?email=SHARED@example.com", "")
	var list struct {
		Data []persistence.Account `json:"data"`
	}
	json.Unmarshal(nodetest.Read(t, resp), &list)
	if resp.StatusCode != 200 || !slices.Equal(list.Data, old[:2]) {
		t.Fatalf("lookup: %d %+v", resp.StatusCode, list.Data)
	}
	env.Account = old[0]
	if r := env.Post("/v1/chat/completions", env.NewKey(persistence.KeySpec{Name: "k"}), chat("chat", "hi")); r.StatusCode != 200 {
		t.Fatalf("a sharer's key: %d %s", r.StatusCode, nodetest.Read(t, r))
	} else {
		nodetest.Read(t, r)
	}
	resp = env.Admin(http.MethodPost, "/admin/v1/accounts", `{"email":"shared@EXAMPLE.com"}`)
	if raw := nodetest.Read(t, resp); resp.StatusCode != 409 {
		t.Fatalf("new account with a shared e-mail: %d %s", resp.StatusCode, raw)
	}
}

// quietPebble keeps Pebble's notices out of the test output.
type quietPebble struct{ t *testing.T }

func (quietPebble) Infof(string, ...any)           {}
func (q quietPebble) Errorf(f string, args ...any) { q.t.Errorf("pebble: "+f, args...) }
func (q quietPebble) Fatalf(f string, args ...any) { q.t.Fatalf("pebble: "+f, args...) }
