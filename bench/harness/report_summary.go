package harness

// The numbers a report derives from its runs: each phase's summary per target (medians over
// repetitions) and each scenario's headline comparison.

import (
	"slices"
	"sort"
)

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func spread(v []float64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	return Spread{Median: round(median(v), 1), Min: slices.Min(v), Max: slices.Max(v)}
}

func summarize(runs []RunReport, targets []string) []TargetSummary {
	var out []TargetSummary
	for _, tn := range targets {
		ts := TargetSummary{Target: tn, Statuses: map[string]int64{}}
		var thr, p50, p90, p99, p999, ttfb50, ttfb99, hop, core, outside, sim, cli, up []float64
		allMet, anyExp := true, false
		for _, r := range runs {
			if r.Target != tn {
				continue
			}
			ts.Runs++
			ts.Requests += r.Requests
			ts.Errors += r.Errors
			for k, v := range r.Statuses {
				ts.Statuses[k] += v
			}
			thr = append(thr, r.Throughput)
			p50 = append(p50, r.Latency.P50)
			p90 = append(p90, r.Latency.P90)
			p99 = append(p99, r.Latency.P99)
			p999 = append(p999, r.Latency.P999)
			ts.Max = max(ts.Max, r.Latency.Max)
			if r.TTFB != nil {
				ttfb50 = append(ttfb50, r.TTFB.P50)
				ttfb99 = append(ttfb99, r.TTFB.P99)
			}
			if r.HopCPU != nil {
				hop = append(hop, r.HopCPU.USPerRequest)
			}
			if r.ServerCore != nil {
				core = append(core, r.ServerCore.USPerRequest)
				outside = append(outside, r.ServerCore.OutsideServersUSPerRequest)
			}
			if r.SimCPU != nil {
				sim = append(sim, r.SimCPU.USPerRequest)
			}
			if r.ClientCPU != nil {
				cli = append(cli, r.ClientCPU.USPerRequest)
			}
			if r.HopPeakRSSKB != nil {
				mib := round(float64(r.HopPeakRSSKB.KB)/1024, 1)
				if ts.HopPeakRSSMiB == nil || mib > *ts.HopPeakRSSMiB {
					ts.HopPeakRSSMiB = &mib
				}
			}
			if r.UpstreamCallsPerRequest != nil {
				up = append(up, *r.UpstreamCallsPerRequest)
			}
			if r.Expected != nil {
				anyExp = true
				allMet = allMet && r.Expected.Met
			}
		}
		if ts.Runs == 0 {
			continue
		}
		ts.Throughput, ts.P50 = spread(thr), spread(p50)
		ts.P90, ts.P99, ts.P999 = round(median(p90), 1), round(median(p99), 1), round(median(p999), 1)
		ts.TTFBP50, ts.TTFBP99 = medianPtr(ttfb50), medianPtr(ttfb99)
		ts.HopCPUPerReq, ts.CoreCPUPerReq = spreadPtr(hop), spreadPtr(core)
		ts.OutsidePerReq = medianPtr(outside)
		ts.SimCPUPerReq, ts.ClientCPUReq, ts.UpstreamPerRq = medianPtr(sim), medianPtr(cli), medianPtr(up)
		if anyExp {
			ts.ExpectedMet = &allMet
		}
		out = append(out, ts)
	}
	return out
}

func spreadPtr(v []float64) *Spread {
	if len(v) == 0 {
		return nil
	}
	s := spread(v)
	return &s
}

func medianPtr(v []float64) *float64 {
	if len(v) == 0 {
		return nil
	}
	m := round(median(v), 3)
	return &m
}

