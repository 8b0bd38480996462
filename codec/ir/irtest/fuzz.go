package irtest

import (
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

// SeedAnswers adds the seeds of a fuzz target over RandomEvents (seed, extra text).
func SeedAnswers(f *testing.F) {
	for seed := int64(0); seed < 64; seed++ {
		f.Add(seed, "x")
	}
	f.Add(int64(7), "\xff\u2028<&>\x00")
}

// SameAsReference fails t when the frames newEnc writes for evs do not decode to the values
// of those newRef writes (normalize, if set, blanks what the encoders mint).
func SameAsReference(t testing.TB, evs []ir.Event, newEnc, newRef func(ir.Frames) ir.StreamEncoder, normalize func(any) any) {
	t.Helper()
	if d := SameValues(Encode(newEnc, evs), Encode(newRef, evs), normalize); d != "" {
		t.Fatal(d)
	}
}

// Decoding is what a StreamDecoder's Decode returned for one input.
type Decoding struct {
	Events []ir.Event
	Done   bool
	Err    error
}

// SameDecoding fails t when two decoders read input differently (the events, done, whether
// there was an error), and reports whether the stream is over.
func SameDecoding(t testing.TB, input []byte, got, want Decoding) (over bool) {
	t.Helper()
	if (got.Err != nil) != (want.Err != nil) || got.Done != want.Done {
		t.Fatalf("%s: done %v err %v, want done %v err %v", input, got.Done, got.Err, want.Done, want.Err)
	}
	if (len(got.Events) > 0 || len(want.Events) > 0) && !reflect.DeepEqual(got.Events, want.Events) {
		t.Fatalf("%s:\n got %+v\nwant %+v", input, got.Events, want.Events)
	}
	return got.Err != nil || got.Done
}
