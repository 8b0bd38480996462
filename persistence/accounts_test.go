package persistence

import (
	"cmp"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var accountIDRe = regexp.MustCompile(`^acct_[A-Za-z0-9]{20}$`)

func TestCreateAndGetAccount(t *testing.T) {
	s, _ := openStore(t)
	before := time.Now().Unix()
	a := must(s.CreateAccount("ada@example.com", "pro"))(t)
	after := time.Now().Unix()

	if !accountIDRe.MatchString(a.ID) {
		t.Errorf("ID = %q, want match %s", a.ID, accountIDRe)
	}
	if a.Email != "ada@example.com" || a.Plan != "pro" {
		t.Errorf("got %+v", a)
	}
	if a.CreatedAt < before || a.CreatedAt > after {
		t.Errorf("CreatedAt = %d, want in [%d, %d]", a.CreatedAt, before, after)
	}
	got := must(s.GetAccount(a.ID))(t)
	if got != a {
		t.Errorf("GetAccount = %+v, want %+v", got, a)
	}

	_, err := s.GetAccount("acct_doesnotexist000000")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "acct_doesnotexist000000") {
		t.Errorf("GetAccount(unknown) err = %v, want ErrNotFound naming the id", err)
	}
}

func TestCreateAccountValidation(t *testing.T) {
	s, _ := openStore(t) // shared: nothing may ever be written to it
	for _, tc := range []struct {
		name, email, plan, field string
	}{
		{"empty email", "", "pro", "email"},
		{"no at", "ada.example.com", "pro", "email"},
		{"nothing before at", "@example.com", "pro", "email"},
		{"nothing after at", "ada@", "pro", "email"},
		{"two ats", "ada@b@example.com", "pro", "email"},
		{"double at", "ada@@example.com", "pro", "email"},
		{"space", "ada lovelace@example.com", "pro", "email"},
		{"newline", "ada@example.com\n", "pro", "email"},
		{"invalid utf8", "ada\xff@example.com", "pro", "email"},
		{"too long", strings.Repeat("a", 250) + "@b.co", "pro", "email"},
		{"empty plan", "ada@example.com", "", "plan"},
		{"blank plan", "ada@example.com", "  ", "plan"},
		{"control in plan", "ada@example.com", "pro\x00", "plan"},
		{"long plan", "ada@example.com", strings.Repeat("p", 65), "plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := s.CreateAccount(tc.email, tc.plan)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("err %q does not name field %q", err, tc.field)
			}
			if a != (Account{}) {
				t.Errorf("returned %+v, want zero Account", a)
			}
			if all := must(s.ListAccounts())(t); len(all) != 0 {
				t.Errorf("stored %d accounts after invalid input", len(all))
			}
		})
	}
}

func TestSetAccountPlan(t *testing.T) {
	s, _ := openStore(t)
	a := must(s.CreateAccount("ada@example.com", "free"))(t)

	up := must(s.SetAccountPlan(a.ID, "pro"))(t)
	want := a
	want.Plan = "pro"
	if up != want {
		t.Errorf("SetAccountPlan = %+v, want %+v", up, want)
	}
	if got := must(s.GetAccount(a.ID))(t); got != want {
		t.Errorf("GetAccount after SetAccountPlan = %+v, want %+v", got, want)
	}

	if _, err := s.SetAccountPlan(a.ID, ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty plan err = %v, want ErrInvalid", err)
	}
	if _, err := s.SetAccountPlan("acct_nope", "pro"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown account err = %v, want ErrNotFound", err)
	}
	if got := must(s.GetAccount(a.ID))(t); got != want {
		t.Errorf("failed SetAccountPlan changed the account: %+v", got)
	}
}

func TestListAccounts(t *testing.T) {
	s, _ := openStore(t)
	if got := must(s.ListAccounts())(t); got == nil || len(got) != 0 {
		t.Fatalf("empty store: ListAccounts = %#v, want empty non-nil", got)
	}
	var want []Account
	for _, e := range []string{"a@x.io", "b@x.io", "c@x.io"} {
		want = append(want, must(s.CreateAccount(e, "free"))(t))
	}
	got := must(s.ListAccounts())(t)
	// All three are usually created within the same second, so the order
	// is CreatedAt then ID; sort want the same way.
	slices.SortFunc(want, func(a, b Account) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ListAccounts = %+v, want %+v", got, want)
	}
}
