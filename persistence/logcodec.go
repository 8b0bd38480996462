package persistence

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"

	"github.com/vmihailenco/msgpack/v5"
)

// The request log's on-disk layout (at most 64 bytes a request after compaction,
// docs/decisions.md "Request log layout"). A request costs its entry and its by-id index
// pair; what repeats from entry to entry is left out or made small:
//
//   - the key log/<acct>/<time><rid> carries the account, the time and the request id, so
//     the value does not repeat them; a gateway id ("req_" and 24 lowercase hex digits) is
//     kept as 0x00 and its 12 bytes, any other id as '/' and its text (the old layout's);
//   - the value is a version byte (logValueV1) and varints (amounts with their trailing
//     decimal zeros as an exponent), the strings last, a format of the fixed table
//     logLabels as a one-byte code;
//   - values of the old layout (a msgpack map with string field names, which always starts
//     with a byte >= 0x80) still decode: stores written before keep their log.

// logValueV1 starts a value of the varint layout; a msgpack map never starts with it.
const logValueV1 = 0x01

// ridCompact and ridText are the byte after an entry key's time, and the first of a by-id
// index key's id: a gateway id's 12 bytes follow, or another id's text.
const (
	ridCompact = 0x00
	ridText    = '/'
)

const gatewayRIDPrefix = "req_"

// gatewayRIDLen is "req_" and 24 hex digits (transport/api/requestid.go).
const gatewayRIDLen = len(gatewayRIDPrefix) + 24

// appendRID appends rid's key form: compact for a gateway id, text for any other.
func appendRID(k []byte, rid string) []byte {
	if isGatewayRID(rid) {
		k, _ = hex.AppendDecode(append(k, ridCompact), []byte(rid[len(gatewayRIDPrefix):])) // hex: checked
		return k
	}
	k = append(k, ridText)
	return append(k, rid...)
}

