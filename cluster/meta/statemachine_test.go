package meta

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// sampleLog is a log of every kind of command, refusals and a retry included, made by the
// proposer halves over an empty store (so every pre-check passes and the apply half decides),
// with what each entry must give.
type sampleLog struct {
	cmds    [][]byte
	want    []string
	ada     persistence.NewAccount
	k1      persistence.NewKey
	secret1 string
}

const importSecret = "sk-user-RRUD8V0Uq10Sl7lPnoEch9eC79Hzf8fa" // strong enough to import

func newSampleLog(t *testing.T) sampleLog {
	p, _ := openStore(t)
	ada := must(p.PrepareAccount("ada@example.com", "free"))(t)
	ada2 := must(p.PrepareAccount("ADA@example.com", "pro"))(t)
	bob := must(p.PrepareAccount("bob@example.com", "free"))(t)
	k1, secret1, err := p.PrepareKey(ada.Account.ID, persistence.KeySpec{Name: "k1", Models: []string{"chat"}})
	if err != nil {
		t.Fatal(err)
	}
	imp := must(p.PrepareImport(ada.Account.ID, persistence.KeySpec{Name: "old"}, importSecret))(t)
	dup := must(p.PrepareImport(bob.Account.ID, persistence.KeySpec{Name: "dup"}, importSecret))(t)
	orphan, _, err := p.PrepareKey("acct_missing", persistence.KeySpec{Name: "orphan"})
	if err != nil {
		t.Fatal(err)
	}
	plan := must(p.PreparePlan(ada.Account.ID, "pro"))(t)
	rev := p.PrepareRevoke(k1.Key.ID)
	missing := p.PrepareRevoke("key_missing")
	createK1 := Command{ID: "cmd-k1", Kind: KindCreateKey, Key: &k1}

	l := sampleLog{ada: ada, k1: k1, secret1: secret1}
	add := func(cmd []byte, want string) {
		l.cmds = append(l.cmds, cmd)
		l.want = append(l.want, want)
	}
	add(enc(t, Command{ID: "c1", Kind: KindCreateAccount, Account: &ada}), "account ada@example.com free")
	add(enc(t, Command{ID: "c2", Kind: KindCreateAccount, Account: &ada2}),
		"refused email_taken : the e-mail ADA@example.com is taken: account "+ada.Account.ID+" has it (e-mails are compared ignoring case)")
	add(enc(t, Command{ID: "c3", Kind: KindCreateAccount, Account: &bob}), "account bob@example.com free")
	add(enc(t, createK1), "key k1 of "+ada.Account.ID+" active")
	add(enc(t, Command{ID: "c5", Kind: KindImportKey, Key: &imp}), "key old of "+ada.Account.ID+" active")
	add(enc(t, Command{ID: "c6", Kind: KindImportKey, Key: &dup}), "refused conflict import_key: secret is already registered")
	add(enc(t, Command{ID: "c7", Kind: KindSetPlan, Plan: &plan}), "account ada@example.com pro")
	add(enc(t, createK1), "retry of entry 4")
	add(enc(t, Command{ID: "c9", Kind: KindRevokeKey, Revoke: &rev}), "key k1 of "+ada.Account.ID+" revoked")
	add(enc(t, Command{ID: "c10", Kind: KindRevokeKey, Revoke: &missing}), `refused not_found : no key "key_missing"`)
	add(enc(t, Command{ID: "c11", Kind: KindCreateKey, Key: &orphan}), `refused not_found : no account "acct_missing"`)
	add([]byte{0xc1}, "refused invalid command: entry 12 is not a metadata command")
	add(enc(t, Command{ID: "c13", Kind: "drop_all"}), `refused invalid command: command of kind "drop_all" without its payload, or of a kind this shard does not apply`)
	add(enc(t, Command{ID: "c14", Kind: KindRevokeKey, Revoke: &rev}), "key k1 of "+ada.Account.ID+" revoked")
	// The Stripe writes: a payment recorded once, a subscription event applied once, and
	// another decided on the same record refused.
	pay := persistence.Payment{StripeID: "cs_1", EventID: "evt_1", Kind: persistence.PaymentCredits, Account: ada.Account.ID, Amount: 10, Cents: 1000, PaymentIntent: "pi_1", At: 1}
	add(enc(t, Command{ID: "c15", Kind: KindRecordPayment, Payment: &pay}), "recorded")
	add(enc(t, Command{ID: "c16", Kind: KindRecordPayment, Payment: &pay}), "empty")
	sub := func(evt string, at int64) *persistence.SubscriptionChange {
		return &persistence.SubscriptionChange{Sub: persistence.Subscription{Account: ada.Account.ID, ID: "sub_1", Customer: "cus_1", Plan: "team",
			Price: "price_team", Status: "active", PeriodEnd: 100, PaidThrough: 100, EventAt: at, Rev: 1},
			Plan: "pro", NextPlan: "team", NextPlanAt: 100,
			Record: persistence.Payment{StripeID: evt, EventID: evt, Kind: persistence.PaymentPlan, Account: ada.Account.ID, At: at}}
	}
	add(enc(t, Command{ID: "c17", Kind: KindSubscription, Subscription: sub("evt_2", 20)}), "account ada@example.com pro, then team at 100")
	add(enc(t, Command{ID: "c18", Kind: KindSubscription, Subscription: sub("evt_3", 10)}), "refused conflict rev: the subscription changed meanwhile (revision 1, not 0)")
	return l
}

