package persistence

import (
	"errors"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// A key stored before keys had limits (its record has no "limits" member) decodes as a key
// without limits, through GetKey and the request path's LookupKey alike; a quota record
// without key spend decodes with none.
func TestOldStoredKeysDecodeAsUnlimited(t *testing.T) {
	s, _ := openStore(t)
	acct := newAccount(t, s)
	k, secret := must2(t, s, acct.ID, KeySpec{Name: "old"})
	old := struct { // Key as it was stored before keys had limits
		ID        string   `msgpack:"id"`
		AccountID string   `msgpack:"account_id"`
		Name      string   `msgpack:"name"`
		Models    []string `msgpack:"models"`
		ZDR       bool     `msgpack:"zdr"`
		Hint      string   `msgpack:"hint"`
		CreatedAt int64    `msgpack:"created_at"`
		RevokedAt int64    `msgpack:"revoked_at"`
	}{k.ID, k.AccountID, k.Name, k.Models, k.ZDR, k.Hint, k.CreatedAt, 0}
	raw, err := msgpack.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Set(dbKey(nsKey, k.ID), raw, nil); err != nil {
		t.Fatal(err)
	}
	for name, get := range map[string]func() (Key, error){
		"GetKey": func() (Key, error) { return s.GetKey(k.ID) }, "LookupKey": func() (Key, error) { return s.LookupKey(secret) },
	} {
		got, err := get()
		if err != nil || got.ID != k.ID || !got.Limits.IsZero() {
			t.Fatalf("%s = %+v, %v; want the key without limits", name, got, err)
		}
	}
	var rec QuotaRecord
	oldRec, _ := msgpack.Marshal(map[string]int64{"bal": 5})
	if err := msgpack.Unmarshal(oldRec, &rec); err != nil || rec.Balance != 5 || rec.KeySpend != nil {
		t.Fatalf("old quota record = %+v, %v", rec, err)
	}
}

// Limits are validated where they are written: bad ones are refused naming the field and
// nothing is written; good ones round-trip through the store and UpdateKey replaces them.
func TestKeyLimitsValidationAndUpdate(t *testing.T) {
	s, _ := openStore(t)
	acct := newAccount(t, s)
	now := time.Now().Unix()
	for _, c := range []struct {
		name  string
		l     KeyLimits
		field string
	}{
		{"negative budget", KeyLimits{Budget: -1, Period: BudgetDay}, "limits.budget.amount_usd"},
		{"budget over $1,000,000", KeyLimits{Budget: MaxKeyBudget + 1, Period: BudgetDay}, "limits.budget.amount_usd"},
		{"budget without period", KeyLimits{Budget: 1}, "limits.budget.period"},
		{"period without budget", KeyLimits{Period: BudgetDay}, "limits.budget.amount_usd"},
		{"rpm over 100000", KeyLimits{RPM: MaxKeyRPM + 1}, "limits.rpm"},
		{"negative rpm", KeyLimits{RPM: -5}, "limits.rpm"},
		{"expiry now", KeyLimits{ExpiresAt: now}, "limits.expires_at"},
		{"expiry in the past", KeyLimits{ExpiresAt: now - 3600}, "limits.expires_at"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := s.CreateKey(acct.ID, KeySpec{Name: "k", Limits: c.l})
			var e *Error
			if !errors.As(err, &e) || e.Kind != ErrInvalid || e.Field != c.field {
				t.Fatalf("create: %v, want invalid %s", err, c.field)
			}
		})
	}
	if keys := must(s.ListKeys(acct.ID))(t); len(keys) != 0 {
		t.Fatalf("refused creations wrote %d keys", len(keys))
	}
	l := KeyLimits{Budget: MaxKeyBudget, Period: BudgetMonth, ExpiresAt: now + 60, RPM: MaxKeyRPM}
	k, secret := must2(t, s, acct.ID, KeySpec{Name: "k", Limits: l})
	if got := must(s.LookupKey(secret))(t); got.Limits != l {
		t.Fatalf("stored limits %+v, want %+v", got.Limits, l)
	}
	if _, err := s.UpdateKey(k.ID, KeyUpdate{Limits: &KeyLimits{ExpiresAt: now - 1}}); err == nil {
		t.Fatal("an expiry in the past was accepted by UpdateKey")
	}
	name := "renamed"
	got, err := s.UpdateKey(k.ID, KeyUpdate{Name: &name, Limits: &KeyLimits{RPM: 1}})
	if err != nil || got.Name != name || got.Limits != (KeyLimits{RPM: 1}) || got.Hint != k.Hint || got.CreatedAt != k.CreatedAt {
		t.Fatalf("update = %+v, %v", got, err)
	}
	if got := must(s.LookupKey(secret))(t); got.Name != name || got.Limits.RPM != 1 {
		t.Fatalf("after update, lookup = %+v", got)
	}
}
