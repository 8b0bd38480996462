package meta

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/admin"
)

var _ admin.Store = withoutLog{}

// withoutLog is the metadata store as admin reads it: the request log is the account
// shards', which a node adds (transport/node), so there is none here.
type withoutLog struct{ *Store }

func (withoutLog) QueryLog(persistence.LogQuery) (persistence.LogPage, error) {
	return persistence.LogPage{}, errors.New("the request log is in the account shards")
}

// testLog is a test double of the engine only: one log, applied synchronously and in order
// to every node's real state machine over its real store. A held node gets entries only
// when it proposes (a node lagging behind the log).
type testLog struct {
	mu        sync.Mutex
	index     uint64
	nodes     []*testNode
	down      bool // proposals fail before reaching the log (no leader)
	readIndex bool // Read first applies what the node has not (a ReadIndex), and fails while down
	lostAcks  int  // this many next proposals apply, then report an error (outcome unknown)
	proposals int
	sent      [][]byte // every command that reached the log, in order
}

type testNode struct {
	log   *testLog
	self  int
	sm    *StateMachine
	local *persistence.Store
	store *Store
	held  bool
	queue []cluster.Entry
}

func newTestLog(t *testing.T, n int) *testLog {
	l := &testLog{}
	for i := range n {
		sm, local := newReplica(t)
		node := &testNode{log: l, self: i, sm: sm, local: local}
		node.store = NewStore(local, sm, node, 1)
		l.nodes = append(l.nodes, node)
	}
	return l
}

func (n *testNode) Propose(ctx context.Context, shard uint64, cmd []byte) ([]byte, error) {
	l := n.log
	l.mu.Lock()
	defer l.mu.Unlock()
	l.proposals++
	if l.down {
		return nil, errors.New("no leader")
	}
	l.index++
	l.sent = append(l.sent, cmd)
	var out []byte
	for _, node := range l.nodes {
		node.queue = append(node.queue, cluster.Entry{Index: l.index, Cmd: cmd})
		if node.held && node != n {
			continue
		}
		es := node.queue
		node.queue = nil
		if err := node.sm.Update(es); err != nil {
			return nil, err
		}
		if node == n {
			out = es[len(es)-1].Result
		}
	}
	if l.lostAcks > 0 {
		l.lostAcks--
		return nil, context.DeadlineExceeded
	}
	return out, nil
}

func (n *testNode) Read(_ context.Context, _ uint64, query []byte) ([]byte, error) {
	if l := n.log; l.readIndex {
		l.mu.Lock()
		if l.down {
			l.mu.Unlock()
			return nil, errors.New("no leader")
		}
		es := n.queue
		n.queue = nil
		err := n.sm.Update(es)
		l.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return n.sm.Lookup(query)
}
func (n *testNode) Leader(uint64) (uint64, bool)              { return 1, true }
func (n *testNode) OnLeaderChange(func(shard, leader uint64)) {}

const testCatalog = `
models:
  - id: chat
    kind: chat
    routes: [{id: a, format: chat, base_url: "http://127.0.0.1:1/v1"}]
`

// adminOver serves the real admin API over store on a loopback socket.
func adminOver(t *testing.T, store *Store) func(method, path, body string) (int, map[string]any) {
	cat, err := catalog.Parse("test.yaml", []byte(testCatalog))
	if err != nil {
		t.Fatal(err)
	}
	r := mux.NewRouter()
	admin.New(admin.Deps{Store: withoutLog{store}, TokenHash: sha256.Sum256([]byte("tok")), Catalog: catalog.NewHolder(cat)}).Register(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: %s", method, path, raw)
		}
		return resp.StatusCode, out
	}
}

func errCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// The admin API over meta.Store on one node of a two-node shard: the same behaviours as
// over the single node's store, and every write is on the other node too.
func TestStoreServesTheAdminAPIThroughTheShard(t *testing.T) {
	l := newTestLog(t, 2)
	a, b := l.nodes[0], l.nodes[1]
	var revoked []string
	b.sm.OnApplied(func(_ uint64, cmd Command) {
		if cmd.Kind == KindRevokeKey {
			revoked = append(revoked, cmd.Revoke.KeyID)
		}
	})
	call := adminOver(t, a.store)

	status, acct := call("POST", "/admin/v1/accounts", `{"email":"ada@example.com"}`)
	if status != 201 || acct["plan"] != "free" {
		t.Fatalf("create account: %d %v", status, acct)
	}
	id := acct["id"].(string)
	if got, err := b.local.GetAccount(id); err != nil || got.Email != "ada@example.com" {
		t.Fatalf("the other node has %+v, %v", got, err)
	}
	status, out := call("POST", "/admin/v1/accounts", `{"email":"ADA@example.com"}`)
	if status != 409 || errCode(out) != "email_taken" {
		t.Fatalf("duplicate e-mail: %d %v", status, out)
	}
	status, out = call("PUT", "/admin/v1/accounts/"+id+"/plan", `{"plan":"pro"}`)
	if status != 200 || out["plan"] != "pro" {
		t.Fatalf("set plan: %d %v", status, out)
	}
	status, key := call("POST", "/admin/v1/accounts/"+id+"/keys", `{"name":"ci","models":["chat"]}`)
	if status != 201 {
		t.Fatalf("create key: %d %v", status, key)
	}
	secret, keyID := key["key"].(string), key["id"].(string)
	for i, n := range l.nodes {
		if k, err := n.store.LookupKey(secret); err != nil || k.ID != keyID || k.RevokedAt != 0 {
			t.Fatalf("node %d lookup = %+v, %v", i, k, err)
		}
	}
	status, out = call("POST", "/admin/v1/accounts/"+id+"/keys", `{"name":"old","import_key":"`+importSecret+`"}`)
	if status != 201 || out["hint"] != "sk-user-…f8fa" {
		t.Fatalf("import: %d %v", status, out)
	}
	status, out = call("POST", "/admin/v1/accounts/"+id+"/keys", `{"name":"again","import_key":"`+importSecret+`"}`)
	if status != 409 || errCode(out) != "conflict" {
		t.Fatalf("import of a registered secret: %d %v", status, out)
	}
	status, out = call("POST", "/admin/v1/accounts/acct_missing/keys", `{"name":"k"}`)
	if status != 404 || errCode(out) != "account_not_found" {
		t.Fatalf("key of a missing account: %d %v", status, out)
	}

	status, out = call("DELETE", "/admin/v1/keys/"+keyID, "")
	if status != 200 || out["revoked_at"] == nil {
		t.Fatalf("revoke: %d %v", status, out)
	}
	// The revoke returned, so this node refuses the key; the other one has applied it too.
	for i, n := range l.nodes {
		if k, err := n.store.LookupKey(secret); err != nil || k.RevokedAt == 0 {
			t.Fatalf("node %d after the revoke: %+v, %v", i, k, err)
		}
	}
	if len(revoked) != 1 || revoked[0] != keyID {
		t.Errorf("the other node's OnApplied saw revocations %v", revoked)
	}
	status, out = call("GET", "/admin/v1/accounts/"+id+"/keys", "")
	if data, _ := out["data"].([]any); status != 200 || len(data) != 2 {
		t.Fatalf("list keys: %d %v", status, out)
	}
}

