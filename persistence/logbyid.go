package persistence

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// nsLogID indexes the request log by request id, so GET /v1/generations/{id} reads a few keys
// instead of scanning the account's log (an unknown id would otherwise cost a whole scan).
// It lives in the account's space (accountSpaces): snapshots of an account shard carry it
// with the log. A gateway id (logcodec.go) is indexed as
//
//	logid/<acct>/0x00 <the id's first 8 bytes> <its entry's time / 2^30 ns, 4 bytes>
//
// with an empty value: the entry is the one with that id among the account's entries of
// that window of about a second (a scan of its keys). Every pair the index holds is in its
// key, so two ids sharing their first 8 bytes cost a longer look, never a lost entry, and
// the pairs of old entries are found from the entries' keys (retention deletes them). Any
// other id is indexed as logid/<acct>/<id> holding the entry's time (8 bytes, big-endian
// unix ns): how every id was indexed before.
const nsLogID = "logid/"

// logIDWindowBits is the size of an index window: 2^30 ns, about a second.
const logIDWindowBits = 30

// logIDKey is an entry's index key (for a gateway id its full key, for any other id the
// key whose value is the time).
func logIDKey(accountID, rid string, nanos int64) []byte {
	if !isGatewayRID(rid) {
		return textLogIDKey(accountID, rid)
	}
	k := appendRID(dbKey(nsLogID, accountID, "/"), rid)
	return binary.BigEndian.AppendUint32(k[:len(k)-4], uint32(nanos>>logIDWindowBits))
}

// textLogIDKey is the index key of an id that is not a gateway one, and of any entry written
// before the compact layout.
func textLogIDKey(accountID, rid string) []byte { return dbKey(nsLogID, accountID, "/", rid) }

// putLogEntry writes a checked entry, the dictionary pairs it needs and its request-id
// index into b. An id logged twice (a retried write) points at the entry written last.
func (enc *logEncoder) putLogEntry(b *pebble.Batch, e *LogEntry) error {
	codes := [5]int64{-1, -1, -1, -1, -1}
	for i, s := range logStrings(e) {
		if fixedLabel(s) {
			continue
		}
		code, ok, err := enc.code(b, e.AccountID, s)
		if err != nil {
			return err
		}
		if ok {
			codes[i] = int64(code)
		}
	}
	var buf [96]byte
	if err := b.Set(logKey(e.AccountID, e.Time, e.RequestID), appendLogValue(buf[:0], e, &codes), nil); err != nil {
		return err
	}
	if isGatewayRID(e.RequestID) {
		return b.Set(logIDKey(e.AccountID, e.RequestID, e.Time), nil, nil)
	}
	return b.Set(textLogIDKey(e.AccountID, e.RequestID), binary.BigEndian.AppendUint64(buf[:0], uint64(e.Time)), nil)
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
		return LogEntry{}, notFound("log entry", rid)
	}
	var k []byte
	err := ErrNotFound
	if isGatewayRID(rid) {
		k, err = s.gatewayLogKey(accountID, rid)
	}
	if errors.Is(err, ErrNotFound) {
		// Another id, or an entry written before the compact layout: the index holds the
		// time, and the entry's key the id's text.
		var nanos int64
		nanos, err = s.logEntryTime(textLogIDKey(accountID, rid))
		k = textLogKey(accountID, nanos, rid)
	}
	if err != nil {
		return LogEntry{}, logEntryErr(accountID, rid, err)
	}
	val, closer, err := s.db.Get(k)
	if err != nil {
		return LogEntry{}, logEntryErr(accountID, rid, mapNotFound(err))
	}
	defer closer.Close()
	e, err := s.logDecoder(accountID).decodeLogPair(k, val)
	if err != nil {
		return LogEntry{}, logEntryErr(accountID, rid, err)
	}
	return e, nil
}

// gatewayLogKey finds the key of the latest entry with the gateway id rid: the index names
// the windows its entries may be in, latest last, and each window's keys are looked through.
func (s *Store) gatewayLogKey(accountID, rid string) ([]byte, error) {
	idPrefix := logIDKey(accountID, rid, 0)
	idPrefix = idPrefix[:len(idPrefix)-4]
	var windows []int64
	err := s.scanPrefix(idPrefix, func(k, _ []byte) (bool, error) {
		if len(k) == len(idPrefix)+4 {
			windows = append(windows, int64(binary.BigEndian.Uint32(k[len(idPrefix):])))
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	want := appendRID(nil, rid)
	prefixLen := len(nsLog) + len(accountID) + 1
	for i := len(windows) - 1; i >= 0; i-- {
		var found []byte
		lower := logTimeKey(accountID, windows[i]<<logIDWindowBits)
		upper := logTimeKey(accountID, (windows[i]+1)<<logIDWindowBits)
		err := s.scan(lower, upper, func(k, _ []byte) (bool, error) {
			if len(k) == prefixLen+8+len(want) && string(k[prefixLen+8:]) == string(want) {
				found = append(found[:0], k...) // the last one is the latest
			}
			return true, nil
		})
		if err != nil || found != nil {
			return found, err
		}
	}
	return nil, ErrNotFound
}

// logEntryTime reads a text index pair: the time of the entry it points at.
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

func logEntryErr(accountID, rid string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return notFound("log entry", rid)
	}
	return fmt.Errorf("log entry of %s: %w", accountID, err)
}
