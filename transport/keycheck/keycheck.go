// Package keycheck is the one check of an API key's secret, for the API and for the account
// API (which a key may read): what makes a key valid, and the refusal of one that is not,
// each answered the same on both.
package keycheck

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/modelgate/modelgate/persistence"
)

// Keys looks a key up by its secret: the single node's store, or a cluster node's replica.
type Keys interface {
	LookupKey(secret string) (persistence.Key, error)
}

// ErrUnavailable is what a Keys implementation wraps when it cannot answer in time (a
// cluster node cut off from the metadata shard's quorum): the call is refused with 503 and
// Retry-After, not 500, since another try (or another node) will answer.
var ErrUnavailable = errors.New("the key store is unavailable")

// Refusal is why a secret does not let its caller in, as the client is told.
type Refusal struct {
	Status     int
	Type, Code string
	Message    string
	RetryAfter int // seconds; 0: no Retry-After
	// Failed: the secret was wrong (unknown, or not a key's form), which counts against the
	// client's failed authentications (authlimit).
	Failed bool
	// Key is the key of a secret refused for being revoked or expired: a real key of a real
	// account, whose log may record the refusal.
	Key *persistence.Key
	// Err is the store's own error behind a 500, for the log (never the client's).
	Err error
}

// Prefixes are the forms a key's secret takes: a minted token, or a user's imported key.
var Prefixes = []string{"sk-token-", "sk-user-"}

// Check looks secret up and says whether its key may call at now: the key, or why not.
func Check(keys Keys, secret string, now time.Time) (persistence.Key, *Refusal) {
	if !hasPrefix(secret) {
		return persistence.Key{}, &Refusal{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_api_key",
			Message: "invalid API key: keys start with " + strings.Join(Prefixes, " or "), Failed: true}
	}
	key, err := keys.LookupKey(secret)
	switch {
	case errors.Is(err, persistence.ErrNotFound) || errors.Is(err, persistence.ErrInvalid):
		return key, unauthorized("invalid API key", true)
	case errors.Is(err, ErrUnavailable):
		return key, &Refusal{Status: http.StatusServiceUnavailable, Type: "overloaded_error", Code: "key_check_unavailable", RetryAfter: 1,
			Message: "the API key could not be checked: this node cannot reach the cluster's key store right now; retry shortly (another node may answer)", Err: err}
	case errors.Is(err, persistence.ErrDisabled):
		// 403, not 401: the key is right, its account may not call (docs/decisions.md,
		// "Disabled accounts").
		return key, &Refusal{Status: http.StatusForbidden, Type: "permission_error", Code: "account_disabled",
			Message: "this API key's account has been disabled by the gateway's operator"}
	case err != nil:
		return key, &Refusal{Status: http.StatusInternalServerError, Type: "server_error", Code: "internal_error",
			Message: "the key could not be checked; try again", Err: err}
	case key.RevokedAt != 0:
		r := unauthorized("this API key has been revoked", false)
		r.Key = &key
		return key, r
	case key.Limits.Expired(now):
		r := Expired(key.Limits.ExpiresAt)
		r.Key = &key
		return key, r
	}
	return key, nil
}

// Expired is the refusal of a key past its expiry at (unix seconds).
func Expired(at int64) *Refusal {
	r := unauthorized("this API key expired at "+time.Unix(at, 0).UTC().Format(time.RFC3339), false)
	r.Code = "key_expired"
	return r
}

func hasPrefix(secret string) bool {
	for _, p := range Prefixes {
		if strings.HasPrefix(secret, p) {
			return true
		}
	}
	return false
}

func unauthorized(msg string, failed bool) *Refusal {
	return &Refusal{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_api_key", Message: msg, Failed: failed}
}
