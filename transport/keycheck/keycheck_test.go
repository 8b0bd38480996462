package keycheck

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
)

type fakeKeys map[string]struct {
	key persistence.Key
	err error
}

func (f fakeKeys) LookupKey(secret string) (persistence.Key, error) {
	k, ok := f[secret]
	if !ok {
		return persistence.Key{}, persistence.ErrNotFound
	}
	return k.key, k.err
}

// TestEachSecretGetsItsOneAnswer: every way a secret is refused, as both the API and the
// account API answer it, and a good key let in.
func TestEachSecretGetsItsOneAnswer(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	broken := errors.New("pebble: closed")
	keys := fakeKeys{
		"sk-token-good":     {key: persistence.Key{ID: "key_1", AccountID: "acct_1"}},
		"sk-user-good":      {key: persistence.Key{ID: "key_2"}},
		"sk-token-bad":      {err: fmt.Errorf("key: %w", persistence.ErrInvalid)},
		"sk-token-cut":      {err: fmt.Errorf("key check: %w: no quorum", ErrUnavailable)},
		"sk-token-off":      {err: persistence.ErrDisabled},
		"sk-token-broken":   {err: broken},
		"sk-token-revoked":  {key: persistence.Key{ID: "key_3", RevokedAt: 1}},
		"sk-token-expired":  {key: persistence.Key{ID: "key_4", Limits: persistence.KeyLimits{ExpiresAt: now.Unix()}}},
		"sk-token-expiring": {key: persistence.Key{ID: "key_5", Limits: persistence.KeyLimits{ExpiresAt: now.Unix() + 1}}},
	}
	cases := []struct {
		secret      string
		status      int // 0: let in
		code, msg   string
		retry       int
		failed, key bool
		err         error
	}{
		{secret: "sk-token-good"},
		{secret: "sk-user-good"},
		{secret: "sk-token-expiring"},
		{secret: "pk-live-good", status: 401, code: "invalid_api_key", msg: "invalid API key: keys start with sk-token- or sk-user-", failed: true},
		{secret: "sk-token-unknown", status: 401, code: "invalid_api_key", msg: "invalid API key", failed: true},
		{secret: "sk-token-bad", status: 401, code: "invalid_api_key", msg: "invalid API key", failed: true},
		{secret: "sk-token-cut", status: 503, code: "key_check_unavailable", retry: 1,
			msg: "the API key could not be checked: this node cannot reach the cluster's key store right now; retry shortly (another node may answer)", err: ErrUnavailable},
		{secret: "sk-token-off", status: 403, code: "account_disabled", msg: "this API key's account has been disabled by the gateway's operator"},
		{secret: "sk-token-broken", status: 500, code: "internal_error", msg: "the key could not be checked; try again", err: broken},
		{secret: "sk-token-revoked", status: 401, code: "invalid_api_key", msg: "this API key has been revoked", key: true},
		{secret: "sk-token-expired", status: 401, code: "key_expired", msg: "this API key expired at 2027-01-15T08:00:00Z", key: true},
	}
	for _, c := range cases {
		k, no := Check(keys, c.secret, now)
		if c.status == 0 {
			if no != nil || k.ID != keys[c.secret].key.ID {
				t.Errorf("%s: %+v %+v, want its key let in", c.secret, k, no)
			}
			continue
		}
		switch {
		case no == nil:
			t.Errorf("%s: let in, want %d", c.secret, c.status)
		case no.Status != c.status || no.Code != c.code || no.Message != c.msg || no.RetryAfter != c.retry || no.Failed != c.failed:
			t.Errorf("%s: %+v, want %d %s %q retry %d failed %v", c.secret, no, c.status, c.code, c.msg, c.retry, c.failed)
		case (no.Key != nil) != c.key || c.key && no.Key.ID != keys[c.secret].key.ID:
			t.Errorf("%s: refused key %+v", c.secret, no.Key)
		case !errors.Is(no.Err, c.err) || (c.err == nil) != (no.Err == nil):
			t.Errorf("%s: error %v, want %v", c.secret, no.Err, c.err)
		}
	}
}