// describe is a Result in the words sampleLog's wants use.
func describe(r Result) string {
	switch {
	case r.Refusal != nil:
		f := r.Refusal
		return fmt.Sprintf("refused %s %s: %s", f.Kind, f.Field, r.Refusal.Err())
	case r.Account != nil && r.Account.NextPlan != "":
		return fmt.Sprintf("account %s %s, then %s at %d", r.Account.Email, r.Account.Plan, r.Account.NextPlan, r.Account.NextPlanAt)
	case r.Account != nil:
		return "account " + r.Account.Email + " " + r.Account.Plan
	case r.Recorded:
		return "recorded"
	case r.Key != nil:
		state := "active"
		if r.Key.RevokedAt != 0 {
			state = "revoked"
		}
		return "key " + r.Key.Name + " of " + r.Key.AccountID + " " + state
	}
	return "empty"
}

// Two replicas applying one log, one in a single Update and the other an entry at a time,
// end with byte-identical stores and give byte-identical results, each the expected one.
func TestReplicasApplyingOneLogAgreeByteForByte(t *testing.T) {
	l := newSampleLog(t)
	a, storeA := newReplica(t)
	b, storeB := newReplica(t)
	all := update(t, a, entries(1, l.cmds...))
	var one []cluster.Entry
	for i, c := range l.cmds {
		one = append(one, update(t, b, entries(uint64(i+1), c))...)
	}
	for i := range all {
		if !bytes.Equal(all[i].Result, one[i].Result) {
			t.Errorf("entry %d: results differ:\n%x\n%x", i+1, all[i].Result, one[i].Result)
		}
		r := result(t, all[i])
		want := l.want[i]
		if strings.HasPrefix(want, "retry of entry ") {
			if !bytes.Equal(all[i].Result, all[3].Result) || r.Index != 4 {
				t.Errorf("entry %d: the retry gave %s at %d, not entry 4's result", i+1, describe(r), r.Index)
			}
			continue
		}
		if got := describe(r); got != want || r.Index != all[i].Index {
			t.Errorf("entry %d = %q at %d, want %q", i+1, got, r.Index, want)
		}
	}
	if got, want := scan(t, storeB), scan(t, storeA); !reflect.DeepEqual(got, want) {
		t.Fatalf("stores differ:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if a.Applied() != uint64(len(l.cmds)) || b.Applied() != a.Applied() {
		t.Errorf("applied %d and %d, want %d", a.Applied(), b.Applied(), len(l.cmds))
	}
	// What was applied is what the single node's reads see.
	k, err := storeA.LookupKey(l.secret1)
	if err != nil || k.ID != l.k1.Key.ID || k.RevokedAt == 0 {
		t.Errorf("lookup of k1 = %+v, %v; want it revoked", k, err)
	}
	if keys := must(storeA.ListKeys(l.ada.Account.ID))(t); len(keys) != 2 {
		t.Errorf("ada has %d keys, want 2 (the retry applied once)", len(keys))
	}
}

// The unique e-mail race: two creates of one address in one log. The second gets the very
// error value the single node gives (the admin API's 409 email_taken), on every replica.
func TestTheSecondCreateOfAnEmailInALogIsRefused(t *testing.T) {
	l := newSampleLog(t)
	sm, _ := newReplica(t)
	es := update(t, sm, entries(1, l.cmds[:2]...))
	err := result(t, es[1]).Refusal.Err()
	var taken *persistence.EmailTakenError
	if !errors.As(err, &taken) || !errors.Is(err, persistence.ErrConflict) ||
		*taken != (persistence.EmailTakenError{Email: "ADA@example.com", AccountID: l.ada.Account.ID}) {
		t.Fatalf("second create: %#v", err)
	}
}

// A retried command applies once however it is retried, and the memory of ids is bounded:
// only the last window entries' ids are kept.
func TestARetriedCommandAppliesOnceAndIdsAreForgottenInOrder(t *testing.T) {
	l := newSampleLog(t)
	sm, store := newReplica(t)
	sm.window = 3
	var hooked []string
	sm.OnApplied(func(index uint64, cmd Command) { hooked = append(hooked, fmt.Sprintf("%d:%s", index, cmd.ID)) })
	update(t, sm, entries(1, l.cmds[0], l.cmds[3], l.cmds[3])) // the key command and its retry in one batch
	again := update(t, sm, entries(4, l.cmds[3]))              // and a retry in a later batch
	if r := result(t, again[0]); r.Index != 2 || r.Key == nil || r.Key.ID != l.k1.Key.ID {
		t.Fatalf("retry = %+v, want entry 2's key", r)
	}
	if keys := must(store.ListKeys(l.ada.Account.ID))(t); len(keys) != 1 {
		t.Fatalf("%d keys after three proposals of one command", len(keys))
	}
	if want := []string{"1:c1", "2:cmd-k1"}; !slices.Equal(hooked, want) {
		t.Errorf("OnApplied saw %v, want %v", hooked, want)
	}
	remembered := func() []string {
		var ids []string
		for _, kv := range scan(t, store) {
			if id, ok := strings.CutPrefix(kv, `"metashard/cmd/`); ok {
				ids = append(ids, id[:strings.IndexByte(id, '"')])
			}
		}
		return ids
	}
	if got := remembered(); !slices.Equal(got, []string{"c1", "cmd-k1"}) {
		t.Fatalf("remembered %v", got)
	}
	// A retry changes nothing, not even the memory; entry 5 forgets entries 1 and 2 (3 or
	// more back), entry 6 forgets entry 3 (a retry, never remembered).
	update(t, sm, entries(5, l.cmds[2]))
	if got := remembered(); !slices.Equal(got, []string{"c3"}) {
		t.Fatalf("after entry 5: remembered %v, want c3", got)
	}
	update(t, sm, entries(6, l.cmds[4]))
	if got := remembered(); !slices.Equal(got, []string{"c3", "c5"}) {
		t.Fatalf("after entry 6: remembered %v, want c3 and c5", got)
	}
	// Beyond the window a creation is still refused (its secret's hash and id are taken), so
	// it cannot apply twice.
	late := update(t, sm, entries(7, l.cmds[3]))
	if got, want := describe(result(t, late[0])), "refused conflict import_key: secret is already registered"; got != want {
		t.Errorf("a retry beyond the window = %q, want %q", got, want)
	}
}

// A restart: Open returns the applied index, and entries at or below it offered again (the
// engine replays from its log) are skipped, so nothing applies twice.
func TestRestartReplaysOnlyEntriesAfterTheAppliedIndex(t *testing.T) {
	l := newSampleLog(t)
	s, dir := openStore(t)
	sm := NewStateMachine(s)
	update(t, sm, entries(1, l.cmds[:5]...))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := persistence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	sm2 := NewStateMachine(s2)
	if applied := must(sm2.Open())(t); applied != 5 {
		t.Fatalf("Open after a restart = %d, want 5", applied)
	}
	var hooked []uint64
	sm2.OnApplied(func(index uint64, _ Command) { hooked = append(hooked, index) })
	replay := update(t, sm2, entries(1, l.cmds[:7]...))
	for i, e := range replay[:5] {
		if e.Result != nil {
			t.Errorf("entry %d was applied again", i+1)
		}
	}
	if got := describe(result(t, replay[6])); got != l.want[6] {
		t.Errorf("entry 7 = %q, want %q", got, l.want[6])
	}
	if !slices.Equal(hooked, []uint64{7}) { // entry 6 was refused
		t.Errorf("OnApplied saw %v, want [7]", hooked)
	}
	once, onceStore := newReplica(t)
	update(t, once, entries(1, l.cmds[:7]...))
	if got, want := scan(t, s2), scan(t, onceStore); !reflect.DeepEqual(got, want) {
		t.Fatalf("a restarted replica differs from one that applied each entry once:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Lookup answers reads of the applied state: an account, a key by id or by its secret's
// hash, or the not-found refusal; a sync query, the applied index alone.
func TestLookupAnswersFromTheAppliedState(t *testing.T) {
	l := newSampleLog(t)
	sm, _ := newReplica(t)
	update(t, sm, entries(1, l.cmds[:4]...))
	hash := l.k1.SecretHash
	for _, tc := range []struct {
		q    Query
		want string
	}{
		{Query{AccountID: l.ada.Account.ID}, "account ada@example.com free"},
		{Query{KeyID: l.k1.Key.ID}, "key k1 of " + l.ada.Account.ID + " active"},
		{Query{SecretHash: hash}, "key k1 of " + l.ada.Account.ID + " active"},
		{Query{SecretHash: strings.Repeat("0", 64)}, "refused not_found : no key matches the given secret"},
		{Query{AccountID: "acct_nope"}, `refused not_found : no account "acct_nope"`},
		{Query{Sync: true}, "empty"}, // the index alone: a barrier for reads of the replica
	} {
		out, err := sm.Lookup(must(tc.q.Encode())(t))
		if err != nil {
			t.Fatalf("%+v: %v", tc.q, err)
		}
		r := must(DecodeResult(out))(t)
		if got := describe(r); got != tc.want || r.Index != 4 {
			t.Errorf("%+v = %q at %d, want %q at 4", tc.q, got, r.Index, tc.want)
		}
	}
	for _, q := range []Query{{AccountID: "a", KeyID: "k"}, {Sync: true, AccountID: "a"}} {
		if _, err := sm.Lookup(must(q.Encode())(t)); err == nil || !strings.Contains(err.Error(), "exactly one") {
			t.Errorf("a query of two fields %+v: %v", q, err)
		}
	}
}
