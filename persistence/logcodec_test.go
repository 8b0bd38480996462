package persistence

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

// Every entry the store takes comes back as it was, whatever form its id and labels take.
func TestLogLayoutRoundTrips(t *testing.T) {
	big := entry("acct_a", "req_0123456789abcdef0123456789", 0)
	big.RequestID = "req_ffffffffffffffffffffffff"
	big.InputTokens, big.Cost, big.ListCost, big.Seq = math.MaxInt64, math.MaxInt64, 0, math.MaxUint64
	zero := LogEntry{RequestID: "req_000000000000000000000000", Time: 1, AccountID: "acct_a"}
	labels := entry("acct_a", "req_aaaaaaaaaaaaaaaaaaaaaaaa", time.Second)
	labels.ClientFormat, labels.UpstreamFormat, labels.Route = "videos", "gemini", "chat" // a route named like a format
	costIsList := entry("acct_a", "req_bbbbbbbbbbbbbbbbbbbbbbbb", 2*time.Second)
	costIsList.Cost, costIsList.ListCost, costIsList.Counted, costIsList.AllowanceUnits = 5e9, 5e9, true, 1500
	zeros := entry("acct_a", "req_cccccccccccccccccccccccc", 3*time.Second)
	zeros.Cost, zeros.ListCost = 9_000_000_000_000_000_000, 1_000_000_000_000_000
	for _, tc := range []struct {
		name    string
		e       LogEntry
		compact bool // the id is kept as 12 bytes
	}{
		{"gateway id, largest counters", big, true},
		{"every field zero", zero, true},
		{"format labels as codes", labels, true},
		{"cost equal to the list cost", costIsList, true},
		{"amounts of more trailing zeros than the exponent takes", zeros, true},
		{"id in upper case hex: text", entry("acct_a", "req_0123456789ABCDEF01234567", 0), false},
		{"id one digit short: text", entry("acct_a", "req_0123456789abcdef0123456", 0), false},
		{"id of another shape", entry("acct_a", "client/id-1", 0), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openStore(t)
			if err := s.AppendLog([]LogEntry{tc.e}); err != nil {
				t.Fatal(err)
			}
			if k := logKey(tc.e.AccountID, tc.e.Time, tc.e.RequestID); (k[len(nsLog)+len(tc.e.AccountID)+1+8] == ridCompact) != tc.compact {
				t.Errorf("key %q: compact %v, want %v", k, !tc.compact, tc.compact)
			}
			got, err := s.ListLog(tc.e.AccountID, time.Time{}, time.Time{}, 0)
			if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], tc.e) {
				t.Fatalf("ListLog = %+v, %v\nwant %+v", got, err, tc.e)
			}
			byID, err := s.LogEntry(tc.e.AccountID, tc.e.RequestID)
			if err != nil || !reflect.DeepEqual(byID, tc.e) {
				t.Fatalf("LogEntry = %+v, %v\nwant %+v", byID, err, tc.e)
			}
		})
	}
}

// A value cut short, with bytes left over or with an unknown label code is an error, never
// an entry with made-up fields.
func TestMalformedLogValuesAreErrors(t *testing.T) {
	s, _ := openStore(t)
	e := entry("acct_a", "req_0123456789abcdef01234567", 0)
	good := appendLogValue(nil, &e, &[5]int64{-1, -1, -1, -1, -1})
	for _, tc := range []struct {
		name string
		v    []byte
	}{
		{"cut short", good[:len(good)-3]},
		{"trailing bytes", append(append([]byte(nil), good...), 0)},
		{"only the version", []byte{logValueV1}},
		{"unknown label code", append([]byte{logValueV1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 2*byte(len(logLabels))+1, 0, 0, 0, 0)},
		{"dictionary code the account does not have", append(good[:len(good)-len("openai")-len("anthropic")-2:len(good)-len("openai")-len("anthropic")-2], 2*logLabelCodes+1, 2*logLabelCodes+1)},
		{"counter beyond int64", []byte{logValueV1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got LogEntry
			if err := decodeLogValue(tc.v, &got, &logDecoder{s: s, account: "acct_a"}); !errors.Is(err, errLogValue) {
				t.Errorf("decode = %v (%+v), want errLogValue", err, got)
			}
		})
	}
	var got LogEntry
	if err := decodeLogValue(good, &got, nil); err != nil {
		t.Fatalf("the unaltered value: %v", err)
	}
}
