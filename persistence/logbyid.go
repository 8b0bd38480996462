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
// A gateway id is kept as 0x00 and its 12 bytes (logcodec.go), any other id as its text,
// which is also how every id was kept before.
const nsLogID = "logid/"

// logIDKey is logid/<acct>/<rid's index form>.
func logIDKey(accountID, rid string) []byte {
	k := dbKey(nsLogID, accountID, "/")
	if isGatewayRID(rid) {
		return appendRID(k, rid)
	}
	return append(k, rid...)
}

// textLogIDKey is the index key of an entry written before the compact request id.
func textLogIDKey(accountID, rid string) []byte { return dbKey(nsLogID, accountID, "/", rid) }

// putLogEntry writes a checked entry and its request-id index into b. An id logged twice
// (a retried write) points at the entry written last.
func putLogEntry(b *pebble.Batch, e *LogEntry) error {
	var buf [96]byte
	if err := b.Set(logKey(e.AccountID, e.Time, e.RequestID), appendLogValue(buf[:0], e), nil); err != nil {
		return err
	}
	return b.Set(logIDKey(e.AccountID, e.RequestID), binary.BigEndian.AppendUint64(buf[:0], uint64(e.Time)), nil)
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
	nanos, err := s.logEntryTime(logIDKey(accountID, rid))
	entryKey := logKey
	if errors.Is(err, ErrNotFound) && isGatewayRID(rid) {
		// Written before the compact id: the index and the entry hold the id's text.
		nanos, err = s.logEntryTime(textLogIDKey(accountID, rid))
		entryKey = textLogKey
	}
	if err != nil {
		return LogEntry{}, logEntryErr(accountID, err)
	}
	k := entryKey(accountID, nanos, rid)
	val, closer, err := s.db.Get(k)
	if err != nil {
		return LogEntry{}, logEntryErr(accountID, mapNotFound(err))
	}
	defer closer.Close()
	e, err := decodeLogPair(k, val, accountID, len(nsLog)+len(accountID)+1)
	if err != nil {
		return LogEntry{}, logEntryErr(accountID, err)
	}
	return e, nil
}

// logEntryTime reads an index pair: the time of the entry it points at.
func (s *Store) logEntryTime(idKey []byte) (int64, error) {
	val, closer, err := s.db.Get(idKey)
	if err != nil {
		return 0, mapNotFound(err)
	}
	defer closer.Close()
	if len(val) != 8 {
		return 0, fmt.Errorf("index %q: value of %d bytes", idKey, len(val))
	}
	return int64(binary.BigEndian.Uint64(val)), nil
}

func logEntryErr(accountID string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return ErrNotFound
	}
	return fmt.Errorf("log entry of %s: %w", accountID, err)
}