// isGatewayRID reports whether rid has the gateway's form, lowercase hex (which is what
// decoding its compact form gives back).
func isGatewayRID(rid string) bool {
	if len(rid) != gatewayRIDLen || rid[:len(gatewayRIDPrefix)] != gatewayRIDPrefix {
		return false
	}
	for i := len(gatewayRIDPrefix); i < len(rid); i++ {
		if c := rid[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// parseRID reads a request id's key form.
func parseRID(b []byte) (string, error) {
	switch {
	case len(b) == 13 && b[0] == ridCompact:
		return gatewayRIDPrefix + hex.EncodeToString(b[1:]), nil
	case len(b) > 1 && b[0] == ridText:
		return string(b[1:]), nil
	}
	return "", fmt.Errorf("malformed request id %q in a log key", b)
}

// parseLogKey reads the time and request id of an entry key whose account prefix
// (log/<acct>/) is prefixLen bytes long.
func parseLogKey(k []byte, prefixLen int) (nanos int64, rid string, err error) {
	if len(k) < prefixLen+8+2 {
		return 0, "", fmt.Errorf("log key %q too short", k)
	}
	nanos = int64(binary.BigEndian.Uint64(k[prefixLen:]))
	rid, err = parseRID(k[prefixLen+8:])
	return nanos, rid, err
}

// logLabels are the strings stored as a fixed code: the formats. Append only: a code on disk
// is an index here. Codes from logLabelCodes on are the account's dictionary's (logdict.go).
var logLabels = [...]string{"chat", "messages", "responses", "gemini", "embeddings", "images", "videos"}

const logLabelCodes = 16

// logStrings are an entry's strings in the order of its value.
func logStrings(e *LogEntry) [5]string {
	return [...]string{e.KeyID, e.Model, e.Route, e.ClientFormat, e.UpstreamFormat}
}

// fixedLabel reports whether s is written without the dictionary: empty or in logLabels.
func fixedLabel(s string) bool {
	for _, l := range logLabels {
		if s == l {
			return true
		}
	}
	return s == ""
}

// The flags of a value.
const (
	flagStream = 1 << iota
	flagCounted
	flagCostIsList // Cost == ListCost: only one of them is stored
	// flagUpstreamCost: UpstreamCost differs from ListCost and is stored after Cost. Without
	// it (the common case, a route priced as its model, and every value written before the
	// field) UpstreamCost is ListCost, so entries that have none cost no byte more.
	flagUpstreamCost
)

// appendLogValue appends e's value in the varint layout (the key holds the rest).
// codes are the dictionary codes of e's strings (KeyID, Model, Route, ClientFormat,
// UpstreamFormat; -1: none).
func appendLogValue(v []byte, e *LogEntry, codes *[5]int64) []byte {
	var flags uint64
	if e.Stream {
		flags |= flagStream
	}
	if e.Counted {
		flags |= flagCounted
	}
	if e.Cost == e.ListCost {
		flags |= flagCostIsList
	}
	if e.UpstreamCost != e.ListCost {
		flags |= flagUpstreamCost
	}
	v = append(v, logValueV1)
	v = binary.AppendUvarint(v, flags)
	v = binary.AppendUvarint(v, uint64(e.Status))
	v = binary.AppendUvarint(v, uint64(e.Attempts))
	for _, n := range [...]int64{e.InputTokens, e.CachedTokens, e.CacheWriteTokens, e.OutputTokens,
		e.ReasoningTokens, e.LatencyMs, e.TTFTMs, e.AllowanceUnits} {
		v = binary.AppendUvarint(v, uint64(n))
	}
	v = appendDecimal(v, e.ListCost)
	if flags&flagCostIsList == 0 {
		v = appendDecimal(v, e.Cost)
	}
	if flags&flagUpstreamCost != 0 {
		v = appendDecimal(v, e.UpstreamCost)
	}
	v = binary.AppendUvarint(v, e.Seq)
	for i, s := range logStrings(e) {
		if codes[i] >= 0 {
			v = binary.AppendUvarint(v, uint64(2*(logLabelCodes+codes[i])+1))
		} else {
			v = appendLabel(v, s)
		}
	}
	return v
}

// maxDecimalExp is the largest power of ten appendDecimal takes out; the code above it says
// the plain value follows.
const maxDecimalExp = 14

// appendDecimal appends a non-negative amount as uvarint(m<<4 | k) with n = m * 10^k:
// pico-USD amounts are token counts times prices with few significant digits, so their
// trailing zeros cost four bits instead of bytes. An m too large to shift is written as
// the code maxDecimalExp+1 and n.
func appendDecimal(v []byte, n int64) []byte {
	m, k := uint64(n), uint64(0)
	for m != 0 && m%10 == 0 && k < maxDecimalExp {
		m, k = m/10, k+1
	}
	if m > math.MaxUint64>>4 {
		return binary.AppendUvarint(binary.AppendUvarint(v, maxDecimalExp+1), uint64(n))
	}
	return binary.AppendUvarint(v, m<<4|k)
}

// appendLabel appends a string: uvarint 2*len and its bytes, or uvarint 2*code+1 for a
// string of logLabels (a dictionary code c is written as 2*(logLabelCodes+c)+1).
func appendLabel(v []byte, s string) []byte {
	for i, l := range logLabels {
		if s == l {
			return binary.AppendUvarint(v, uint64(2*i+1))
		}
	}
	v = binary.AppendUvarint(v, uint64(2*len(s)))
	return append(v, s...)
}

// errLogValue is a value of the varint layout cut short or with a bad field.
var errLogValue = errors.New("malformed log value")

// logValueReader reads a value of the varint layout.
type logValueReader struct {
	b   []byte
	dec *logDecoder // nil: no dictionary
	err error
}

func (r *logValueReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	n, size := binary.Uvarint(r.b)
	if size <= 0 {
		r.err = errLogValue
		return 0
	}
	r.b = r.b[size:]
	return n
}

// int is a non-negative int64 (every counter of an entry).
func (r *logValueReader) int() int64 {
	n := r.uvarint()
	if n > 1<<63-1 {
		r.err = errLogValue
	}
	return int64(n)
}

// decimal reads appendDecimal's amount.
func (r *logValueReader) decimal() int64 {
	c := r.uvarint()
	k := c & 15
	if k > maxDecimalExp {
		return r.int()
	}
	n := c >> 4
	for ; k > 0; k-- {
		if n > math.MaxInt64/10 {
			r.err = errLogValue
			return 0
		}
		n *= 10
	}
	if n > math.MaxInt64 {
		r.err = errLogValue
	}
	return int64(n)
}

func (r *logValueReader) label() string {
	n := r.uvarint()
	if n&1 == 1 {
		switch c := n >> 1; {
		case c < uint64(len(logLabels)):
			return logLabels[c]
		case c >= logLabelCodes && r.dec != nil:
			if s, ok := r.dec.str(c - logLabelCodes); ok {
				return s
			}
		}
		r.err = errLogValue
		return ""
	}
	if n>>1 > uint64(len(r.b)) {
		r.err = errLogValue
		return ""
	}
	s := string(r.b[:n>>1])
	r.b = r.b[n>>1:]
	return s
}

// decodeLogValue fills e from a value of either layout; a value of the varint layout
// leaves RequestID, Time and AccountID (the key's) as they are.
func decodeLogValue(val []byte, e *LogEntry, dec *logDecoder) error {
	if len(val) == 0 || val[0] != logValueV1 {
		return decodeLogMap(val, e)
	}
	r := logValueReader{b: val[1:], dec: dec}
	flags := r.uvarint()
	e.Stream, e.Counted = flags&flagStream != 0, flags&flagCounted != 0
	e.Status, e.Attempts = int(r.int()), int(r.int())
	for _, p := range [...]*int64{&e.InputTokens, &e.CachedTokens, &e.CacheWriteTokens, &e.OutputTokens,
		&e.ReasoningTokens, &e.LatencyMs, &e.TTFTMs, &e.AllowanceUnits} {
		*p = r.int()
	}
	e.ListCost = r.decimal()
	e.Cost = e.ListCost
	if flags&flagCostIsList == 0 {
		e.Cost = r.decimal()
	}
	e.UpstreamCost = e.ListCost
	if flags&flagUpstreamCost != 0 {
		e.UpstreamCost = r.decimal()
	}
	e.Seq = r.uvarint()
	for _, p := range [...]*string{&e.KeyID, &e.Model, &e.Route, &e.ClientFormat, &e.UpstreamFormat} {
		*p = r.label()
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errLogValue
	}
	return r.err
}

// decodeLogMap decodes a value of the layout before (a msgpack map with field names), which
// has no upstream cost: it reads as the list cost.
func decodeLogMap(val []byte, e *LogEntry) error {
	e.UpstreamCost = -1 // not in the map: no upstream cost of its own
	if err := msgpack.Unmarshal(val, e); err != nil {
		return err
	}
	if e.UpstreamCost < 0 {
		e.UpstreamCost = e.ListCost
	}
	return nil
}

// decodeLogPair decodes an entry of dec's account from its key and value.
func (dec *logDecoder) decodeLogPair(k, v []byte) (LogEntry, error) {
	var e LogEntry
	if err := decodeLogValue(v, &e, dec); err != nil {
		return LogEntry{}, fmt.Errorf("decode %q: %w", k, err)
	}
	if len(v) > 0 && v[0] == logValueV1 {
		nanos, rid, err := parseLogKey(k, len(nsLog)+len(dec.account)+1)
		if err != nil {
			return LogEntry{}, err
		}
		e.Time, e.RequestID, e.AccountID = nanos, rid, dec.account
	}
	return e, nil
}