// Two nodes create one e-mail at once: the lagging node's pre-check passes, the shard
// refuses its create with the single node's error, and both nodes hold one account.
func TestStoreEmailRaceAcrossNodes(t *testing.T) {
	l := newTestLog(t, 2)
	a, b := l.nodes[0], l.nodes[1]
	b.held = true
	first, err := a.store.CreateAccount("race@example.com", "free")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.local.GetAccount(first.ID); err == nil {
		t.Fatal("the held node already has the account; the race is not a race")
	}
	_, err = b.store.CreateAccount("RACE@example.com", "pro")
	var taken *persistence.EmailTakenError
	if !errors.As(err, &taken) || taken.AccountID != first.ID || taken.Email != "RACE@example.com" {
		t.Fatalf("second create: %#v", err)
	}
	for i, n := range l.nodes {
		if page, err := n.local.ListAccountsPage(persistence.AccountQuery{Email: "race@example.com", Limit: 10}); err != nil || len(page.Accounts) != 1 {
			t.Errorf("node %d: %+v, %v", i, page, err)
		}
	}
}

// A proposal whose answer is lost is retried with the same command: it applies once and the
// caller gets the first outcome. With no leader at all the write fails after Timeout.
func TestStoreRetriesAProposalWhoseAnswerWasLost(t *testing.T) {
	l := newTestLog(t, 1)
	n := l.nodes[0]
	acct, err := n.store.CreateAccount("ops@example.com", "free")
	if err != nil {
		t.Fatal(err)
	}
	l.lostAcks = 2
	k, secret, err := n.store.CreateKey(acct.ID, persistence.KeySpec{Name: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	if l.proposals != 4 || l.index != 4 {
		t.Errorf("%d proposals at index %d, want 3 attempts of the key after the account", l.proposals, l.index)
	}
	if keys, _ := n.local.ListKeys(acct.ID); len(keys) != 1 || keys[0].ID != k.ID {
		t.Fatalf("keys after retries: %+v", keys)
	}
	if got, err := n.store.LookupKey(secret); err != nil || got.ID != k.ID {
		t.Fatalf("lookup: %+v, %v", got, err)
	}

	l.down = true
	n.store.Timeout, n.store.Attempt = 200*time.Millisecond, 50*time.Millisecond
	start := time.Now()
	_, err = n.store.RevokeKey(k.ID)
	if err == nil || !strings.Contains(err.Error(), "revoke_key not committed within 200ms: no leader") {
		t.Fatalf("revoke without a leader: %v", err)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > 2*time.Second {
		t.Errorf("gave up after %s, want about 200ms", d)
	}
}

// A login reads its record as it is now: an address verified (or a password changed) on
// another node counts on a node that has not applied it yet, and with no quorum the login
// is refused unread (ErrUnavailable) rather than judged on an old record.
func TestALoginReadsTheCurrentRecord(t *testing.T) {
	l := newTestLog(t, 2)
	l.readIndex = true
	a, b := l.nodes[0], l.nodes[1]
	b.held = true
	acct, tok, _, err := a.store.Signup("cy@example.com", "cy's long password", "free", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.UseToken(persistence.TokenVerify, tok, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if login, err := b.local.GetLogin(acct.ID); err == nil && login.Verified {
		t.Fatal("the held node has the verification already; the test shows nothing")
	}
	login, err := b.store.GetLogin(acct.ID)
	if err != nil || !login.Verified {
		t.Fatalf("login record on the lagging node: verified %v, %v; want the verification", login.Verified, err)
	}
	l.down = true
	if _, err := b.store.GetLogin(acct.ID); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("login record with no quorum: %v, want ErrUnavailable", err)
	}
}
