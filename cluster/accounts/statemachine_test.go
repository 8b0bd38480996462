package accounts

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

var t0 = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC).UnixNano()

// plan is a small plan with every limit the step has, so a random log reaches them all.
var plan = step.Plan{WindowRequests: 6, WeeklyRequests: 40, BurstRPM: 4, Overdraft: money.Amount(1000),
	ImageDailyLimit: 3, Throttle: step.Throttle{RPM: 2, Trigger: 5, Width: int64(time.Second), Duration: int64(time.Minute)}}

// randomLog is n proposals of up to 5 commands over three accounts: admits, settles of
// earlier and unknown reservations, records, top-ups and charges (some under reused keys),
// holds, media, expiries, nodes starting again; some commands are retries of earlier ones (same id, same bytes),
// and the proposer's clock jitters back and forth.
func randomLog(t *testing.T, seed uint64, n int) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	accts := []string{"acct-a", "acct-b", "acct-c"}
	var sent []Command
	now := t0
	var out [][]byte
	for range n {
		var cmds []Command
		for range 1 + rng.IntN(5) {
			if len(sent) > 0 && rng.IntN(6) == 0 {
				cmds = append(cmds, sent[rng.IntN(len(sent))]) // a retry
				continue
			}
			now += rng.Int64N(int64(20*time.Second)) - int64(4*time.Second)
			acct := accts[rng.IntN(len(accts))]
			c := Command{ID: NewCommandID(), Account: acct, Step: step.Command{Now: now, Plan: plan}}
			rid := fmt.Sprintf("r%d", len(sent))
			switch k := rng.IntN(11); k {
			case 0, 1, 2:
				c.Step.Kind, c.Step.Key, c.Step.Amount, c.Step.TTL = step.Admit, fmt.Sprintf("k%d", rng.IntN(2)), money.Amount(rng.Int64N(500)), int64(time.Minute)
				c.Step.Node, c.Step.Inc = uint64(rng.IntN(3)), uint64(1+rng.IntN(2)) // node 0: a single node's
			case 10: // a node starting again: its earlier incarnation's calls are released
				c = Command{ID: NewCommandID(), Node: &NodeAddr{ID: uint64(1 + rng.IntN(2)), Addr: "127.0.0.1:4001", Inc: uint64(1 + rng.IntN(2))}}
			case 3, 4:
				c.Step.Kind, c.Step.ID, c.Step.Counts, c.Step.Amount = step.Settle, uint64(rng.IntN(12)+1), rng.IntN(4) > 0, money.Amount(rng.Int64N(800))
				c.Step.Log = logEntry(acct, rid, now)
			case 5:
				c.Step.Kind, c.Step.Key, c.Step.Counts, c.Step.Log = step.Record, "k1", rng.IntN(2) == 0, logEntry(acct, rid, now)
			case 6:
				c.Step.Kind, c.Step.Key, c.Step.Amount = step.AddCredits, fmt.Sprintf("top%d", rng.IntN(4)), money.Amount(1000*(1+rng.Int64N(2)))
			case 7:
				c.Step.Kind, c.Step.Key, c.Step.Amount = step.Charge, fmt.Sprintf("charge/c%d", rng.IntN(4)), money.Amount(rng.Int64N(700))
				c.Step.Log = logEntry(acct, rid, now)
			case 8:
				c.Step.Kind, c.Step.Media, c.Step.N = step.MediaReserve, persistence.MediaImages, 1
			default:
				c.Step.Kind = step.Expire
			}
			sent = append(sent, c)
			cmds = append(cmds, c)
		}
		out = append(out, batch(t, cmds...))
	}
	return out
}

