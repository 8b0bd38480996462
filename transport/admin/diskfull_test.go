package admin_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// While the data directory's disk is full, an admin change is a 503 cannot_record that changed
// nothing (not a 500 quoting the store), reads go on, a call refused meanwhile is in no usage,
// and the same change succeeds once space returns.
func TestAdminChangesOnAFullDisk(t *testing.T) {
	disk := nodetest.NewDisk(1 << 40)
	env := nodetest.Start(t, "", nodetest.Options{Store: persistence.Options{MinFreeBytes: 4 << 20, BallastBytes: -1,
		RecheckEvery: 10 * time.Millisecond, FreeSpace: disk.FreeSpace, MeasureEvery: -1}})
	acct := "/admin/v1/accounts/" + env.Account.ID
	changes := []struct{ name, path, body string }{
		{"create account", "/admin/v1/accounts", `{"email":"full@example.com","plan":"demo"}`},
		{"create key", acct + "/keys", `{"name":"k"}`},
		{"top-up", acct + "/credits", `{"amount_usd":"5","idempotency_key":"full-1"}`},
	}
	disk.Set(0)
	for _, c := range changes {
		resp := env.Admin(http.MethodPost, c.path, c.body)
		raw := nodetest.Read(t, resp)
		var e apiError
		Decode(t, raw, &e)
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "10" || e.Error.Code == nil || *e.Error.Code != "cannot_record" {
			t.Errorf("%s on a full disk: %d %s", c.name, resp.StatusCode, raw)
		}
	}
	// A call refused for the full disk cannot be recorded, so it is not (and never appears in
	// the usage later: an unrecorded call is never acknowledged); usage still reads.
	resp := env.Post("/v1/chat/completions", env.Key, `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`)
	if raw := nodetest.Read(t, resp); resp.StatusCode != 503 {
		t.Errorf("a call on a full disk: %d %s", resp.StatusCode, raw)
	}
	for _, read := range []string{acct, acct + "/usage", acct + "/quota", acct + "/keys"} {
		if status, raw := admin(t, env, http.MethodGet, read, ""); status != 200 {
			t.Errorf("GET %s on a full disk: %d %s", read, status, raw)
		}
	}
	disk.Set(1 << 40)
	deadline := time.Now().Add(5 * time.Second)
	for !env.Node.Store.Writable() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, c := range changes {
		if status, raw := admin(t, env, http.MethodPost, c.path, c.body); status != 200 && status != 201 {
			t.Errorf("%s after space returned: %d %s", c.name, status, raw)
		}
	}
	var usage struct {
		Data []map[string]any `json:"data"`
	}
	status, raw := admin(t, env, http.MethodGet, acct+"/usage", "")
	if Decode(t, raw, &usage); status != 200 || len(usage.Data) != 0 {
		t.Errorf("usage after space returned: %d %s, want no entry", status, raw)
	}
}
