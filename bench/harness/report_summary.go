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
		var thr, p50, p90, p99, p999, ttfb50, ttfb99, hop, sim, cli, up []float64
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
		if len(hop) > 0 {
			s := spread(hop)
			ts.HopCPUPerReq = &s
		}
		ts.SimCPUPerReq, ts.ClientCPUReq, ts.UpstreamPerRq = medianPtr(sim), medianPtr(cli), medianPtr(up)
		if anyExp {
			ts.ExpectedMet = &allMet
		}
		out = append(out, ts)
	}
	return out
}

func medianPtr(v []float64) *float64 {
	if len(v) == 0 {
		return nil
	}
	m := round(median(v), 3)
	return &m
}

func compare(sr ScenarioReport) Comparison {
	c := Comparison{Scenario: sr.Name, C1P50US: map[string]float64{}, FixedRateCPUPerReq: map[string]float64{},
		SaturatedCPUPerReq: map[string]float64{}, SaturatedRPS: map[string]float64{}, Errors: map[string]int64{}}
	for _, ph := range sr.Phases {
		for _, ts := range ph.Summaries {
			c.Errors[ts.Target] += ts.Errors
			if ts.HopPeakRSSMiB != nil && ts.Target == TargetGateway && (c.GatewayPeakMiB == nil || *ts.HopPeakRSSMiB > *c.GatewayPeakMiB) {
				v := *ts.HopPeakRSSMiB
				c.GatewayPeakMiB = &v
			}
			if ts.ExpectedMet != nil {
				v := *ts.ExpectedMet && (c.Expected == nil || *c.Expected)
				c.Expected = &v
			}
			if ts.Target == TargetGateway && ts.UpstreamPerRq != nil && (ph.Name == PhaseSaturated || c.UpstreamPerReq == nil) {
				v := *ts.UpstreamPerRq
				c.UpstreamPerReq = &v
			}
			switch ph.Name {
			case PhaseC1:
				c.C1P50US[ts.Target] = ts.P50.Median
			case PhaseSaturated:
				c.SaturatedRPS[ts.Target] = ts.Throughput.Median
				if ts.HopCPUPerReq != nil {
					c.SaturatedCPUPerReq[ts.Target] = ts.HopCPUPerReq.Median
				}
			case PhaseFixedRate:
				r := ph.OfferedRPS
				c.FixedRateRPS = &r
				if ts.HopCPUPerReq != nil {
					c.FixedRateCPUPerReq[ts.Target] = ts.HopCPUPerReq.Median
				}
			}
		}
	}
	diff := func(m map[string]float64, a, b string) *float64 {
		x, ok1 := m[a]
		y, ok2 := m[b]
		if !ok1 || !ok2 {
			return nil
		}
		v := round(x-y, 1)
		return &v
	}
	ratio := func(m map[string]float64, a, b string) *float64 {
		x, ok1 := m[a]
		y, ok2 := m[b]
		if !ok1 || !ok2 || y == 0 {
			return nil
		}
		v := round(x/y, 2)
		return &v
	}
	c.GatewayAddedP50US = diff(c.C1P50US, TargetGateway, TargetProxy)
	c.ProxyHopP50US = diff(c.C1P50US, TargetProxy, TargetDirect)
	if c.CPURatio = ratio(c.FixedRateCPUPerReq, TargetGateway, TargetProxy); c.CPURatio == nil {
		c.CPURatio = ratio(c.SaturatedCPUPerReq, TargetGateway, TargetProxy)
	}
	c.ThroughputRatio = ratio(c.SaturatedRPS, TargetGateway, TargetProxy)
	return c
}