func TestReplicasFedTheSameLogInDifferentUpdatesAgreeByteForByte(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			log := randomLog(t, seed, 120)
			a, _ := newReplica(t, 7)
			b, _ := newReplica(t, 7)
			// c is never opened: no id filter, no account cache, every read from the store.
			sc, _ := openStore(t, "")
			c := NewStateMachine(sc, 7)
			a.window, b.window, c.window = 20, 20, 20 // retries both within and beyond the remembered window
			a.ids.per = 3                             // generations come and go within the window
			es := entries(1, log...)
			var resA, resB, resC [][]step.Result
			// a applies one entry per Update, b groups them by 1 to 9: the engine may do either.
			written := 0
			for i := range es {
				resA = append(resA, apply(t, a, slices.Clone(es[i:i+1]))...)
				resC = append(resC, apply(t, c, slices.Clone(es[i:i+1]))...)
				// What the leader reads between steps (appliedAccount, from the bytes the
				// last Update wrote) is what the store holds.
				for _, acct := range []string{"acct-a", "acct-b", "acct-c"} {
					if _, ok := a.written.get(acct); ok {
						written++
					}
					got, err := a.appliedAccount(acct)
					if err != nil {
						t.Fatal(err)
					}
					want, err := loadAccount(a.store.GetRaw, a.acctKey(acct))
					if err != nil {
						t.Fatal(err)
					}
					g, _ := got.Encode()
					w, _ := want.Encode()
					if !bytes.Equal(g, w) {
						t.Fatalf("after entry %d, %s as last written differs from the store", i, acct)
					}
				}
			}
			if written == 0 {
				t.Fatal("no account was read as last written")
			}
			if fmt.Sprint(resA) != fmt.Sprint(resC) {
				t.Fatalf("results with and without the id filter and account cache differ:\n%v\n%v", resA, resC)
			}
			if !bytes.Equal(snapshot(t, a), snapshot(t, c)) {
				t.Fatal("states with and without the id filter and account cache differ")
			}
			rng := rand.New(rand.NewPCG(seed, 2))
			for i := 0; i < len(es); {
				n := min(len(es)-i, 1+rng.IntN(9))
				resB = append(resB, apply(t, b, slices.Clone(es[i:i+n]))...)
				i += n
			}
			if fmt.Sprint(resA) != fmt.Sprint(resB) {
				t.Fatalf("results differ:\n%v\n%v", resA, resB)
			}
			snapA, snapB := snapshot(t, a), snapshot(t, b)
			if !bytes.Equal(snapA, snapB) {
				t.Fatalf("states differ: %d and %d bytes", len(snapA), len(snapB))
			}
			var admitted, logged int
			for _, rs := range resA {
				for _, r := range rs {
					if r.Admitted {
						admitted++
					}
				}
			}
			for _, acct := range []string{"acct-a", "acct-b", "acct-c"} {
				logged += len(logOf(t, a.store, acct))
			}
			if admitted == 0 || logged == 0 {
				t.Fatalf("a log that admitted %d and logged %d exercises too little", admitted, logged)
			}
		})
	}
}

func TestARetriedCommandAppliesOnceAndGetsItsFirstResult(t *testing.T) {
	sm, s := newReplica(t, 1)
	top := Command{ID: "top-1", Account: "acct", Step: step.Command{Kind: step.AddCredits, Now: t0, Key: "pay-1", Amount: 5000}}
	charge := Command{ID: "ch-1", Account: "acct", Step: step.Command{Kind: step.Charge, Now: t0 + 1, Key: "charge/v1", Amount: 700, Log: logEntry("acct", "req-1", t0+1)}}
	// The same top-up again under a new command id is a repeat by its idempotency key.
	again := Command{ID: "top-2", Account: "acct", Step: step.Command{Kind: step.AddCredits, Now: t0 + 2, Key: "pay-1", Amount: 5000}}
	res := apply(t, sm, entries(1, batch(t, top, charge, top), batch(t, charge, again)))
	tests := []struct {
		name       string
		got        step.Result
		added, rep bool
		balance    money.Amount
	}{
		{"top-up", res[0][0], true, false, 5000},
		{"charge", res[0][1], false, false, 4300},
		{"top-up retried in its own entry", res[0][2], true, false, 5000},
		{"charge retried in the next entry", res[1][0], false, false, 4300},
		{"same key, new command", res[1][1], false, true, 4300},
	}
	for _, tc := range tests {
		if tc.got.Added != tc.added || tc.got.Repeat != tc.rep || tc.got.Balance != tc.balance || tc.got.Fail != step.OK {
			t.Errorf("%s: %+v, want added %v repeat %v balance %s", tc.name, tc.got, tc.added, tc.rep, tc.balance)
		}
	}
	if got := logOf(t, s, "acct"); !slices.Equal(got, []string{"req-1 700"}) {
		t.Errorf("log = %q, want the charge once", got)
	}
	if g, found, err := s.CreditGrantFor("acct", "pay-1"); err != nil || !found || g.Amount != 5000 || g.Balance != 5000 {
		t.Errorf("grant pay-1 = %+v %v %v", g, found, err)
	}
}

