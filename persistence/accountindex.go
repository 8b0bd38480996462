package persistence

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// Two indexes make accounts listable in creation order, a page at a time, and findable by
// e-mail:
//
//	acctorder/<8-byte big-endian nanos>/<id>        → nothing
//	acctemail/<lower-cased e-mail> 0x00 <id>        → the account's order suffix (<nanos>/<id>)
//
// An e-mail cannot hold a control character, so the 0x00 separator never occurs inside one
// and one address is never a prefix of another's entries. Stores written before the indexes
// existed get them at Open (indexAccounts), once.
const (
	nsAcctOrder = "acctorder/"
	nsAcctEmail = "acctemail/"
	nsSchema    = "schema/"
	// MaxAccountPage is the most accounts one page of ListAccountsPage holds.
	MaxAccountPage = 1000
)

// accountsIndexed marks a store whose accounts all have their index entries.
var accountsIndexed = []byte(nsSchema + "accounts-indexed")

// EmailTakenError is CreateAccount's refusal of an e-mail another account has already
// (compared ignoring case). It matches ErrConflict.
type EmailTakenError struct {
	Email     string // as the caller gave it
	AccountID string // the account that has it
}

func (e *EmailTakenError) Error() string {
	return fmt.Sprintf("the e-mail %s is taken: account %s has it (e-mails are compared ignoring case)", e.Email, e.AccountID)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *EmailTakenError) Is(target error) bool { return target == ErrConflict }

// AccountQuery selects a page of accounts.
type AccountQuery struct {
	Email  string // "" lists every account; else only those with this e-mail, ignoring case
	Cursor string // the Next of the page before; "" starts at the oldest account
	Limit  int    // accounts per page, 1 to MaxAccountPage
}

// AccountPage is one page of accounts, oldest first.
type AccountPage struct {
	Accounts []Account // never nil
	Next     string    // the cursor of the following page; "" on the last one
}

// queryError is a refused AccountQuery: its message is only what to fix. It matches
// ErrInvalid.
type queryError string

func (e queryError) Error() string        { return string(e) }
func (e queryError) Is(target error) bool { return target == ErrInvalid }

// foldEmail is the form e-mails are compared in.
func foldEmail(email string) string { return strings.ToLower(email) }

// orderSuffix is <8-byte big-endian nanos>/<id>: what follows nsAcctOrder in an account's
// order key, and what a cursor encodes.
func orderSuffix(nanos int64, id string) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 8+1+len(id)), uint64(nanos))
	return append(append(k, '/'), id...)
}

func emailPrefix(email string) []byte {
	return append(dbKey(nsAcctEmail, foldEmail(email)), 0)
}

// emailHolder returns the id of an account with this e-mail, or "".
func (s *Store) emailHolder(email string) (string, error) { return emailHolderIn(s.db, email) }

// emailHolderIn is emailHolder through r.
func emailHolderIn(r pebble.Reader, email string) (string, error) {
	var id string
	prefix := emailPrefix(email)
	err := scanPrefixIn(r, prefix, func(k, _ []byte) (bool, error) {
		id = string(k[len(prefix):])
		return false, nil
	})
	return id, err
}

// indexAccount adds an account's index entries to a batch.
func indexAccount(b *pebble.Batch, a Account, nanos int64) error {
	suffix := orderSuffix(nanos, a.ID)
	if err := b.Set(append([]byte(nsAcctOrder), suffix...), nil, nil); err != nil {
		return err
	}
	return b.Set(append(emailPrefix(a.Email), a.ID...), suffix, nil)
}

