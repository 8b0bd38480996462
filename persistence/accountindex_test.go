package persistence

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// ids lists the accounts' ids in order.
func ids(accts []Account) []string {
	out := []string{}
	for _, a := range accts {
		out = append(out, a.ID)
	}
	return out
}

// TestEmailIsUniqueIgnoringCase: an e-mail belongs to one account, compared ignoring case; a
// refused creation stores nothing.
func TestEmailIsUniqueIgnoringCase(t *testing.T) {
	s, _ := openStore(t)
	ada := must(s.CreateAccount("Ada@Example.com", "free"))(t)
	for _, tc := range []struct {
		email string
		taken bool
	}{
		{"Ada@Example.com", true},
		{"ada@example.com", true},
		{"ADA@EXAMPLE.COM", true},
		{"ada@example.co", false},
		{"ada.lovelace@example.com", false},
	} {
		t.Run(tc.email, func(t *testing.T) {
			before := len(must(s.ListAccounts())(t))
			a, err := s.CreateAccount(tc.email, "pro")
			if !tc.taken {
				if err != nil || a.Email != tc.email {
					t.Fatalf("CreateAccount(%q) = %+v, %v", tc.email, a, err)
				}
				return
			}
			var taken *EmailTakenError
			if !errors.As(err, &taken) || !errors.Is(err, ErrConflict) || taken.AccountID != ada.ID || taken.Email != tc.email {
				t.Fatalf("err = %#v, want *EmailTakenError naming %s", err, ada.ID)
			}
			want := "the e-mail " + tc.email + " is taken: account " + ada.ID + " has it (e-mails are compared ignoring case)"
			if err.Error() != want {
				t.Fatalf("message %q, want %q", err, want)
			}
			if after := len(must(s.ListAccounts())(t)); after != before || a != (Account{}) {
				t.Fatalf("refused creation returned %+v and left %d accounts (was %d)", a, after, before)
			}
		})
	}
}

