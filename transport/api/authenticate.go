package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/authlimit"
	"github.com/modelgate/modelgate/transport/keycheck"
)

// The first phase of every endpoint: the key. open adds the body, for the endpoints that
// call a model.

// authenticate reads the key from Authorization: Bearer or x-api-key, on the Gemini API's
// paths also from x-goog-api-key or ?key=, and on the key-holder endpoints (anyKeyHeader)
// from x-goog-api-key.
func (s *Server) authenticate(r *http.Request, x *exchange) *apiError {
	secret := r.Header.Get("x-api-key")
	if secret == "" && isGoogleAPI(r) {
		secret = googleKey(r)
	}
	if secret == "" && x.anyKeyHeader {
		secret = strings.TrimSpace(r.Header.Get("x-goog-api-key"))
	}
	if auth := r.Header.Get("Authorization"); secret == "" && auth != "" {
		scheme, token, ok := strings.Cut(auth, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return errUnauthorized("the Authorization header must be 'Bearer <API key>'")
		}
		secret = strings.TrimSpace(token)
	}
	if secret == "" && isGoogleAPI(r) {
		return errUnauthorized("no API key: send 'x-goog-api-key: <API key>', '?key=<API key>' or 'Authorization: Bearer <API key>'")
	}
	if secret == "" && x.anyKeyHeader {
		return errUnauthorized("no API key: send 'Authorization: Bearer <API key>', 'x-api-key: <API key>' or 'x-goog-api-key: <API key>'")
	}
	if secret == "" {
		return errUnauthorized("no API key: send 'Authorization: Bearer <API key>' or 'x-api-key: <API key>'")
	}
	if wait := s.AuthLimit.Wait(r, authlimit.APIKey); wait > 0 {
		return errAuthLimited(wait)
	}
	x.checked = time.Now() // the cluster's wait budget starts here (quota.MaxWait)
	key, no := keycheck.Check(s.Keys, secret, s.now())
	if no != nil {
		if no.Failed {
			s.AuthLimit.Failed(r, authlimit.APIKey)
		}
		switch no.Status {
		case http.StatusServiceUnavailable:
			s.Logger.Warn("key check unavailable", "request_id", x.id, "err", no.Err)
		case http.StatusInternalServerError:
			s.Logger.Error("key lookup failed", "request_id", x.id, "err", no.Err)
		}
		x.revoked = no.Key // a revoked or expired key's account log gets the refusal too
		return refused(no)
	}
	x.key, x.ratesCtx = key, r.Context()
	return nil
}

// open starts a request that is recorded in its account's ledger (one that calls a model):
// the key, then the body; errors are rendered in envelope (nil: chat). The caller defers
// s.done(x) and stops when ok is false (the error has been answered).
func (s *Server) open(w http.ResponseWriter, r *http.Request, endpoint, clientFormat string, envelope ir.ClientFormat) (x *exchange, body []byte, ok bool) {
	x = s.begin(w, r, endpoint)
	x.envelope = envelope
	x.entry = persistence.LogEntry{RequestID: x.id, ClientFormat: clientFormat}
	s.Metrics.InFlight(1)
	s.inflight.Add(1)
	if e := s.authenticate(r, x); e != nil {
		s.fail(x, e)
		return x, nil, false
	}
	body, e := readBody(w, r, x)
	if e != nil {
		s.fail(x, e)
		return x, nil, false
	}
	x.named = namedModel(body)
	return x, body, true
}

// openUnrecorded starts a request answered without admission or a log entry (a token count,
// a poll, a list): the key, and for counts the body. False means the error was answered.
func (s *Server) openUnrecorded(w http.ResponseWriter, r *http.Request, x *exchange, withBody bool) ([]byte, bool) {
	if e := s.authenticate(r, x); e != nil {
		s.render(x, e)
		return nil, false
	}
	if !withBody {
		return nil, true
	}
	body, e := readBody(w, r, x)
	if e != nil {
		s.render(x, e)
		return nil, false
	}
	return body, true
}

// refused is a key check's refusal as the API answers it.
func refused(no *keycheck.Refusal) *apiError {
	return &apiError{Status: no.Status, Type: no.Type, Code: no.Code, Message: no.Message, RetryAfter: no.RetryAfter}
}

// errAuthLimited refuses a key from a client that failed too many key, token or session
// checks (authlimit): the key is not looked at.
func errAuthLimited(wait time.Duration) *apiError {
	return &apiError{Status: http.StatusTooManyRequests, Type: authlimit.Type, Code: authlimit.Code,
		RetryAfter: authlimit.Seconds(wait), Message: authlimit.Message(wait)}
}

// errKeyExpired is the 401 of a key past its expiry (persistence.KeyLimits.ExpiresAt).
func errKeyExpired(at int64) *apiError { return refused(keycheck.Expired(at)) }