func TestAfterARestartOpenResumesAtTheAppliedIndexAndNothingAppliesTwice(t *testing.T) {
	s, dir := openStore(t, "")
	sm := NewStateMachine(s, 3)
	top := Command{ID: "top", Account: "acct", Step: step.Command{Kind: step.AddCredits, Now: t0, Key: "pay", Amount: 9000}}
	// The window holds one call: the second admit is paid.
	admit := func(id string) Command {
		return Command{ID: id, Account: "acct", Step: step.Command{Kind: step.Admit, Now: t0 + 1, Key: "k1", Plan: step.Plan{WindowRequests: 1}, Amount: 100, TTL: int64(time.Hour)}}
	}
	log := [][]byte{batch(t, top), batch(t, admit("adm-1"), admit("adm-2"))}
	apply(t, sm, entries(1, log...))
	res := apply(t, sm, entries(3, batch(t, Command{ID: "set", Account: "acct", Step: step.Command{Kind: step.Settle, Now: t0 + 2, ID: 2, Counts: true, Amount: 300, Log: logEntry("acct", "req-1", t0+1)}})))
	if r := res[0][0]; r.Fail != step.OK || r.Charged != 300 || r.Balance != 8700 {
		t.Fatalf("settle = %+v", r)
	}
	before := snapshot(t, sm)
	s.Close()

	s2, _ := openStore(t, dir)
	sm2 := NewStateMachine(s2, 3)
	applied, err := sm2.Open()
	if err != nil || applied != 3 {
		t.Fatalf("Open = %d, %v, want 3", applied, err)
	}
	// The engine replays from its log what it has: entries 2 and 3 again, then 4 (the top-up
	// retried after an unknown outcome) and 5 (the settle retried).
	settle := Command{ID: "set", Account: "acct", Step: step.Command{Kind: step.Settle, Now: t0 + 2, ID: 2, Counts: true, Amount: 300, Log: logEntry("acct", "req-1", t0+1)}}
	es := entries(2, log[1], batch(t, settle), batch(t, top), batch(t, settle))
	got := apply(t, sm2, es)
	if es[0].Result != nil || es[1].Result != nil {
		t.Errorf("entries at or below the applied index got results: %v", got)
	}
	if r := got[2][0]; !r.Added || r.Balance != 9000 {
		t.Errorf("retried top-up = %+v, want its first result", r)
	}
	if r := got[3][0]; r.Charged != 300 || r.Balance != 8700 {
		t.Errorf("retried settle = %+v, want its first result", r)
	}
	if applied := sm2.Applied(); applied != 5 {
		t.Errorf("applied = %d, want 5", applied)
	}
	view := lookup(t, sm2, "acct", t0+3)
	if view.Balance != 8700 || view.Spent != 300 || view.InFlight != 1 {
		t.Errorf("view = %+v, want balance 8700 spent 300, the in-plan call in flight", view)
	}
	if l := logOf(t, s2, "acct"); !slices.Equal(l, []string{"req-1 300"}) {
		t.Errorf("log = %q, want the settle once", l)
	}
	if after := snapshot(t, sm2); bytes.Equal(before, after) {
		t.Error("the retries were not remembered (the state did not move)")
	}
}

