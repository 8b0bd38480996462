package persistence

import "fmt"

// Error is a refusal a caller can show its user as it is: Msg says what is missing or what
// to fix, with no package prefix or Go words. Kind (ErrNotFound, ErrInvalid or ErrConflict)
// is what errors.Is matches; context wrapped around it for the logs ("persistence: create key:
// …") leaves it findable with errors.As.
type Error struct {
	Kind  error
	What  string // a not-found record's kind: account, key, task
	ID    string // a not-found record's id
	Field string // the field an invalid value is in ("" when none names it)
	Msg   string
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Kind }

func invalidf(field, format string, args ...any) error {
	return &Error{Kind: ErrInvalid, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func conflictf(field, format string, args ...any) error {
	return &Error{Kind: ErrConflict, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// notFound is the typed not-found of one record.
func notFound(what, id string) error {
	return &Error{Kind: ErrNotFound, What: what, ID: id, Msg: fmt.Sprintf("no %s %q", what, id)}
}