// indexAccounts gives the accounts of a store written before the indexes existed their
// entries, in one synced batch. Their creation order is their CreatedAt second, ties broken
// by id, as ListAccounts sorts them. Accounts that share an e-mail (allowed then) are all
// indexed: lookups find every one, and CreateAccount refuses that e-mail from now on.
func (s *Store) indexAccounts() error {
	if done, err := s.has(accountsIndexed); done || err != nil {
		return err
	}
	accts, err := s.ListAccounts()
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	for _, a := range accts {
		if err := indexAccount(b, a, a.CreatedAt*1e9); err != nil {
			b.Close()
			return err
		}
	}
	if err := b.Set(accountsIndexed, nil, nil); err != nil {
		b.Close()
		return err
	}
	return s.commit(b)
}

// ListAccountsPage returns one page of accounts in creation order: every account, or those
// whose e-mail equals q.Email ignoring case (one, or several created before e-mails were
// unique).
func (s *Store) ListAccountsPage(q AccountQuery) (AccountPage, error) {
	if q.Limit < 1 || q.Limit > MaxAccountPage {
		return AccountPage{}, queryError(fmt.Sprintf("limit must be 1 to %d, not %d", MaxAccountPage, q.Limit))
	}
	after, err := decodeCursor(q.Cursor)
	if err != nil {
		return AccountPage{}, err
	}
	var suffixes [][]byte // order suffixes after the cursor, in order, at most Limit+1
	if q.Email == "" {
		lower := append([]byte(nsAcctOrder), after...)
		if after != nil {
			lower = append(lower, 0) // the first key after the cursor's
		}
		err = s.scan(lower, prefixUpper([]byte(nsAcctOrder)), func(k, _ []byte) (bool, error) {
			suffixes = append(suffixes, bytes.Clone(k[len(nsAcctOrder):]))
			return len(suffixes) <= q.Limit, nil
		})
	} else {
		err = s.scanPrefix(emailPrefix(q.Email), func(_, v []byte) (bool, error) {
			if bytes.Compare(v, after) > 0 {
				suffixes = append(suffixes, bytes.Clone(v))
			}
			return true, nil
		})
		slices.SortFunc(suffixes, bytes.Compare)
	}
	if err != nil {
		return AccountPage{}, fmt.Errorf("list accounts: %w", err)
	}
	page := AccountPage{Accounts: []Account{}}
	if len(suffixes) > q.Limit {
		suffixes = suffixes[:q.Limit]
		page.Next = base64.RawURLEncoding.EncodeToString(suffixes[q.Limit-1])
	}
	for _, suf := range suffixes {
		a, err := s.GetAccount(string(suf[9:]))
		if err != nil {
			return AccountPage{}, fmt.Errorf("list accounts: the index names a missing account: %w", err)
		}
		page.Accounts = append(page.Accounts, a)
	}
	return page, nil
}

// decodeCursor returns the order suffix a cursor encodes (nil for "").
func decodeCursor(cursor string) ([]byte, error) {
	if cursor == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) < 10 || b[8] != '/' || !strings.HasPrefix(string(b[9:]), accountIDPrefix) || !printableASCII(string(b[9:])) {
		return nil, queryError(fmt.Sprintf("cursor %q is not one a page of accounts gave out; start again without it", cursor))
	}
	return b, nil
}

// AccountsSharingEmails returns the ids of accounts that share an e-mail, one group per
// e-mail: only stores written before e-mails were unique have any.
func (s *Store) AccountsSharingEmails() ([][]string, error) {
	var groups [][]string
	var last []byte // the e-mail part of the previous entry
	err := s.scanPrefix([]byte(nsAcctEmail), func(k, _ []byte) (bool, error) {
		sep := bytes.IndexByte(k, 0)
		if sep < 0 {
			return false, fmt.Errorf("malformed e-mail index key %q", k)
		}
		id := string(k[sep+1:])
		if last != nil && bytes.Equal(k[:sep], last) {
			groups[len(groups)-1] = append(groups[len(groups)-1], id)
			return true, nil
		}
		last = bytes.Clone(k[:sep])
		groups = append(groups, []string{id})
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("accounts sharing an e-mail: %w", err)
	}
	return slices.DeleteFunc(groups, func(g []string) bool { return len(g) < 2 }), nil
}
