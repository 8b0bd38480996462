//go:build faults

package node_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// faultCatalog serves two models on the simulator and a plan with no per-minute limit, so
// the load is refused only by the full disk.
const faultCatalog = `
server: {first_byte_timeout: 5s, idle_stream_timeout: 5s, max_body_bytes: 65536}
models:
  - id: chat
    kind: chat
    max_output_tokens: 100
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes:
      - {id: a, format: chat, base_url: "{{SIM}}/r/a/v1", upstream_model: up-a, credential_env: NODETEST_SIM_KEY}
  - id: msg
    kind: chat
    max_output_tokens: 100
    pricing: {prompt: "0.000003", completion: "0.000015"}
    routes:
      - {id: m, format: messages, base_url: "{{SIM}}/r/m/v1", upstream_model: up-m, credential_env: NODETEST_SIM_KEY}
plans:
  - {name: faults, window_requests: 1000000, allow_automated: true}
`

// mountTmpfs mounts a tmpfs of size at a new directory, unmounted at the test's end; it skips
// the test where mounting is impossible (not root, no mount in the container).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("TestFaultDiskFull needs to mount a tmpfs (root, mount(8)); mount failed: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file into dir until the filesystem has less than leave bytes free (0: until
// it is full, ENOSPC), like a log that grew.
func fill(t *testing.T, dir string, leave int64) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600) // again: tops it up
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if leave > 0 {
			var st syscall.Statfs_t
			if err := syscall.Statfs(dir, &st); err != nil {
				t.Fatal(err)
			}
			if int64(st.Bavail)*st.Bsize < leave {
				return path
			}
		}
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			return path
		}
	}
}

// outcome is what one client call got.
type outcome struct {
	id       string
	status   int
	code     string // the error's code, for a refusal
	retry    string // Retry-After
	phase    int    // 0 before the disk filled, 1 while full, 2 after space returned
	transErr error  // the call got no HTTP answer
}

