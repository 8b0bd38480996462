package persistence

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// nsLogID indexes the request log by request id: logid/<acct>/<rid> holds the entry's time
// (8 bytes, big-endian unix ns), so GET /v1/generations/{id} reads two keys instead of
// scanning the account's log (an unknown id would otherwise cost a whole scan). It lives in
// the account's space (accountSpaces): snapshots of an account shard carry it with the log.
const nsLogID = "logid/"

// logIDKey is logid/<acct>/<rid>.
func logIDKey(accountID, rid string) []byte { return dbKey(nsLogID, accountID, "/", rid) }

// putLogEntry writes a checked entry and its request-id index into b. An id logged twice
// (a retried write) points at the entry written last.
func putLogEntry(b *pebble.Batch, e *LogEntry) error {
	if err := putMsgpack(b, logKey(e.AccountID, e.Time, e.RequestID), e); err != nil {
		return err
	}
	return b.Set(logIDKey(e.AccountID, e.RequestID), binary.BigEndian.AppendUint64(nil, uint64(e.Time)), nil)
}

// LogEntry returns the account's request-log entry with request id rid. An id the account
// never logged, one of another account and a malformed one are all ErrNotFound: a caller
// learns nothing about ids that are not its own. Entries written before the index existed
// are not found.
func (s *Store) LogEntry(accountID, rid string) (LogEntry, error) {
	if err := validateLogAccount(accountID); err != nil {
		return LogEntry{}, fmt.Errorf("log entry: %w", err)
	}
	if rid == "" || len(rid) > maxLogIDLen || !printableASCII(rid) {
		return LogEntry{}, ErrNotFound
	}
	val, closer, err := s.db.Get(logIDKey(accountID, rid))
	if err != nil {
		return LogEntry{}, logEntryErr(accountID, mapNotFound(err))
	}
	if len(val) != 8 {
		closer.Close()
		return LogEntry{}, fmt.Errorf("log entry %s of %s: index value of %d bytes", rid, accountID, len(val))
	}
	nanos := int64(binary.BigEndian.Uint64(val))
	closer.Close()
	var e LogEntry
	if err := s.getMsgpack(logKey(accountID, nanos, rid), &e); err != nil {
		return LogEntry{}, logEntryErr(accountID, err)
	}
	return e, nil
}

func logEntryErr(accountID string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return ErrNotFound
	}
	return fmt.Errorf("log entry of %s: %w", accountID, err)
}
