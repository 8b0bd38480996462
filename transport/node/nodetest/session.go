package nodetest

import (
	"time"

	"github.com/modelgate/modelgate/persistence"
)

// Session gives account acct a verified login and a session through the store, as a
// password reset would, and returns the headers a browser sends with it: the session
// cookie and the CSRF token (the /auth flows have their own tests).
func (e *Env) Session(acct string) []string {
	e.TB.Helper()
	token, err := e.Node.Store.IssueReset(acct, time.Now())
	if err == nil {
		_, err = e.Node.Store.UseToken(persistence.TokenReset, token, "a long test password", time.Now())
	}
	if err != nil {
		e.TB.Fatal(err)
	}
	id, err := e.Node.Store.CreateSession(acct, time.Now())
	if err != nil {
		e.TB.Fatal(err)
	}
	return []string{"Cookie", "mg_session=" + id, "X-CSRF-Token", persistence.CSRFToken(id)}
}