// TestFaultDiskFullUnderLoad runs out of disk for real: the data directory on a
// 32 MiB tmpfs that another writer fills while clients call the gateway. The gateway must stay
// up and answer every call (no transport errors), refuse what it cannot record with a 503
// cannot_record and Retry-After (a stream that began before the disk filled ends with an
// in-band cannot_record instead of its end), say degraded on /healthz, serve again by itself
// once space returns, and lose no answered call: every answer received in full is in the log
// with its status, the plan's counter agrees with the log, and the store opens clean
// afterwards. A refusal is logged only when its record could be written.
//
// Two guards, one case each: the free-space reserve checked before every write (10 MiB: each
// WAL file Pebble opens is preallocated to 110% of its 4 MiB memtable, two at a rotation), and
// with the reserve off, the ballast alone taking the ENOSPC that then reaches Pebble's WAL
// (the disk is filled between two calls, so the filler cannot take the ballast's space back).
func TestFaultDiskFullUnderLoad(t *testing.T) {
	cases := []struct {
		name    string
		minFree int64
		pause   bool   // fill the disk between calls
		leave   int64  // what the filler leaves free (0: none)
		reason  string // in the "data directory full" line
	}{
		// The filler stops 9 MiB short of full, below the reserve and above what a WAL rotation
		// takes: a filler that ran to ENOSPC could race the reserve's check (the check passed,
		// then the write met a full disk) and be caught by the ballast instead, as once in CI.
		{"the reserve refuses before the disk is full", 10 << 20, false, 9 << 20, "below the 10.0 MiB reserve"},
		{"the ballast takes an ENOSPC in the WAL", -1, true, 0, "(ENOSPC); ballast given up: true"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs nodetest.LogBuffer
			mnt := mountTmpfs(t, "32m")
			data := filepath.Join(mnt, "data")
			if err := os.Mkdir(data, 0o700); err != nil {
				t.Fatal(err)
			}
			env := nodetest.Start(t, faultCatalog, nodetest.Options{DataDir: data, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Store: persistence.Options{MinFreeBytes: c.minFree, BallastBytes: 2 << 20, RecheckEvery: 100 * time.Millisecond}})
			acct, err := env.Node.Store.CreateAccount("faults@example.com", "faults")
			if err != nil {
				t.Fatal(err)
			}
			_, key, err := env.Node.Store.CreateKey(acct.ID, persistence.KeySpec{Name: "load"})
			if err != nil {
				t.Fatal(err)
			}
			l := startLoad(env.Node.URL, key)
			time.Sleep(time.Second)
			l.phase.Store(1)
			if c.pause {
				l.pause.Lock()
			}
			filler := fill(t, mnt, c.leave)
			if c.pause {
				l.pause.Unlock()
			}
			testutil.WaitFor(t, "the store to notice the full disk", func() bool { return !env.Node.Store.Writable() })
			// Keep it full: Pebble deleting obsolete files frees a little space, which a store
			// with no reserve then takes writes into (seen once in CI: 1.7 MB back after 104 ms).
			for range 20 {
				time.Sleep(100 * time.Millisecond)
				fill(t, mnt, c.leave)
			}
			health := nodetest.Read(t, env.Do(http.MethodGet, "/healthz", "", ""))
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, "the store to take writes again", env.Node.Store.Writable)
			l.phase.Store(2)
			time.Sleep(2 * time.Second)
			outcomes := l.stop()

			if jsonField(health, "status") != "degraded" {
				t.Errorf("healthz while full = %s", health)
			}
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, `msg="data directory`) {
					t.Log(line)
				}
			}
			if !strings.Contains(logs.String(), c.reason) {
				t.Errorf("the disk was not caught by the guard under test (%q):\n%s", c.reason, logs.String())
			}
			answered := checkOutcomes(t, outcomes)
			checkLogged(t, env, acct.ID, answered)
			env.Close()
			s, err := persistence.OpenWith(filepath.Join(data, "pebble"), persistence.Options{MinFreeBytes: c.minFree, BallastBytes: 2 << 20})
			if err != nil {
				t.Fatalf("the store does not open after the full disk: %v", err)
			}
			defer s.Close()
			checkStore(t, s, acct.ID, answered)
		})
	}
}

// load is clients calling the gateway until stopped; pause holds them between calls.
type load struct {
	phase    atomic.Int32
	pause    sync.RWMutex
	done     atomic.Bool
	wg       sync.WaitGroup
	mu       sync.Mutex
	outcomes []outcome
}