// TestAccountPages: accounts are listed oldest first, a page at a time with an opaque cursor,
// or looked up by e-mail ignoring case.
func TestAccountPages(t *testing.T) {
	s, _ := openStore(t)
	var all []string
	for _, e := range []string{"a@x.io", "b@x.io", "c@x.io", "d@x.io", "e@x.io"} {
		all = append(all, must(s.CreateAccount(e, "free"))(t).ID)
	}
	pages := func(q AccountQuery) [][]string {
		t.Helper()
		var out [][]string
		for {
			p, err := s.ListAccountsPage(q)
			if err != nil {
				t.Fatalf("ListAccountsPage(%+v): %v", q, err)
			}
			out = append(out, ids(p.Accounts))
			if p.Next == "" {
				return out
			}
			q.Cursor = p.Next
		}
	}
	for _, tc := range []struct {
		name string
		q    AccountQuery
		want [][]string
	}{
		{"one page", AccountQuery{Limit: 100}, [][]string{all}},
		{"pages of two", AccountQuery{Limit: 2}, [][]string{all[0:2], all[2:4], all[4:]}},
		{"pages that fill exactly", AccountQuery{Limit: 5}, [][]string{all}},
		{"pages of one", AccountQuery{Limit: 1}, [][]string{all[0:1], all[1:2], all[2:3], all[3:4], all[4:]}},
		{"by e-mail", AccountQuery{Email: "c@x.io", Limit: 10}, [][]string{all[2:3]}},
		{"by e-mail, other case", AccountQuery{Email: "C@X.IO", Limit: 1}, [][]string{all[2:3]}},
		{"by unknown e-mail", AccountQuery{Email: "z@x.io", Limit: 10}, [][]string{{}}},
		{"by an e-mail's prefix", AccountQuery{Email: "c@x.i", Limit: 10}, [][]string{{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pages(tc.q); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("pages %v, want %v", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		q    AccountQuery
		msg  string
	}{
		{"limit 0", AccountQuery{}, "limit must be 1 to 1000, not 0"},
		{"limit too big", AccountQuery{Limit: 1001}, "limit must be 1 to 1000, not 1001"},
		{"cursor not base64", AccountQuery{Limit: 1, Cursor: "%%"}, `cursor "%%" is not one a page of accounts gave out; start again without it`},
		{"cursor of something else", AccountQuery{Limit: 1, Cursor: "a2V5X3h4eHh4eHh4"}, `cursor "a2V5X3h4eHh4eHh4" is not one a page of accounts gave out; start again without it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.ListAccountsPage(tc.q)
			if !errors.Is(err, ErrInvalid) || err.Error() != tc.msg || p.Accounts != nil {
				t.Fatalf("ListAccountsPage(%+v) = %+v, %v; want ErrInvalid %q", tc.q, p, err, tc.msg)
			}
		})
	}
}

// TestOpenIndexesAnOlderStore: a store written before e-mails were unique (two accounts
// share one, in different case) gets its indexes at Open, once: every account is listed
// in creation order, the lookup finds both sharers, they are reported, and the e-mail
// is refused from then on.
func TestOpenIndexesAnOlderStore(t *testing.T) {
	s, dir := openStore(t)
	old := []Account{
		{ID: "acct_CCCCCCCCCCCCCCCCCCCC", Email: "ops@example.com", Plan: "free", CreatedAt: 1700000000},
		{ID: "acct_BBBBBBBBBBBBBBBBBBBB", Email: "OPS@example.com", Plan: "pro", CreatedAt: 1700000000},
		{ID: "acct_AAAAAAAAAAAAAAAAAAAA", Email: "dev@example.com", Plan: "free", CreatedAt: 1700000005},
	}
	for _, a := range old { // as the store wrote them before: the record only
		if err := s.putAccount(dbKey(nsAccount, a.ID), a, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.db.Delete(accountsIndexed, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the second Open finds the store indexed and adds nothing
		s = reopen(t, s, dir)
		p := must(s.ListAccountsPage(AccountQuery{Limit: 10}))(t)
		if got, want := ids(p.Accounts), []string{old[1].ID, old[0].ID, old[2].ID}; !slices.Equal(got, want) || p.Next != "" {
			t.Fatalf("open %d: listed %v (next %q), want %v", i, got, p.Next, want)
		}
		p = must(s.ListAccountsPage(AccountQuery{Email: "Ops@Example.com", Limit: 10}))(t)
		if got, want := ids(p.Accounts), []string{old[1].ID, old[0].ID}; !slices.Equal(got, want) {
			t.Fatalf("open %d: by e-mail %v, want %v", i, got, want)
		}
		shared := must(s.AccountsSharingEmails())(t)
		if want := [][]string{{old[1].ID, old[0].ID}}; !reflect.DeepEqual(shared, want) {
			t.Fatalf("open %d: sharing %v, want %v", i, shared, want)
		}
	}
	_, err := s.CreateAccount("ops@EXAMPLE.com", "free")
	var taken *EmailTakenError
	if !errors.As(err, &taken) || !strings.HasPrefix(taken.AccountID, "acct_") {
		t.Fatalf("duplicate of a shared e-mail: %v", err)
	}
	// New accounts come after the indexed ones.
	n := must(s.CreateAccount("new@example.com", "free"))(t)
	p := must(s.ListAccountsPage(AccountQuery{Limit: 2, Cursor: must(s.ListAccountsPage(AccountQuery{Limit: 2}))(t).Next}))(t)
	if got, want := ids(p.Accounts), []string{old[2].ID, n.ID}; !slices.Equal(got, want) {
		t.Fatalf("second page %v, want %v", got, want)
	}
}

// A store whose e-mails are all distinct reports no sharers.
func TestAccountsSharingEmailsNone(t *testing.T) {
	s, _ := openStore(t)
	for _, e := range []string{"a@x.io", "ab@x.io", "b@x.io"} {
		must(s.CreateAccount(e, "free"))(t)
	}
	if got := must(s.AccountsSharingEmails())(t); len(got) != 0 {
		t.Fatalf("sharing %v", got)
	}
}
