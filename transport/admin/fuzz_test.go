package admin_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	adminapi "github.com/modelgate/modelgate/transport/admin"
)

// fuzzCatalog has a model with an alias and the default plans (free, pro, demo).
const fuzzCatalog = `
models:
  - id: chat
    kind: chat
    aliases: [chat-latest]
    routes: [{id: a, format: chat, base_url: "http://127.0.0.1:1/v1"}]
  - id: embed
    kind: embedding
    routes: [{id: e, format: chat, base_url: "http://127.0.0.1:1/v1"}]
`

// adminBody is one admin API call that takes a body, with the members it documents.
type adminBody struct {
	method, path string
	fields       []string
}

var adminBodies = []adminBody{
	{http.MethodPost, "/admin/v1/accounts", []string{"email", "plan"}},
	{http.MethodPost, "/admin/v1/accounts/{id}/keys", []string{"name", "models", "zdr", "import_key"}},
	{http.MethodPut, "/admin/v1/accounts/{id}/plan", []string{"plan"}},
	{http.MethodPost, "/admin/v1/accounts/{id}/credits", []string{"amount_usd", "idempotency_key"}},
}

// adminFuzz is the real admin API over a real store and quota service, without sockets.
type adminFuzz struct {
	handler http.Handler
	store   *persistence.Store
	cat     *catalog.Catalog
	account string
	grants  map[string]money.Amount // idempotency key -> amount added
	balance money.Amount
}

func newAdminFuzz(f *testing.F) *adminFuzz {
	store, err := persistence.Open(filepath.Join(f.TempDir(), "pebble"))
	if err != nil {
		f.Fatal(err)
	}
	cat, err := catalog.Parse("fuzz.yaml", []byte(fuzzCatalog))
	if err != nil {
		f.Fatal(err)
	}
	q := quota.NewService(store, quota.Config{})
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		q.Close(ctx)
		store.Close()
	})
	acct, err := store.CreateAccount("owner@example.com", "free")
	if err != nil {
		f.Fatal(err)
	}
	r := mux.NewRouter()
	adminapi.New(adminapi.Deps{Store: store, TokenHash: sha256.Sum256([]byte("fuzz-token")), Catalog: catalog.NewHolder(cat), Quota: q}).Register(r)
	return &adminFuzz{handler: r, store: store, cat: cat, account: acct.ID, grants: map[string]money.Amount{}}
}

