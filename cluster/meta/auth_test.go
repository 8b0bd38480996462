package meta

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// signInFlow drives every sign-in command kind through node's meta.Store, refusals
// included, and returns what each step gave, in words.
func signInFlow(t *testing.T, s *Store, keySecret func(acct string) string) []string {
	var got []string
	note := func(step string, err error) {
		t.Helper()
		msg := "ok"
		if err != nil {
			msg = err.Error()
		}
		got = append(got, step+": "+msg)
	}
	ada, tok1, reg, err := s.Signup("ada@example.com", "correct horse battery", "free", t0)
	if err != nil || reg != persistence.Unregistered {
		t.Fatalf("signup: %v %v", reg, err)
	}
	_, tok2, reg, err := s.Signup("ADA@example.com", "another good password", "free", t0.Add(time.Minute))
	if err != nil || reg != persistence.Unverified {
		t.Fatalf("second signup: %v %v", reg, err)
	}
	_, err = s.UseToken(persistence.TokenVerify, tok1, "", t0.Add(2*time.Minute))
	note("superseded link", err)
	_, err = s.UseToken(persistence.TokenVerify, tok2, "", t0.Add(2*time.Minute))
	note("verify", err)
	_, err = s.UseToken(persistence.TokenVerify, tok2, "", t0.Add(3*time.Minute))
	note("verify again", err)
	_, _, reg, err = s.Signup("ada@example.com", "a third password!", "free", t0.Add(4*time.Minute))
	note("signup of a verified e-mail is Registered="+map[bool]string{true: "yes", false: "no"}[reg == persistence.Registered], err)
	sid1, err := s.CreateSession(ada.ID, t0.Add(5*time.Minute))
	note("session 1", err)
	sid2, err := s.CreateSession(ada.ID, t0.Add(6*time.Minute))
	note("session 2", err)
	note("touch", s.TouchSession(persistence.SessionHash(sid1), t0.Add(2*time.Hour)))
	note("change password", s.ChangePassword(ada.ID, ada.Email, "a brand new password", persistence.SessionHash(sid2)))
	_, _, err = s.GetSession(persistence.SessionHash(sid1), t0.Add(3*time.Hour))
	note("session 1 after the change", err)
	rtok, err := s.IssueReset(ada.ID, t0.Add(3*time.Hour))
	note("reset issued", err)
	_, err = s.UseToken(persistence.TokenReset, rtok, "reset password 123", t0.Add(4*time.Hour+time.Second))
	note("late reset", err)
	_, err = s.UseToken(persistence.TokenReset, rtok, "reset password 123", t0.Add(3*time.Hour+time.Minute))
	note("reset", err)
	_, _, err = s.GetSession(persistence.SessionHash(sid2), t0.Add(3*time.Hour+2*time.Minute))
	note("session 2 after the reset", err)
	secret := keySecret(ada.ID)
	_, err = s.SetAccountDisabled(ada.ID, true)
	note("disable", err)
	_, err = s.CreateSession(ada.ID, t0.Add(5*time.Hour))
	note("login while disabled", err)
	_, err = s.local.LookupKey(secret)
	note("key while disabled", err)
	_, err = s.SetAccountDisabled(ada.ID, false)
	note("enable", err)
	_, err = s.local.LookupKey(secret)
	note("key after enable", err)
	sid3, err := s.CreateSession(ada.ID, t0.Add(6*time.Hour))
	note("session 3", err)
	note("logout", s.EndSessions(persistence.SessionEnd{AccountID: ada.ID, Hash: persistence.SessionHash(sid3)}))
	_, _, err = s.GetSession(persistence.SessionHash(sid3), t0.Add(6*time.Hour))
	note("session 3 after logout", err)
	return got
}

