package meta

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

// update_key: two replicas applying a log of key updates (accepted, refused by the apply
// half, of a missing and of a revoked key) end byte for byte equal with the same results,
// and a command survives its encoding unchanged.
func TestUpdateKeyAppliesTheSameOnEveryReplica(t *testing.T) {
	p, _ := openStore(t)
	ada := must(p.PrepareAccount("ada@example.com", "free"))(t)
	k1, _, err := p.PrepareKey(ada.Account.ID, persistence.KeySpec{Name: "k1", Limits: persistence.KeyLimits{RPM: 5}})
	if err != nil {
		t.Fatal(err)
	}
	name, models, zdr := "renamed", []string{"chat"}, true
	limits := persistence.KeyLimits{Budget: 12_500_000_000_000, Period: persistence.BudgetMonth, ExpiresAt: time.Now().Add(time.Hour).Unix(), RPM: 60}
	change := persistence.KeyChange{KeyID: k1.Key.ID, Update: persistence.KeyUpdate{Name: &name, Models: &models, ZDR: &zdr, Limits: &limits}}
	bad := persistence.KeyLimits{RPM: -1} // no proposer makes it: the apply half refuses it
	badChange := persistence.KeyChange{KeyID: k1.Key.ID, Update: persistence.KeyUpdate{Limits: &bad}}
	missing := persistence.KeyChange{KeyID: "key_missing", Update: persistence.KeyUpdate{Name: &name}}
	rev := p.PrepareRevoke(k1.Key.ID)
	cmds := []Command{
		{ID: "c1", Kind: KindCreateAccount, Account: &ada},
		{ID: "c2", Kind: KindCreateKey, Key: &k1},
		{ID: "c3", Kind: KindUpdateKey, Update: &change},
		{ID: "c4", Kind: KindUpdateKey, Update: &badChange},
		{ID: "c5", Kind: KindUpdateKey, Update: &missing},
		{ID: "c6", Kind: KindRevokeKey, Revoke: &rev},
		{ID: "c7", Kind: KindUpdateKey, Update: &change},
		{ID: "c8", Kind: KindUpdateKey},
	}
	want := []string{
		"account ada@example.com free",
		"key k1 of " + ada.Account.ID + " active",
		"key renamed of " + ada.Account.ID + " active",
		"refused invalid limits.rpm: limits.rpm must be 1-100000, not -1",
		`refused not_found : no key "key_missing"`,
		"key renamed of " + ada.Account.ID + " revoked",
		"refused conflict id: key " + k1.Key.ID + " is revoked; a revoked key cannot be changed",
		`refused invalid command: command of kind "update_key" without its payload, or of a kind this shard does not apply`,
	}
	var raw [][]byte
	for _, c := range cmds {
		b := enc(t, c)
		back, err := DecodeCommand(b)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("command %s round trip: %+v, %v", c.ID, back, err)
		}
		raw = append(raw, b)
	}
	a, storeA := newReplica(t)
	b, storeB := newReplica(t)
	all := update(t, a, entries(1, raw...))
	var one []cluster.Entry
	for i, c := range raw {
		one = append(one, update(t, b, entries(uint64(i+1), c))...)
	}
	for i := range all {
		if !bytes.Equal(all[i].Result, one[i].Result) {
			t.Errorf("entry %d: results differ", i+1)
		}
		if got := describe(result(t, all[i])); got != want[i] {
			t.Errorf("entry %d = %q, want %q", i+1, got, want[i])
		}
	}
	if got, want := scan(t, storeB), scan(t, storeA); !reflect.DeepEqual(got, want) {
		t.Fatalf("stores differ:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	k := must(storeA.GetKey(k1.Key.ID))(t)
	if k.Name != name || !reflect.DeepEqual(k.Models, models) || !k.ZDR || k.Limits != limits {
		t.Fatalf("the updated key is %+v", k)
	}
}

// PATCH /admin/v1/keys/{id} over meta.Store: the change is on every node when it returns,
// and bad input is refused with 400 naming the member (409 for a revoked key), changing
// nothing.
func TestPatchKeyThroughTheShard(t *testing.T) {
	l := newTestLog(t, 2)
	call := adminOver(t, l.nodes[0].store)
	_, acct := call("POST", "/admin/v1/accounts", `{"email":"ada@example.com"}`)
	id := acct["id"].(string)
	status, key := call("POST", "/admin/v1/accounts/"+id+"/keys", `{"name":"ci","limits":{"rpm":10}}`)
	if status != 201 {
		t.Fatalf("create key: %d %v", status, key)
	}
	keyID := key["id"].(string)
	expires := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	status, out := call("PATCH", "/admin/v1/keys/"+keyID,
		`{"name":"ci-2","zdr":true,"limits":{"budget":{"amount_usd":"12.50","period":"week"},"expires_at":"`+expires+`","rpm":60}}`)
	wantLimits := map[string]any{"budget": map[string]any{"amount_usd": "12.5", "period": "week"}, "expires_at": expires, "rpm": float64(60)}
	if status != 200 || out["name"] != "ci-2" || out["zdr"] != true || !reflect.DeepEqual(out["limits"], wantLimits) {
		t.Fatalf("patch: %d %v", status, out)
	}
	for i, n := range l.nodes {
		k := must(n.local.GetKey(keyID))(t)
		if k.Name != "ci-2" || k.Limits.RPM != 60 || k.Limits.Period != persistence.BudgetWeek {
			t.Fatalf("node %d has %+v", i, k)
		}
	}
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct {
		name, body, code, param string
	}{
		{"rpm 0", `{"limits":{"rpm":0}}`, "invalid_request", "limits.rpm"},
		{"rpm over 100000", `{"limits":{"rpm":100001}}`, "invalid_request", "limits.rpm"},
		{"budget of 0", `{"limits":{"budget":{"amount_usd":"0","period":"day"}}}`, "invalid_request", "limits.budget.amount_usd"},
		{"budget over $1,000,000", `{"limits":{"budget":{"amount_usd":"1000000.01","period":"day"}}}`, "invalid_request", "limits.budget.amount_usd"},
		{"budget as a number", `{"limits":{"budget":{"amount_usd":12,"period":"day"}}}`, "invalid_json", ""},
		{"negative budget", `{"limits":{"budget":{"amount_usd":"-1","period":"day"}}}`, "invalid_request", "limits.budget.amount_usd"},
		{"unknown period", `{"limits":{"budget":{"amount_usd":"1","period":"year"}}}`, "invalid_request", "limits.budget.period"},
		{"expiry in the past", `{"limits":{"expires_at":"` + past + `"}}`, "invalid_request", "limits.expires_at"},
		{"expiry not RFC 3339", `{"limits":{"expires_at":"tomorrow"}}`, "invalid_request", "limits.expires_at"},
		{"empty name", `{"name":" "}`, "invalid_request", "name"},
		{"unknown model", `{"models":["nope"]}`, "unknown_model", "models"},
		{"unknown member", `{"limit":{}}`, "invalid_json", ""},
		{"nothing to change", `{}`, "invalid_request", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, out := call("PATCH", "/admin/v1/keys/"+keyID, c.body)
			e, _ := out["error"].(map[string]any)
			if status != 400 || e["code"] != c.code || (e["param"] != nil && e["param"] != c.param) || (e["param"] == nil && c.param != "") {
				t.Fatalf("%d %v, want 400 %s naming %q", status, out, c.code, c.param)
			}
		})
	}
	if k := must(l.nodes[1].local.GetKey(keyID))(t); k.Name != "ci-2" || k.Limits.RPM != 60 {
		t.Fatalf("a refused patch changed the key: %+v", k)
	}
	if status, out := call("PATCH", "/admin/v1/keys/key_missing", `{"name":"x"}`); status != 404 || errCode(out) != "key_not_found" {
		t.Fatalf("missing key: %d %v", status, out)
	}
	call("DELETE", "/admin/v1/keys/"+keyID, "")
	if status, out := call("PATCH", "/admin/v1/keys/"+keyID, `{"name":"x"}`); status != 409 || errCode(out) != "conflict" {
		t.Fatalf("revoked key: %d %v", status, out)
	}
	// limits {} removes them all.
	_, k2 := call("POST", "/admin/v1/accounts/"+id+"/keys", `{"name":"k2","limits":{"rpm":3}}`)
	if status, out := call("PATCH", "/admin/v1/keys/"+k2["id"].(string), `{"limits":{}}`); status != 200 ||
		!reflect.DeepEqual(out["limits"], map[string]any{"budget": nil, "expires_at": nil, "rpm": nil}) {
		t.Fatalf("clearing limits: %d %v", status, out)
	}
}
