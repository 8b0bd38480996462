package load

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

func TestHistogramExactPercentiles(t *testing.T) {
	h := NewHistogram()
	// 1..1000 in a shuffled order: every value below 2048 has its own bucket, so the
	// nearest-rank percentiles are exact.
	vals := rand.New(rand.NewPCG(1, 2)).Perm(1000)
	for _, v := range vals {
		h.Record(int64(v + 1))
	}
	for _, c := range []struct {
		q    float64
		want int64
	}{{0, 1}, {0.001, 1}, {0.5, 500}, {0.9, 900}, {0.99, 990}, {0.999, 999}, {1, 1000}, {0.5005, 501}} {
		if got := h.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %d, want %d", c.q, got, c.want)
		}
	}
	if h.Count() != 1000 || h.Min() != 1 || h.Max() != 1000 || h.Mean() != 500.5 {
		t.Errorf("count %d min %d max %d mean %v", h.Count(), h.Min(), h.Max(), h.Mean())
	}
}

func TestHistogramSkewedData(t *testing.T) {
	h := NewHistogram()
	// 990 fast answers and 10 slow ones: p99 is the last fast one, p99.9 a slow one.
	for range 990 {
		h.Record(100)
	}
	for i := range 10 {
		h.Record(int64(1000 + i))
	}
	if got := h.Quantile(0.5); got != 100 {
		t.Errorf("p50 = %d", got)
	}
	if got := h.Quantile(0.99); got != 100 {
		t.Errorf("p99 = %d, want 100", got)
	}
	if got := h.Quantile(0.991); got != 1000 {
		t.Errorf("p99.1 = %d, want 1000", got)
	}
	if got := h.Quantile(0.999); got != 1008 {
		t.Errorf("p99.9 = %d, want 1008", got)
	}
	if h.Max() != 1009 {
		t.Errorf("max = %d", h.Max())
	}
}

// Above 2048 a value shares its bucket with neighbours; the reported quantile is the top of
// the bucket, so never below the true value and at most 1/1024 above it.
func TestHistogramRelativeError(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	h := NewHistogram()
	var vals []int64
	for range 20000 {
		v := int64(r.ExpFloat64() * float64(5*time.Millisecond))
		vals = append(vals, v)
		h.Record(v)
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		rank := int(q*float64(len(vals))+0.999999999) - 1
		exact := vals[rank]
		got := h.Quantile(q)
		if got < exact || float64(got-exact) > float64(exact)/1024+1 {
			t.Errorf("q%v = %d, exact %d", q, got, exact)
		}
	}
	if h.Max() != vals[len(vals)-1] || h.Min() != vals[0] {
		t.Errorf("min/max not exact")
	}
}

func TestHistogramMergeAndClamp(t *testing.T) {
	a, b := NewHistogram(), NewHistogram()
	for i := int64(1); i <= 500; i++ {
		a.Record(i)
		b.Record(i + 500)
	}
	b.Record(-5) // recorded as 0
	a.Merge(b)
	if a.Count() != 1001 || a.Min() != 0 || a.Max() != 1000 || a.Quantile(0.5) != 500 {
		t.Errorf("merged: count %d min %d max %d p50 %d", a.Count(), a.Min(), a.Max(), a.Quantile(0.5))
	}
	c := NewHistogram()
	c.Record(HistogramMax * 10)
	if c.Max() != HistogramMax || c.overflow != 1 {
		t.Errorf("clamp: max %d overflow %d", c.Max(), c.overflow)
	}
	e := NewHistogram()
	if e.Quantile(0.5) != 0 || e.Min() != 0 || e.Max() != 0 || e.Mean() != 0 {
		t.Error("empty histogram is not all zero")
	}
}

func TestHistogramBucketLayout(t *testing.T) {
	// Every value maps to a bucket whose range contains it, up to the maximum.
	r := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		v := r.Int64N(HistogramMax)
		i := countsIndex(v)
		if lo, hi := lowestAt(i), highestAt(i); v < lo || v > hi {
			t.Fatalf("value %d in bucket %d [%d, %d]", v, i, lo, hi)
		}
	}
	if countsIndex(HistogramMax) >= len(NewHistogram().counts) {
		t.Fatal("HistogramMax does not fit")
	}
}

func TestSummaryInMicroseconds(t *testing.T) {
	h := NewHistogram()
	h.RecordDuration(1500 * time.Microsecond)
	s := h.Summarize()
	if s.P50 < 1500 || s.P50 > 1502 || s.Max != 1500 || s.Count != 1 {
		t.Errorf("summary %+v", s)
	}
}