var loadBodies = []struct{ path, body string }{
	{"/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`},
	{"/v1/chat/completions", `{"model":"chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
	{"/v1/messages", `{"model":"msg","max_tokens":32,"messages":[{"role":"user","content":"hi"}]}`},
	{"/v1/messages", `{"model":"msg","max_tokens":32,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
}

// startLoad starts 8 clients.
func startLoad(url, key string) *load {
	l := &load{}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	for w := 0; w < 8; w++ {
		l.wg.Add(1)
		go func(w int) {
			defer l.wg.Done()
			for i := 0; !l.done.Load(); i++ {
				l.pause.RLock()
				o := call(client, url, key, loadBodies[(w+i)%len(loadBodies)].path, loadBodies[(w+i)%len(loadBodies)].body)
				l.pause.RUnlock()
				o.phase = int(l.phase.Load())
				l.mu.Lock()
				l.outcomes = append(l.outcomes, o)
				l.mu.Unlock()
			}
		}(w)
	}
	return l
}

func (l *load) stop() []outcome {
	l.done.Store(true)
	l.wg.Wait()
	return l.outcomes
}

// call makes one call and notes what came back.
func call(client *http.Client, url, key, path, body string) outcome {
	var o outcome
	req, _ := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err == nil {
		var raw []byte
		raw, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		o.id, o.status, o.retry = resp.Header.Get("X-Request-Id"), resp.StatusCode, resp.Header.Get("Retry-After")
		switch {
		case resp.StatusCode != 200:
			o.code, _ = jsonField(raw, "error.code").(string)
		case strings.Contains(string(raw), `"cannot_record"`):
			o.code = "in-band cannot_record" // a stream whose record the full disk refused
		case strings.Contains(string(raw), `"error"`):
			o.code = "in-band error: " + string(raw)
		}
	}
	o.transErr = err
	return o
}

// checkOutcomes requires an HTTP answer to every call, 200 or 503 cannot_record with
// Retry-After (or a stream ended by an in-band cannot_record), refusals while the disk was
// full and answers after; it returns the calls answered in full or refused with a status,
// request id → status.
func checkOutcomes(t *testing.T, outcomes []outcome) map[string]int {
	t.Helper()
	counts := map[string]int{}
	answered := map[string]int{}
	for _, o := range outcomes {
		key := fmt.Sprintf("phase %d: %d %s", o.phase, o.status, o.code)
		switch {
		case o.transErr != nil:
			key = fmt.Sprintf("phase %d: transport error %v", o.phase, o.transErr)
		case o.status == 503 && o.retry != "10":
			key += " without Retry-After: 10"
		}
		counts[key]++
		if o.transErr == nil && o.code != "in-band cannot_record" {
			answered[o.id] = o.status
		}
	}
	t.Logf("%d calls: %v", len(outcomes), counts)
	for k, n := range counts {
		if !strings.HasSuffix(k, ": 200 ") && !strings.HasSuffix(k, ": 503 cannot_record") && !strings.HasSuffix(k, ": 200 in-band cannot_record") {
			t.Errorf("unexpected outcome %q (%d calls)", k, n)
		}
	}
	if counts["phase 1: 503 cannot_record"] == 0 || counts["phase 2: 200 "] == 0 {
		t.Errorf("the disk never refused calls, or calls never resumed: %v", counts)
	}
	return answered
}

// checkLogged requires every call answered in full to be logged with its status and the
// plan's counter to hold exactly the 200s (a refused call counts nothing) as soon as the
// calls are answered: an answer is recorded before its last byte.
func checkLogged(t *testing.T, env *nodetest.Env, acct string, answered map[string]int) {
	t.Helper()
	env.WaitIdle()
	if m := missing(t, env.Node.Store, acct, answered); len(m) > 0 {
		t.Errorf("once every call was answered: %v", m)
	}
}

// checkStore requires the reopened store to hold the same.
func checkStore(t *testing.T, s *persistence.Store, acct string, answered map[string]int) {
	t.Helper()
	if m := missing(t, s, acct, answered); len(m) > 0 {
		t.Errorf("after reopening the store: %v", m)
	}
}

// missing lists what the store lacks: 200s not logged as such, refusals logged with another
// status (a refusal the full disk kept from its record is in no log), and a plan counter that
// is not the number of 200s.
func missing(t *testing.T, s *persistence.Store, acct string, answered map[string]int) []string {
	var out []string
	logged := allLog(t, s, acct)
	ok := 0
	for id, st := range answered {
		if st == 200 {
			ok++
		}
		if got, present := logged[id]; got != st && (st == 200 || present) {
			out = append(out, fmt.Sprintf("request %s answered %d is logged as %d", id, st, got))
		}
	}
	if rec, _, err := s.LoadQuota(acct); err != nil || rec.WindowUsed != int64(ok)*1000 {
		out = append(out, fmt.Sprintf("window used %d for %d answered calls (%v)", rec.WindowUsed/1000, ok, err))
	}
	return out
}

// allLog is an account's whole request log, request id → status.
func allLog(t *testing.T, s *persistence.Store, acct string) map[string]int {
	t.Helper()
	out := map[string]int{}
	var from time.Time
	for {
		page, err := s.ListLog(acct, from, time.Time{}, persistence.MaxLogLimit)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			out[e.RequestID] = e.Status
		}
		if len(page) < persistence.MaxLogLimit {
			return out
		}
		from = time.Unix(0, page[len(page)-1].Time) // inclusive: the same instant is read again, the map keeps it once
	}
}