// lookup is the admin view of account on sm at now.
func lookup(t *testing.T, sm *StateMachine, account string, now int64) *step.State {
	t.Helper()
	q, err := (&Query{Account: account, Now: now, Plan: plan}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, sm)
	out, err := sm.Lookup(q)
	if err != nil {
		t.Fatal(err)
	}
	var r step.Result
	if err := r.Decode(out); err != nil || r.View == nil {
		t.Fatalf("lookup: %v %+v", err, r)
	}
	if !bytes.Equal(before, snapshot(t, sm)) {
		t.Fatal("Lookup changed the state")
	}
	return r.View
}

func TestASnapshotRecoveredIntoAnotherStoreGivesTheSameStateAndLog(t *testing.T) {
	a, sa := newReplica(t, 5)
	apply(t, a, entries(1, randomLog(t, 9, 60)...))
	snap := snapshot(t, a)
	b, sb := newReplica(t, 5)
	// b holds other state of the shard before (an older replica): recovery replaces it all.
	apply(t, b, entries(1, randomLog(t, 10, 5)...))
	// and another shard's, which recovery leaves alone.
	other := NewStateMachine(sb, 6)
	apply(t, other, entries(1, batch(t, Command{ID: "x", Account: "acct-z", Step: step.Command{Kind: step.AddCredits, Now: t0, Key: "p", Amount: 1}})))
	otherBefore := snapshot(t, other)
	if err := b.RecoverFromSnapshot(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, b); !bytes.Equal(got, snap) {
		t.Fatalf("recovered state differs: %d bytes, want %d", len(got), len(snap))
	}
	if b.Applied() != 60 {
		t.Errorf("applied after recovery = %d, want 60", b.Applied())
	}
	for _, acct := range []string{"acct-a", "acct-b", "acct-c"} {
		if la, lb := logOf(t, sa, acct), logOf(t, sb, acct); !slices.Equal(la, lb) || len(la) == 0 {
			t.Errorf("log of %s: %q on the source, %q recovered", acct, la, lb)
		}
	}
	if !bytes.Equal(otherBefore, snapshot(t, other)) {
		t.Error("recovery changed another shard")
	}
	// Both go on the same way.
	more := entries(61, randomLog(t, 11, 10)...)
	if ra, rb := apply(t, a, slices.Clone(more)), apply(t, b, slices.Clone(more)); fmt.Sprint(ra) != fmt.Sprint(rb) {
		t.Errorf("results after recovery differ")
	}
	if !bytes.Equal(snapshot(t, a), snapshot(t, b)) {
		t.Error("states after recovery differ")
	}
	// A cut-off snapshot changes nothing.
	before := snapshot(t, b)
	if err := b.RecoverFromSnapshot(bytes.NewReader(snap[:len(snap)/2])); err == nil {
		t.Error("a cut-off snapshot was accepted")
	}
	if !bytes.Equal(before, snapshot(t, b)) {
		t.Error("a cut-off snapshot changed the state")
	}
}

func TestAReservationNeverSettledExpiresOnTheAccountsNextStep(t *testing.T) {
	sm, _ := newReplica(t, 1)
	p := step.Plan{WindowRequests: 1}
	admit := func(id string, now int64) Command {
		return Command{ID: id, Account: "acct", Step: step.Command{Kind: step.Admit, Now: now, Key: "k1", Plan: p, TTL: int64(time.Minute)}}
	}
	res := apply(t, sm, entries(1, batch(t, admit("a1", t0), admit("a2", t0+int64(30*time.Second)), admit("a3", t0+int64(61*time.Second)))))
	tests := []struct {
		name  string
		admit bool
	}{{"first", true}, {"second, while the first holds the window", false}, {"third, after the first expired", true}}
	for i, tc := range tests {
		if res[0][i].Admitted != tc.admit {
			t.Errorf("%s: admitted %v, want %v (%+v)", tc.name, res[0][i].Admitted, tc.admit, res[0][i])
		}
	}
	if v := lookup(t, sm, "acct", t0+int64(3*time.Minute)); v.InFlight != 0 {
		t.Errorf("a read after every TTL shows %d calls in flight, want 0", v.InFlight)
	}
}

