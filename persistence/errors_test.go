package persistence

import (
	"errors"
	"strings"
	"testing"
)

// TestStoreErrorsSayWhatToFix: a refusal of the store reaches the operator as a typed error
// whose message has no package prefix: the field for an invalid value, the kind and id for a
// missing record, matched by errors.Is on its sentinel.
func TestStoreErrorsSayWhatToFix(t *testing.T) {
	s, _ := openStore(t)
	acct, err := s.CreateAccount("ops@example.com", "pro")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		call func() error
		want Error
	}{
		{"no e-mail", func() error { _, err := s.CreateAccount("", "pro"); return err },
			Error{Kind: ErrInvalid, Field: "email", Msg: "email is required"}},
		{"a plan with a control character", func() error { _, err := s.CreateAccount("a@b.c", "pro\x01"); return err },
			Error{Kind: ErrInvalid, Field: "plan", Msg: `plan "pro\x01" contains control characters or invalid UTF-8`}},
		{"a model listed twice", func() error {
			_, _, err := s.CreateKey(acct.ID, KeySpec{Name: "k", Models: []string{"m", "m"}})
			return err
		}, Error{Kind: ErrInvalid, Field: "models", Msg: `models[1] "m" is listed twice`}},
		{"an imported secret of another kind", func() error { _, err := s.ImportKey(acct.ID, KeySpec{Name: "k"}, "pk-123"); return err },
			Error{Kind: ErrInvalid, Field: "import_key", Msg: `secret must start with "sk-user-" or "sk-token-"`}},
		{"a missing account", func() error { _, err := s.GetAccount("acct_missing"); return err },
			Error{Kind: ErrNotFound, What: "account", ID: "acct_missing", Msg: `no account "acct_missing"`}},
		{"a key for a missing account", func() error { _, _, err := s.CreateKey("acct_gone", KeySpec{Name: "k"}); return err },
			Error{Kind: ErrNotFound, What: "account", ID: "acct_gone", Msg: `no account "acct_gone"`}},
		{"revoking a missing key", func() error { _, err := s.RevokeKey("key_missing"); return err },
			Error{Kind: ErrNotFound, What: "key", ID: "key_missing", Msg: `no key "key_missing"`}},
		{"a missing task", func() error { _, err := s.GetTask("video_missing"); return err },
			Error{Kind: ErrNotFound, What: "task", ID: "video_missing", Msg: `no task "video_missing"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, c.want.Kind) {
				t.Fatalf("got %#v, want a typed %v", err, c.want.Kind)
			}
			if *e != c.want || strings.Contains(e.Error(), "persistence") {
				t.Errorf("got %+v, want %+v", *e, c.want)
			}
		})
	}
}
