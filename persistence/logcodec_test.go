package persistence

import (
	"bytes"
	"encoding/hex"
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
	upstream := entry("acct_a", "req_dddddddddddddddddddddddd", 4*time.Second)
	upstream.Cost, upstream.ListCost, upstream.UpstreamCost = 0, 9_000_000_000, 4_500_000_000
	upstreamIsList := upstream
	upstreamIsList.RequestID, upstreamIsList.UpstreamCost = "req_eeeeeeeeeeeeeeeeeeeeeeee", upstream.ListCost
	freeRoute := upstream
	freeRoute.RequestID, freeRoute.UpstreamCost = "req_ffffffffffffffffffffff00", 0
	dearRoute := upstream
	dearRoute.RequestID, dearRoute.UpstreamCost = "req_ffffffffffffffffffffff01", math.MaxInt64
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
		{"an upstream cost of its own", upstream, true},
		{"an upstream cost equal to the list cost", upstreamIsList, true},
		{"a free route: upstream cost 0", freeRoute, true},
		{"the largest upstream cost", dearRoute, true},
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

// v1Values are values of the varint layout written before the upstream cost existed
// (persistence/logcodec.go at 341ff5a), of the entry v1Entry with Cost 7.5e9 and with Cost
// equal to ListCost.
var v1Values = []string{
	"0103c80101b009ac0228fa013c880ede02dc0b9901b809070c6b65795f76310c636861742d6110636861742d612d310301",
	"0107c80101b009ac0228fa013c880ede02dc0b9901070c6b65795f76310c636861742d6110636861742d612d310301",
}

func v1Entry(cost int64) LogEntry {
	return LogEntry{KeyID: "key_v1", Model: "chat-a", Route: "chat-a-1", Status: 200, InputTokens: 1200, CachedTokens: 300,
		CacheWriteTokens: 40, OutputTokens: 250, ReasoningTokens: 60, LatencyMs: 1800, TTFTMs: 350, Cost: cost,
		ListCost: 9_000_000_000, UpstreamCost: 9_000_000_000, ClientFormat: "messages", UpstreamFormat: "chat", Attempts: 1,
		Stream: true, Counted: true, AllowanceUnits: 1500, Seq: 7}
}

// A value written before the upstream cost existed reads it as the list cost,
// and an entry whose upstream cost is its list cost (a route priced as its model, the common
// case) is written in exactly the bytes it was before: no entry grew. One of its own costs
// the amount's bytes more.
func TestUpstreamCostCostsNothingWhenItIsTheListCost(t *testing.T) {
	for i, cost := range []int64{7_500_000_000, 9_000_000_000} {
		old, _ := hex.DecodeString(v1Values[i])
		var got LogEntry
		if err := decodeLogValue(old, &got, nil); err != nil || !reflect.DeepEqual(got, v1Entry(cost)) {
			t.Fatalf("value %d: %+v, %v\nwant %+v", i, got, err, v1Entry(cost))
		}
		e := v1Entry(cost)
		if now := appendLogValue(nil, &e, &[5]int64{-1, -1, -1, -1, -1}); !bytes.Equal(now, old) {
			t.Fatalf("value %d written as %x, before %x", i, now, old)
		}
		e.UpstreamCost = 5_000_000_000 // 5 × 10^9: one byte of varint
		if own := appendLogValue(nil, &e, &[5]int64{-1, -1, -1, -1, -1}); len(own) != len(old)+1 {
			t.Fatalf("value %d with an upstream cost of its own: %d bytes, want %d", i, len(own), len(old)+1)
		}
	}
}