func TestMalformedCommandsAreRefusedWithoutChangingAnything(t *testing.T) {
	sm, _ := newReplica(t, 1)
	bad := []Command{
		{ID: "", Account: "acct", Step: step.Command{Kind: step.AddCredits, Now: t0, Key: "p", Amount: 1}},
		{ID: "c1", Account: "a/b", Step: step.Command{Kind: step.AddCredits, Now: t0, Key: "p", Amount: 1}},
		{ID: "c2", Account: "acct", Step: step.Command{Kind: step.AddCredits, Now: t0, Key: "bad key", Amount: 1}},
		{ID: "c3", Account: "acct", Step: step.Command{Kind: step.Record, Now: t0, Key: "k1", Log: logEntry("other", "r", t0)}},
		{ID: "c4", Account: "acct", Step: step.Command{Kind: 99, Now: t0}},
	}
	before := snapshot(t, sm)
	res := apply(t, sm, entries(1, batch(t, bad...), []byte("not a batch")))
	for i, r := range res[0] {
		if r.Fail != step.Invalid {
			t.Errorf("command %d: %+v, want Invalid", i, r)
		}
	}
	if len(res[1]) != 0 {
		t.Errorf("a proposal that is not a batch got %d results", len(res[1]))
	}
	v := sm.store.ViewShard()
	defer v.Close()
	if accts, err := sm.accounts(v); err != nil || len(accts) != 0 {
		t.Errorf("accounts after refused commands: %q %v, want none", accts, err)
	}
	if sm.Applied() != 2 || bytes.Equal(before, snapshot(t, sm)) {
		t.Errorf("applied = %d, want 2 (the entries were applied, as refusals)", sm.Applied())
	}
}

// malformed must be exactly the step's own up-front refusal: a command it calls malformed
// is not applied at all, so one the step would apply must never be called malformed.
func TestMalformedIsExactlyTheStepsUpFrontRefusal(t *testing.T) {
	for kind := step.Kind(0); kind <= step.View+2; kind++ {
		for _, c := range []step.Command{
			{Kind: kind, Now: t0, Key: "k", Amount: 1, N: 1, Media: persistence.MediaImages, Log: logEntry("a", "r", t0)},
			{Kind: kind, Now: -1}, {Kind: kind, At: -1}, {Kind: kind, Units: -1}, {Kind: kind, Amount: -1}, {Kind: kind, N: -1}, {Kind: kind, TTL: -1},
		} {
			var a step.Account
			r := step.Apply(&a, &c)
			untouched := a.Last == 0 && r.Fail == step.Invalid
			if malformed(&c) != untouched {
				t.Errorf("%+v: malformed %v, but the step left the account untouched: %v", c, malformed(&c), untouched)
			}
		}
	}
}

func TestAnAccountsShardIsFnv1aOfItsIDModuloTheShardCount(t *testing.T) {
	tests := []struct {
		account string
		first   uint64
		shards  int
		want    uint64
	}{
		{"", 1, 4, 2},  // fnv-1a 64 of "" is 0xcbf29ce484222325: 0x25 mod 4 = 1
		{"a", 1, 4, 1}, // of "a", 0xaf63dc4c8601ec8c: 0x8c mod 4 = 0
		{"a", 10, 1, 10},
		{"a", 0, 256, 0x8c},
	}
	for _, tc := range tests {
		if got := ShardOf(tc.account, tc.first, tc.shards); got != tc.want {
			t.Errorf("ShardOf(%q, %d, %d) = %d, want %d", tc.account, tc.first, tc.shards, got, tc.want)
		}
	}
}
