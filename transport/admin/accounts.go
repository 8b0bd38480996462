package admin

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/respond"
)

// DefaultAccountPage is the page size of an account listing that names none.
const DefaultAccountPage = 100

// accountList is a page of accounts; next_cursor, present when has_more, asks for the next.
type accountList struct {
	Object     string                `json:"object"`
	Data       []persistence.Account `json:"data"`
	HasMore    bool                  `json:"has_more"`
	NextCursor string                `json:"next_cursor,omitempty"`
}

// accountListParams are the query parameters GET /admin/v1/accounts takes.
var accountListParams = []string{"email", "cursor", "limit"}

// listAccounts is GET /admin/v1/accounts?email=&cursor=&limit=: the accounts oldest first, a
// page at a time, or the one with an e-mail (ignoring case). An unknown parameter is refused:
// a misspelt email= would otherwise list every account as the answer to a lookup.
func (s *Server) listAccounts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !onlyParams(w, q, "the account list", accountListParams) {
		return
	}
	limit := DefaultAccountPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > persistence.MaxAccountPage {
			respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_limit", "limit",
				fmt.Sprintf("limit must be a whole number from 1 to %d, not %q", persistence.MaxAccountPage, v))
			return
		}
		limit = n
	}
	page, err := s.store.ListAccountsPage(persistence.AccountQuery{Email: q.Get("email"), Cursor: q.Get("cursor"), Limit: limit})
	if errors.Is(err, persistence.ErrInvalid) { // the limit is checked above: the cursor
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_cursor", "cursor", err.Error())
		return
	}
	if StoreFailed(w, err) {
		return
	}
	respond.JSON(w, http.StatusOK, accountList{Object: "list", Data: page.Accounts, HasMore: page.Next != "", NextCursor: page.Next})
}

// onlyParams refuses a query naming a parameter the endpoint does not take (400
// unknown_parameter naming them): a misspelt filter would otherwise be ignored, and the answer
// would look like the one asked for.
func onlyParams(w http.ResponseWriter, q url.Values, what string, takes []string) bool {
	var unknown []string
	for name := range q {
		if !slices.Contains(takes, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return true
	}
	sort.Strings(unknown)
	respond.Error(w, http.StatusBadRequest, "invalid_request_error", "unknown_parameter", unknown[0],
		"unknown query parameter "+strings.Join(unknown, ", ")+": "+what+" takes "+joinAnd(takes))
	return false
}

// joinAnd is "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// emailTaken answers a creation refused for its e-mail: 409, naming the account that has it.
func emailTaken(w http.ResponseWriter, err error) bool {
	var taken *persistence.EmailTakenError
	if !errors.As(err, &taken) {
		return false
	}
	respond.Error(w, http.StatusConflict, "invalid_request_error", "email_taken", "email", taken.Error())
	return true
}

// setPassword is PUT /admin/v1/accounts/{id}/password {"password"}: the account's dashboard
// login gets this password as a reset would give it (the e-mail counts as verified, every
// session ends); 200 with the account. The password is checked first, so a refused one
// changes nothing.
func (s *Server) setPassword(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Password string `json:"password"`
	}
	if !Decode(w, r, &in) {
		return
	}
	acct, err := s.store.GetAccount(mux.Vars(r)["id"])
	if err == nil {
		err = persistence.CheckPassword("password", in.Password, acct.Email)
	}
	if StoreFailed(w, err) {
		return
	}
	now := time.Now()
	token, err := s.store.IssueReset(acct.ID, now)
	if err == nil {
		acct, err = s.store.UseToken(persistence.TokenReset, token, in.Password, now)
	}
	if StoreFailed(w, err) {
		return
	}
	respond.JSON(w, http.StatusOK, acct)
}