// FuzzAdminBodies: any body of the admin calls that take one (create account, create key with
// restrictions, plan, credits), through the real handler, is a 2xx or a 4xx in the admin error
// envelope naming a documented member (or, for a body that is not one JSON object of them, the
// body); never a 5xx. What is accepted is stored exactly as sent and within the documented
// ranges, and credits add once per idempotency key.
func FuzzAdminBodies(f *testing.F) {
	a := newAdminFuzz(f)
	for i, bodies := range [][]string{
		{`{"email":"a@example.com"}`, `{"email":"b@example.com","plan":"pro"}`, `{"email":"x"}`, `{"email":"a@example.com","plan":"gold"}`},
		{`{"name":"ci","models":["chat","chat-latest"],"zdr":true}`, `{"name":"k","models":["gpt-x"]}`, `{"name":7}`,
			`{"name":"old","import_key":"sk-user-0123456789abcdefghij"}`, `{"name":"k","models":["chat","chat"]}`},
		{`{"plan":"pro"}`, `{"plan":"gold"}`, `{"plan":"free","extra":1}`},
		{`{"amount_usd":"25.00","idempotency_key":"t1"}`, `{"amount_usd":"25.00","idempotency_key":"t1"}`,
			`{"amount_usd":"5","idempotency_key":"t1"}`, `{"amount_usd":"-1","idempotency_key":"t2"}`, `{"amount_usd":"0.000000000001","idempotency_key":"t3"}`},
	} {
		for _, b := range bodies {
			f.Add(uint8(i), []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, call uint8, body []byte) {
		c := adminBodies[int(call)%len(adminBodies)]
		req := httptest.NewRequest(c.method, strings.Replace(c.path, "{id}", a.account, 1), bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer fuzz-token")
		w := httptest.NewRecorder()
		a.handler.ServeHTTP(w, req)
		status, answer := w.Code, w.Body.Bytes()
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%s %s: Content-Type %q", c.method, c.path, ct)
		}
		if status >= 400 {
			checkRefusal(t, c, status, answer)
			return
		}
		if status != http.StatusOK && status != http.StatusCreated {
			t.Fatalf("%s %s: status %d: %s", c.method, c.path, status, answer)
		}
		in := strictObject(t, body, c.fields)
		switch int(call) % len(adminBodies) {
		case 0:
			a.checkAccount(t, in, answer)
		case 1:
			a.checkKey(t, in, answer)
		case 2:
			a.checkPlan(t, in, answer)
		case 3:
			a.checkCredits(t, in, answer)
		}
	})
}

// checkRefusal: a 4xx whose envelope names a documented member, or the body itself.
func checkRefusal(t *testing.T, c adminBody, status int, answer []byte) {
	t.Helper()
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    string  `json:"code"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(answer))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || status >= 500 || e.Error.Message == "" || e.Error.Type != "invalid_request_error" || e.Error.Code == "" {
		t.Fatalf("%s %s: %d %s is not a 4xx in the admin error envelope (%v)", c.method, c.path, status, answer, err)
	}
	param := ""
	if e.Error.Param != nil {
		param = *e.Error.Param
	}
	bodyAtFault := e.Error.Code == "invalid_json" || e.Error.Code == "request_too_large"
	if !slices.Contains(c.fields, param) && !(param == "" && bodyAtFault) {
		t.Fatalf("%s %s: %s names %q, not one of %v", c.method, c.path, answer, param, c.fields)
	}
}

// strictObject is the reference reading of an accepted body: one JSON object of the
// documented members, each written once in its own spelling, nothing after it.
func strictObject(t *testing.T, body []byte, fields []string) map[string]json.RawMessage {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		t.Fatalf("accepted %q, which is not a JSON object", body)
	}
	in := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		name, _ := tok.(string)
		var v json.RawMessage
		if err != nil || dec.Decode(&v) != nil {
			t.Fatalf("accepted %q, which is not JSON", body)
		}
		if _, twice := in[name]; twice || !slices.Contains(fields, name) {
			t.Fatalf("accepted %q with member %q (twice: %v); documented: %v", body, name, twice, fields)
		}
		in[name] = v
	}
	if _, err := dec.Token(); err != nil {
		t.Fatalf("accepted %q, which is not JSON", body)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("accepted %q, which has more after its object", body)
	}
	return in
}

// str is a member's string value ("" when absent or null).
func str(in map[string]json.RawMessage, name string) string {
	var s string
	json.Unmarshal(in[name], &s)
	return s
}

func (a *adminFuzz) checkAccount(t *testing.T, in map[string]json.RawMessage, answer []byte) {
	var got persistence.Account
	if err := json.Unmarshal(answer, &got); err != nil {
		t.Fatal(err)
	}
	plan := str(in, "plan")
	if plan == "" {
		plan = adminapi.DefaultPlan
	}
	stored, err := a.store.GetAccount(got.ID)
	if _, known := a.cat.Plan(plan); err != nil || stored != got || got.Email != str(in, "email") || got.Plan != plan || !known ||
		!strings.HasPrefix(got.ID, "acct_") || strings.Count(got.Email, "@") != 1 || len(got.Email) > 254 {
		t.Fatalf("sent %v, answered %+v, stored %+v (%v)", in, got, stored, err)
	}
}

func (a *adminFuzz) checkKey(t *testing.T, in map[string]json.RawMessage, answer []byte) {
	var got struct {
		persistence.Key
		Secret string `json:"key"`
	}
	if err := json.Unmarshal(answer, &got); err != nil {
		t.Fatal(err)
	}
	var models []string
	var zdr bool
	json.Unmarshal(in["models"], &models)
	json.Unmarshal(in["zdr"], &zdr)
	stored, err := a.store.GetKey(got.ID)
	name, imported := str(in, "name"), str(in, "import_key")
	switch {
	case err != nil || !slices.Equal(stored.Models, got.Models) || stored.Name != got.Name || stored.ZDR != got.ZDR || stored.AccountID != a.account:
		t.Fatalf("answered %+v, stored %+v (%v)", got.Key, stored, err)
	case got.Name != name || got.ZDR != zdr || !slices.Equal(got.Models, models) || got.Models == nil:
		t.Fatalf("sent %v, stored name %q, models %q, zdr %v", in, got.Name, got.Models, got.ZDR)
	case strings.TrimSpace(name) == "" || utf8.RuneCountInString(name) > 100 || len(models) > 256:
		t.Fatalf("accepted a name of %d characters and %d models", utf8.RuneCountInString(name), len(models))
	case imported != "" && (got.Secret != "" || !strings.HasSuffix(got.Hint, imported[len(imported)-4:])):
		t.Fatalf("imported %q: answered secret %q, hint %q", imported, got.Secret, got.Hint)
	case imported == "" && !secretRe.MatchString(got.Secret):
		t.Fatalf("minted secret %q", got.Secret)
	}
	for _, m := range models {
		if _, ok := a.cat.Lookup(m); !ok {
			t.Fatalf("a key restricted to %q, which the catalog does not have", m)
		}
	}
}

func (a *adminFuzz) checkPlan(t *testing.T, in map[string]json.RawMessage, answer []byte) {
	var got persistence.Account
	if err := json.Unmarshal(answer, &got); err != nil {
		t.Fatal(err)
	}
	stored, err := a.store.GetAccount(a.account)
	if _, known := a.cat.Plan(got.Plan); err != nil || stored != got || got.Plan != str(in, "plan") || !known {
		t.Fatalf("sent %v, answered %+v, stored %+v (%v)", in, got, stored, err)
	}
}

func (a *adminFuzz) checkCredits(t *testing.T, in map[string]json.RawMessage, answer []byte) {
	var got struct {
		AccountID  string `json:"account_id"`
		BalanceUSD string `json:"balance_usd"`
		Added      bool   `json:"added"`
	}
	if err := json.Unmarshal(answer, &got); err != nil {
		t.Fatal(err)
	}
	amount, err := money.Parse(str(in, "amount_usd"))
	key := str(in, "idempotency_key")
	prev, seen := a.grants[key]
	switch {
	case err != nil || amount <= 0 || key == "":
		t.Fatalf("accepted amount %s (%v), idempotency key %q", in["amount_usd"], err, key)
	case seen && (prev != amount || got.Added):
		t.Fatalf("key %q added %s before; now %s: added %v", key, prev, amount, got.Added)
	case !seen && !got.Added:
		t.Fatalf("key %q is new but %s was not added", key, amount)
	}
	if !seen {
		a.grants[key] = amount
		a.balance += amount
	}
	if got.AccountID != a.account || got.BalanceUSD != a.balance.String() {
		t.Fatalf("balance %s for %s, want %s", got.BalanceUSD, got.AccountID, a.balance)
	}
}