func compare(sr ScenarioReport) Comparison {
	c := Comparison{Scenario: sr.Name, C1P50US: map[string]float64{}, C1P99US: map[string]float64{}, FixedRateCPUPerReq: map[string]float64{},
		SaturatedCPUPerReq: map[string]float64{}, SaturatedRPS: map[string]float64{}, Errors: map[string]int64{}, Targets: []TargetFigures{}, Ratios: []PairRatios{}}
	figs := map[string]*TargetFigures{}
	for _, tn := range sr.Targets {
		figs[tn] = &TargetFigures{Target: tn}
	}
	for _, ph := range sr.Phases {
		for _, ts := range ph.Summaries {
			f := figs[ts.Target]
			if f == nil {
				continue
			}
			c.Errors[ts.Target] += ts.Errors
			f.Errors += ts.Errors
			f.IncompleteStreams += ts.Statuses["incomplete_stream"]
			if ts.HopPeakRSSMiB != nil && (f.PeakRSSMiB == nil || *ts.HopPeakRSSMiB > *f.PeakRSSMiB) {
				f.PeakRSSMiB = ptr(*ts.HopPeakRSSMiB)
			}
			if ts.ExpectedMet != nil {
				c.Expected = ptr(*ts.ExpectedMet && (c.Expected == nil || *c.Expected))
			}
			if ts.Target == TargetGateway && ts.UpstreamPerRq != nil && (ph.Name == PhaseSaturated || c.UpstreamPerReq == nil) {
				c.UpstreamPerReq = ptr(*ts.UpstreamPerRq)
			}
			switch ph.Name {
			case PhaseC1:
				c.C1P50US[ts.Target], c.C1P99US[ts.Target] = ts.P50.Median, ts.P99
				f.C1P50US, f.C1P99US = ptr(ts.P50.Median), ptr(ts.P99)
			case PhaseSaturated:
				c.SaturatedRPS[ts.Target] = ts.Throughput.Median
				f.SaturatedRPS = ptr(ts.Throughput.Median)
				f.SaturatedCPU = cpuPair(ts)
				if ts.HopCPUPerReq != nil {
					c.SaturatedCPUPerReq[ts.Target] = ts.HopCPUPerReq.Median
				}
			case PhaseFixedRate:
				c.FixedRateRPS = ptr(ph.OfferedRPS)
				f.FixedRateCPU = cpuPair(ts)
				f.FixedRateP50US, f.FixedRateP99US = ptr(ts.P50.Median), ptr(ts.P99)
				if ts.HopCPUPerReq != nil {
					c.FixedRateCPUPerReq[ts.Target] = ts.HopCPUPerReq.Median
				}
			}
		}
	}
	for _, tn := range sr.Targets {
		c.Targets = append(c.Targets, *figs[tn])
	}
	if gw := figs[TargetGateway]; gw != nil {
		c.GatewayPeakMiB = gw.PeakRSSMiB
		c.CPUBasis = cpuBasis(c.Targets)
		for _, tn := range sr.Targets {
			if tn != TargetGateway && tn != TargetDirect {
				c.Ratios = append(c.Ratios, pairRatios(*gw, *figs[tn], c.CPUBasis))
			}
		}
	}
	c.GatewayAddedP50US = diff(c.C1P50US, TargetGateway, TargetProxy)
	c.GatewayAddedP99US = diff(c.C1P99US, TargetGateway, TargetProxy)
	c.ProxyHopP50US = diff(c.C1P50US, TargetProxy, TargetDirect)
	for _, r := range c.Ratios {
		if r.Against == TargetProxy {
			c.CPURatio, c.ThroughputRatio = r.CPU, r.Throughput
		}
	}
	return c
}

func ptr[T any](v T) *T { return &v }

// cpuPair is a summary's hop process and server core CPU per request.
func cpuPair(ts TargetSummary) CPUPair {
	var p CPUPair
	if ts.HopCPUPerReq != nil {
		p.Process = ptr(ts.HopCPUPerReq.Median)
	}
	if ts.CoreCPUPerReq != nil {
		p.Core = ptr(ts.CoreCPUPerReq.Median)
	}
	return p
}

// comparedCPU is the CPU pair a comparison uses: at the fixed rate, where every target
// meets the same load, else saturated.
func (f TargetFigures) comparedCPU() CPUPair {
	if f.FixedRateCPU.Process != nil || f.FixedRateCPU.Core != nil {
		return f.FixedRateCPU
	}
	return f.SaturatedCPU
}

// cpuBasis is the whole server core when the gateway's figures have it (pinned runs), else
// the hop process.
func cpuBasis(figs []TargetFigures) string {
	for _, f := range figs {
		if f.Target == TargetGateway && f.comparedCPU().Core != nil {
			return BasisCore
		}
	}
	return BasisProcess
}

// pairRatios is the gateway ÷ other.
func pairRatios(gw, other TargetFigures, basis string) PairRatios {
	g, o := gw.comparedCPU(), other.comparedCPU()
	r := PairRatios{Against: other.Target, Throughput: ratioOf(gw.SaturatedRPS, other.SaturatedRPS),
		ProcessCPU: ratioOf(g.Process, o.Process), CoreCPU: ratioOf(g.Core, o.Core)}
	r.CPU = r.ProcessCPU
	if basis == BasisCore {
		r.CPU = r.CoreCPU
	}
	return r
}

func ratioOf(x, y *float64) *float64 {
	if x == nil || y == nil || *y == 0 {
		return nil
	}
	return ptr(round(*x / *y, 2))
}

// diff is m[a] − m[b], when both are there.
func diff(m map[string]float64, a, b string) *float64 {
	x, ok1 := m[a]
	y, ok2 := m[b]
	if !ok1 || !ok2 {
		return nil
	}
	return ptr(round(x-y, 1))
}
