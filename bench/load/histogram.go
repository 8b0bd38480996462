package load

import (
	"math"
	"math/bits"
	"time"
)

// Histogram records non-negative int64 values (the generator records nanoseconds) in
// HdrHistogram's log-linear layout with three significant decimal digits: every value below
// 2048 has its own bucket, and above that each power of two is split into 1024 equal
// buckets, so a reported percentile is within 0.1% of the true one (exact below 2048, and the
// minimum, maximum and mean are always exact). Values above the trackable maximum (one hour
// in nanoseconds) are recorded as that maximum. It is not safe for concurrent use.
type Histogram struct {
	counts   []int64
	total    int64
	min, max int64
	sum      float64
	overflow int64 // values clamped to highest
}

const (
	subBucketHalfCountMag = 10                               // log2(subBucketHalfCount)
	subBucketCount        = 1 << (subBucketHalfCountMag + 1) // 2048: 3 significant digits
	subBucketHalfCount    = subBucketCount / 2
	subBucketMask         = subBucketCount - 1
	// HistogramMax is the largest value tracked exactly to three digits: one hour in ns.
	HistogramMax = int64(time.Hour)
)

// bucketsNeeded is how many power-of-two buckets cover 0..HistogramMax.
var bucketsNeeded = func() int {
	v, n := int64(subBucketCount), 1
	for v <= HistogramMax {
		v <<= 1
		n++
	}
	return n
}()

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{counts: make([]int64, (bucketsNeeded+1)*subBucketHalfCount), min: math.MaxInt64}
}

func bucketIndex(v int64) int {
	pow2Ceiling := 64 - bits.LeadingZeros64(uint64(v)|subBucketMask)
	return pow2Ceiling - (subBucketHalfCountMag + 1)
}

func countsIndex(v int64) int {
	b := bucketIndex(v)
	sub := int(v >> uint(b))
	return ((b + 1) << subBucketHalfCountMag) + (sub - subBucketHalfCount)
}

// lowestAt and highestAt are the range of values that share counts[i].
func lowestAt(i int) int64 {
	b := (i >> subBucketHalfCountMag) - 1
	sub := (i & (subBucketHalfCount - 1)) + subBucketHalfCount
	if b < 0 {
		sub -= subBucketHalfCount
		b = 0
	}
	return int64(sub) << uint(b)
}

func highestAt(i int) int64 {
	b := (i >> subBucketHalfCountMag) - 1
	if b < 0 {
		b = 0
	}
	return lowestAt(i) + (int64(1) << uint(b)) - 1
}

// Record adds one value; negative values are recorded as 0.
func (h *Histogram) Record(v int64) {
	if v < 0 {
		v = 0
	}
	if v > HistogramMax {
		v = HistogramMax
		h.overflow++
	}
	h.counts[countsIndex(v)]++
	h.total++
	h.sum += float64(v)
	if v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
}

// RecordDuration adds d in nanoseconds.
func (h *Histogram) RecordDuration(d time.Duration) { h.Record(int64(d)) }

// Merge adds every value of o.
func (h *Histogram) Merge(o *Histogram) {
	if o.total == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.sum += o.sum
	h.overflow += o.overflow
	h.min = min(h.min, o.min)
	h.max = max(h.max, o.max)
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.total }

// Min and Max are exact; both are 0 for an empty histogram.
func (h *Histogram) Min() int64 {
	if h.total == 0 {
		return 0
	}
	return h.min
}

// Max is the largest recorded value.
func (h *Histogram) Max() int64 { return h.max }

// Mean is exact (up to float rounding).
func (h *Histogram) Mean() float64 {
	if h.total == 0 {
		return 0
	}
	return h.sum / float64(h.total)
}

// Quantile returns the nearest-rank q-quantile (q in 0..1): the smallest recorded value v
// such that at least ceil(q·count) values are <= v, reported as the highest value of its
// bucket (so never below the true quantile, and at most 0.1% above), and never above Max.
// Quantile(0) is Min and Quantile(1) is Max.
func (h *Histogram) Quantile(q float64) int64 {
	if h.total == 0 {
		return 0
	}
	if q <= 0 {
		return h.min
	}
	if q >= 1 {
		return h.max
	}
	// The nearest rank; the epsilon keeps 0.999·1000 = 999 rather than 999.0000000000001.
	rank := int64(math.Ceil(q*float64(h.total) - 1e-9))
	if rank < 1 {
		rank = 1
	}
	var seen int64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += c
		if seen >= rank {
			return max(min(highestAt(i), h.max), h.min)
		}
	}
	return h.max
}

// Summary is a histogram's headline numbers, in microseconds.
type Summary struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	Max   float64 `json:"max"`
}

func us(ns int64) float64 { return math.Round(float64(ns)/100) / 10 } // 0.1 µs resolution

// Summarize reads a nanosecond histogram as microseconds.
func (h *Histogram) Summarize() Summary {
	return Summary{
		Count: h.total,
		Min:   us(h.Min()),
		Mean:  math.Round(h.Mean()/100) / 10,
		P50:   us(h.Quantile(0.50)),
		P90:   us(h.Quantile(0.90)),
		P99:   us(h.Quantile(0.99)),
		P999:  us(h.Quantile(0.999)),
		Max:   us(h.Max()),
	}
}
