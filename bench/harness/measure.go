package harness

// What one run costs, read from /proc around its measured part: each of our processes'
// CPU time and peak RSS, the whole machine's CPU (noise), and, when the servers are
// pinned, the server CPUs' whole busy time (the kernel's work on their behalf included).

import (
	"os"
	"time"
)

// runProbes reads every process of ours, so what the rest of the machine did shows as well.
type runProbes struct {
	procs      map[int]*procProbe
	servers    []int  // our server processes: on coreCPUs when pinned
	coreCPUs   CPUSet // the servers' CPUs (nil: not pinned, no whole-core figure)
	stat0      StatReading
	stat1      StatReading
	statFailed bool
}

// newRunProbes probes the servers and this process (the load generator).
func newRunProbes(servers []int, coreCPUs CPUSet) *runProbes {
	r := &runProbes{procs: map[int]*procProbe{}, coreCPUs: coreCPUs}
	for _, pid := range append(servers, os.Getpid()) {
		if pid != 0 && r.procs[pid] == nil {
			r.procs[pid] = newProcProbe(pid)
			if pid != os.Getpid() {
				r.servers = append(r.servers, pid)
			}
		}
	}
	return r
}

// start reads the counters just before the measured part: /proc/stat first, so the
// machine's reading spans the processes' on both ends.
func (r *runProbes) start() {
	var err error
	r.stat0, err = ReadStat(r.coreCPUs)
	r.statFailed = err != nil
	for _, p := range r.procs {
		p.start()
	}
}

// stop reads them again just after.
func (r *runProbes) stop() {
	for _, p := range r.procs {
		p.stop()
	}
	var err error
	r.stat1, err = ReadStat(r.coreCPUs)
	r.statFailed = r.statFailed || err != nil
}

// probe is pid's probe (one that reports nothing for a pid not probed).
func (r *runProbes) probe(pid int) *procProbe {
	if p := r.procs[pid]; p != nil {
		return p
	}
	return newProcProbe(0)
}

// used is the CPU time of the probed processes among pids.
func (r *runProbes) used(pids []int) time.Duration {
	var d time.Duration
	for _, pid := range pids {
		if p := r.procs[pid]; p != nil && p.ok {
			d += p.cpu1.Sub(p.cpu0).Total()
		}
	}
	return d
}

// machine is the whole machine's CPU over a run of durationS seconds: ours and the rest.
func (r *runProbes) machine(durationS float64) *MachineCPU {
	if r.statFailed || durationS <= 0 {
		return nil
	}
	d := r.stat1.Machine.Sub(r.stat0.Machine)
	ours := r.used(append(r.servers, os.Getpid()))
	other := max(0, d.Busy-ours)
	return &MachineCPU{BusySeconds: round(d.Busy.Seconds(), 3), OursSeconds: round(ours.Seconds(), 3),
		OtherSeconds: round(other.Seconds(), 3), StealSeconds: round(d.Steal.Seconds(), 3),
		OtherCores: round(other.Seconds()/durationS, 2), StealCores: round(d.Steal.Seconds()/durationS, 2)}
}

// core is the server CPUs' whole busy time over a run (nil when not pinned).
func (r *runProbes) core(requests int64, durationS float64) *CoreCPU {
	if r.statFailed || r.stat0.Server == nil || r.stat1.Server == nil || durationS <= 0 {
		return nil
	}
	return coreReport(r.coreCPUs, r.stat1.Server.Sub(*r.stat0.Server), r.used(r.servers), requests, durationS)
}

// coreReport turns the server CPUs' time over a run and our servers' own CPU time into the
// report's figures.
func coreReport(cpus CPUSet, d SystemCPU, servers time.Duration, requests int64, durationS float64) *CoreCPU {
	occupied := d.Occupied()
	c := &CoreCPU{CPUs: cpus.String(), BusySeconds: round(occupied.Seconds(), 3), StealSeconds: round(d.Steal.Seconds(), 3),
		ServersSeconds: round(servers.Seconds(), 3), BusyCores: round(occupied.Seconds()/durationS, 2)}
	if requests > 0 {
		c.USPerRequest = round(float64(occupied.Microseconds())/float64(requests), 1)
		c.OutsideServersUSPerRequest = round(float64(max(0, occupied-servers).Microseconds())/float64(requests), 1)
	}
	return c
}

// procProbe reads one process's CPU time and peak RSS around a run.
type procProbe struct {
	pid        int
	cpu0, cpu1 CPUTime
	ok         bool
	peakKB     int64
	peakReset  bool
}

func newProcProbe(pid int) *procProbe { return &procProbe{pid: pid} }

func (p *procProbe) start() {
	if p.pid == 0 {
		return
	}
	p.peakReset = ResetPeakRSS(p.pid) == nil
	var err error
	p.cpu0, err = ReadCPU(p.pid)
	p.ok = err == nil
}

func (p *procProbe) stop() {
	if !p.ok {
		return
	}
	var err error
	if p.cpu1, err = ReadCPU(p.pid); err != nil {
		p.ok = false
		return
	}
	if kb, err := ReadPeakRSS(p.pid); err == nil {
		p.peakKB = kb
	}
}

func (p *procProbe) cpu(requests int64) *CPUReport {
	if !p.ok {
		return nil
	}
	d := p.cpu1.Sub(p.cpu0)
	r := &CPUReport{Seconds: round(d.Total().Seconds(), 3), UserSeconds: round(d.User.Seconds(), 3), SystemSeconds: round(d.System.Seconds(), 3)}
	if requests > 0 {
		r.USPerRequest = round(float64(d.Total().Microseconds())/float64(requests), 1)
	}
	return r
}

func (p *procProbe) peak() *PeakRSS {
	if !p.ok || p.peakKB == 0 {
		return nil
	}
	return &PeakRSS{KB: p.peakKB, PerRun: p.peakReset}
}