// Every sign-in command kind, refusals included, applies byte-identically on replicas that
// take the log in one Update or an entry at a time, and as on the proposing node.
func TestSignInCommandsReplicateByteForByte(t *testing.T) {
	l := newTestLog(t, 1)
	node := l.nodes[0]
	got := signInFlow(t, node.store, func(acct string) string {
		_, secret, err := node.store.CreateKey(acct, persistence.KeySpec{Name: "k"})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	})
	want := []string{
		"superseded link: the link has been used already (or a newer one was sent); ask for a new one if you still need it",
		"verify: ok",
		"verify again: the link has been used already (or a newer one was sent); ask for a new one if you still need it",
		"signup of a verified e-mail is Registered=yes: ok",
		"session 1: ok", "session 2: ok", "touch: ok", "change password: ok",
		`session 1 after the change: the session has ended (logged out, expired, or ended by a password change or reset)`,
		"reset issued: ok",
		"late reset: the link has expired; ask for a new one",
		"reset: ok",
		`session 2 after the reset: the session has ended (logged out, expired, or ended by a password change or reset)`,
		"disable: ok",
		"login while disabled: the account " + must(node.local.ListAccounts())(t)[0].ID + " is disabled by the operator",
		"key while disabled: the account " + must(node.local.ListAccounts())(t)[0].ID + " is disabled by the operator",
		"enable: ok", "key after enable: ok", "session 3: ok", "logout: ok",
		`session 3 after logout: the session has ended (logged out, expired, or ended by a password change or reset)`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("flow:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	kinds := map[Kind]int{}
	for _, raw := range l.sent {
		kinds[must(DecodeCommand(raw))(t).Kind]++
	}
	for _, k := range authKinds {
		if kinds[k] == 0 {
			t.Errorf("the flow proposed no %s command", k)
		}
	}

	a, storeA := newReplica(t)
	b, storeB := newReplica(t)
	all := update(t, a, entries(1, l.sent...))
	for i, c := range l.sent {
		one := update(t, b, entries(uint64(i+1), c))
		if !bytes.Equal(all[i].Result, one[0].Result) {
			t.Errorf("entry %d: results differ:\n%x\n%x", i+1, all[i].Result, one[0].Result)
		}
	}
	want2 := scan(t, node.local)
	for name, s := range map[string]*persistence.Store{"one update": storeA, "entry by entry": storeB} {
		if got := scan(t, s); !reflect.DeepEqual(got, want2) {
			t.Errorf("%s differs from the proposer's replica:\n%s\n%s", name, strings.Join(got, "\n"), strings.Join(want2, "\n"))
		}
	}
	// A snapshot carries the sign-in state: the scan above covers its namespaces.
	if !strings.Contains(strings.Join(want2, "\n"), `"login/`) || !strings.Contains(strings.Join(want2, "\n"), `"authtoken/`) {
		t.Errorf("the metadata key space lacks the sign-in state:\n%s", strings.Join(want2, "\n"))
	}
}

// A token used through one node's store is refused through another's: the use is a
// replicated command, not a local mark.
func TestATokenUsedOnOneNodeIsUsedOnEvery(t *testing.T) {
	l := newTestLog(t, 2)
	a, b := l.nodes[0].store, l.nodes[1].store
	_, tok, _, err := a.Signup("bob@example.com", "bob's long password", "free", t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.UseToken(persistence.TokenVerify, tok, "", t0.Add(time.Minute)); err != nil {
		t.Fatalf("verify through node 2: %v", err)
	}
	_, err = a.UseToken(persistence.TokenVerify, tok, "", t0.Add(2*time.Minute))
	if got := persistence.TokenProblem(err); got != persistence.TokenUsed {
		t.Fatalf("the same link through node 1: %v (%q), want used", err, got)
	}
	acct := must(a.AccountByEmail("bob@example.com"))(t)
	rtok, err := a.IssueReset(acct.ID, t0.Add(3*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.UseToken(persistence.TokenReset, rtok, "bob's new password", t0.Add(4*time.Minute)); err != nil {
		t.Fatal(err)
	}
	_, err = b.UseToken(persistence.TokenReset, rtok, "bob's other password", t0.Add(5*time.Minute))
	if got := persistence.TokenProblem(err); got != persistence.TokenUsed {
		t.Fatalf("the reset link through node 2: %v (%q), want used", err, got)
	}
	if l, err := b.GetLogin(acct.ID); err != nil || !persistence.VerifyPassword(l.PasswordHash, "bob's new password") {
		t.Fatalf("node 2's login: %+v %v", l, err)
	}
}

// The key check by hash (Lookup) refuses a disabled account's key with the refusal that
// gives back persistence.ErrDisabled, as the single node's LookupKey does.
func TestLookupRefusesTheKeyOfADisabledAccount(t *testing.T) {
	l := newTestLog(t, 1)
	s := l.nodes[0].store
	acct := must(s.CreateAccount("cy@example.com", "free"))(t)
	k, secret, err := s.CreateKey(acct.ID, persistence.KeySpec{Name: "k"})
	if err != nil {
		t.Fatal(err)
	}
	must(s.SetAccountDisabled(acct.ID, true))(t)
	q := must(Query{SecretHash: persistence.SessionHash(secret)}.Encode())(t)
	r := must(DecodeResult(must(l.nodes[0].sm.Lookup(q))(t)))(t)
	if r.Refusal == nil || !errors.Is(r.Refusal.Err(), persistence.ErrDisabled) {
		t.Fatalf("lookup of %s = %+v, want the disabled refusal", k.ID, r)
	}
}
