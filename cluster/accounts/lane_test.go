package accounts

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/supervise"
)

// echo answers a step with its shard and command, as a leader answers with a result.
func echo(shard uint64, cmd []byte) ([]byte, error) {
	return fmt.Appendf(nil, "%d:%s", shard, cmd), nil
}

// startOf is a leader's start of a step made of lead: the answer at once, but for the
// shards later picks, whose answer comes through then from another goroutine, as a step
// waiting for its entry does.
func startOf(lead func(shard uint64, cmd []byte) ([]byte, error), later func(shard uint64) bool) startStep {
	return func(shard uint64, cmd []byte, then func([]byte, error)) ([]byte, bool, error) {
		if later(shard) {
			go func() { then(lead(shard, cmd)) }()
			return nil, false, nil
		}
		res, err := lead(shard, cmd)
		return res, true, err
	}
}

func never(uint64) bool { return false }

// forwardTo is an HTTPForward that knows node 2 at srv.
func forwardTo(srv *httptest.Server) *HTTPForward {
	f := &HTTPForward{Client: srv.Client(), Scheme: "http"}
	f.learn([]NodeAddr{{ID: 2, Addr: strings.TrimPrefix(srv.URL, "http://")}})
	return f
}

// TestForwardedStepsWaitingForASenderGoInOneBatchAndEachIsAnsweredWhenReady: while both
// senders of a lane are busy (their nodes have not begun answering), the steps that come
// wait, and go together in one request; each of them is answered as soon as the leader has
// its answer (at once, or later for a step waiting for its entry), not when the slowest step
// of the batch is done.
func TestForwardedStepsWaitingForASenderGoInOneBatchAndEachIsAnsweredWhenReady(t *testing.T) {
	gate, slow := make(chan struct{}), make(chan struct{})
	sizes := make(chan int, 8)
	var requests sync.WaitGroup
	lead := func(shard uint64, cmd []byte) ([]byte, error) {
		if shard == 99 {
			<-slow
		}
		return echo(shard, cmd)
	}
	odd := func(shard uint64) bool { return shard%2 == 1 } // shard 99 among them
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		steps, err := decodeSteps(body)
		if err != nil {
			t.Errorf("a batch that does not decode: %v", err)
			return
		}
		sizes <- len(steps)
		if len(steps) == 1 { // the first two batches: their senders stay busy until the gate opens
			<-gate
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		serveSteps(w, r, startOf(lead, odd), func(uint64) uint64 { return 0 })
	}))
	defer srv.Close()
	f := forwardTo(srv)

	step := func(shard uint64, answers chan<- string) {
		requests.Add(1)
		go func() {
			defer requests.Done()
			out, err := f.Step(context.Background(), 2, shard, []byte("c"))
			if err != nil {
				out = []byte(err.Error())
			}
			answers <- string(out)
		}()
	}
	first := make(chan string, 2)
	step(1, first)
	if n := <-sizes; n != 1 {
		t.Fatalf("the first batch has %d steps, want 1", n)
	}
	step(2, first)
	if n := <-sizes; n != 1 {
		t.Fatalf("the second batch has %d steps, want 1", n)
	}
	rest := make(chan string, 98)
	for shard := uint64(3); shard <= 100; shard++ {
		step(shard, rest)
	}
	l := f.lane(2)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		queued := len(l.queue)
		l.mu.Unlock()
		if queued == 98 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d steps queued, want 98", queued)
		}
	}
	close(gate)
	if n := <-sizes; n != 98 {
		t.Fatalf("the third batch has %d steps, want the 98 that waited", n)
	}
	got := map[string]bool{}
	for i := range 97 { // every step of the batch but the slow one, while the slow one is still at work
		select {
		case a := <-rest:
			got[a] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of the batch's 97 quick steps answered while its slow one was at work", i)
		}
	}
	close(slow)
	got[<-rest] = true
	got[<-first], got[<-first] = true, true
	requests.Wait()
	for shard := 1; shard <= 100; shard++ {
		if want := fmt.Sprintf("%d:c", shard); !got[want] {
			t.Errorf("no answer %q among %d", want, len(got))
		}
	}
	if b, s := f.ForwardBatches(); b != 3 || s != 100 {
		t.Errorf("%d batches of %d steps counted, want 3 of 100", b, s)
	}
}

// TestAForwardedStepGetsItsOwnOutcome: each way a leader can end a step reaches the node
// that sent it as Forward.Step's answer.
func TestAForwardedStepGetsItsOwnOutcome(t *testing.T) {
	outcomes := map[uint64]func() ([]byte, error){
		1: func() ([]byte, error) { return []byte("result"), nil },
		2: func() ([]byte, error) { return nil, ErrNotLeader },
		3: func() ([]byte, error) { return nil, ErrNotLeader },
		4: func() ([]byte, error) { return nil, fmt.Errorf("%w: shard 9", errMalformedStep) },
		5: func() ([]byte, error) { return nil, errors.New("proposal dropped") },
		6: func() ([]byte, error) { panic("boom") },
	}
	hints := map[uint64]uint64{2: 3}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveSteps(w, r, startOf(func(shard uint64, _ []byte) ([]byte, error) { return outcomes[shard]() }, never),
			func(shard uint64) uint64 { return hints[shard] })
	}))
	defer srv.Close()
	f := forwardTo(srv)
	cases := []struct {
		shard   uint64
		out     string
		leader  uint64 // a NotLeaderError naming this leader (0: none named) when notLeader
		notLead bool
		err     string
	}{
		{shard: 1, out: "result"},
		{shard: 2, notLead: true, leader: 3},
		{shard: 3, notLead: true},
		{shard: 4, err: "accounts: node 2 refused a step: accounts: not a command of this shard: shard 9"},
		{shard: 5, err: "accounts: node 2: proposal dropped"},
		{shard: 6, err: "accounts: node 2: " + supervise.ErrPanicked.Error()},
	}
	for _, c := range cases {
		out, err := f.Step(context.Background(), 2, c.shard, []byte("c"))
		var nl *NotLeaderError
		switch {
		case c.notLead:
			if !errors.As(err, &nl) || nl.Leader != c.leader {
				t.Errorf("shard %d: %v, want not leader naming %d", c.shard, err, c.leader)
			}
		case c.err != "":
			if err == nil || err.Error() != c.err || errors.As(err, &nl) {
				t.Errorf("shard %d: %v, want %q", c.shard, err, c.err)
			}
		case err != nil || string(out) != c.out:
			t.Errorf("shard %d: %q %v, want %q", c.shard, out, err, c.out)
		}
	}
}

// TestStepsLeftUnansweredWhenTheAnswersBreakOffFailAndTheOthersKeepTheirs: a node whose
// answers stop half way (its process died) leaves its unanswered steps with an error (their
// outcome unknown, so they are tried again); the steps it answered keep their answers.
func TestStepsLeftUnansweredWhenTheAnswersBreakOffFailAndTheOthersKeepTheirs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		steps, _ := decodeSteps(body)
		w.WriteHeader(http.StatusOK)
		for i, s := range steps {
			if s.shard == 2 {
				w.Write(appendAnswer(nil, batchAnswer{index: i, body: []byte("two")}))
			}
		}
	}))
	defer srv.Close()
	f := forwardTo(srv)
	l := f.lane(2)
	batch := make([]*forwardedStep, 3)
	for i := range batch {
		batch[i] = &forwardedStep{batchStep: batchStep{shard: uint64(i + 1), cmd: []byte("c")}, done: make(chan forwardReply, 1)}
	}
	l.post(batch)
	for i, want := range []string{"", "two", ""} {
		r := <-batch[i].done
		switch {
		case want != "" && (r.err != nil || string(r.out) != want):
			t.Errorf("step %d: %q %v, want %q", i, r.out, r.err, want)
		case want == "" && (r.err == nil || !strings.Contains(r.err.Error(), "2 of 3 answers missing")):
			t.Errorf("step %d: %q %v, want the answers missing", i, r.out, r.err)
		}
	}
}

// TestABatchThatDoesNotDecodeIsRefused: the wire's bounds, on both sides.
func TestABatchThatDoesNotDecodeIsRefused(t *testing.T) {
	many := []byte{}
	for range maxBatchSteps + 1 {
		many = appendStep(many, batchStep{shard: 1, cmd: []byte("c")})
	}
	steps := []struct {
		name string
		body []byte
		want string // "" when it decodes
	}{
		{"two steps", appendStep(appendStep(nil, batchStep{1, []byte("a")}), batchStep{300, []byte("bc")}), ""},
		{"empty", nil, "no step"},
		{"a length past the end", []byte{1, 5, 'a'}, "step 0's length"},
		{"a shard cut short", []byte{0x80}, "step 0's shard"},
		{"too many steps", many, "more than 512 steps"},
	}
	for _, s := range steps {
		got, err := decodeSteps(s.body)
		switch {
		case s.want == "" && (err != nil || len(got) != 2 || got[1].shard != 300 || string(got[1].cmd) != "bc"):
			t.Errorf("%s: %+v %v", s.name, got, err)
		case s.want != "" && (err == nil || !errors.Is(err, errBadBatch) || !strings.HasSuffix(err.Error(), s.want)):
			t.Errorf("%s: %v, want %q", s.name, err, s.want)
		}
	}
	answers := []struct {
		name string
		body []byte
		want error
	}{
		{"an index past the batch", appendAnswer(nil, batchAnswer{index: 3}), errBadBatch},
		{"an unknown kind", []byte{0, 9, 0, 0}, errBadBatch},
		{"cut in the body", appendAnswer(nil, batchAnswer{body: []byte("abc")})[:5], io.ErrUnexpectedEOF},
		{"cut after the index", []byte{0}, io.ErrUnexpectedEOF},
		{"nothing", nil, io.EOF},
	}
	for _, a := range answers {
		_, err := readBatchAnswer(bufio.NewReader(bytes.NewReader(a.body)), 3)
		if !errors.Is(err, a.want) {
			t.Errorf("%s: %v, want %v", a.name, err, a.want)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveSteps(w, r, startOf(echo, never), func(uint64) uint64 { return 0 })
	}))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/octet-stream", bytes.NewReader([]byte{1, 5, 'a'}))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "step 0's length") {
		t.Errorf("a bad batch: %d %s", resp.StatusCode, body)
	}
}

// TestANodeThatDoesNotBeginAnsweringFailsItsBatchWithinATry: a node that has stopped (a
// paused process) holds a batch's sender no longer than one try (AttemptWait), so the
// steps behind it are tried again elsewhere before the whole batch's bound.
func TestANodeThatDoesNotBeginAnsweringFailsItsBatchWithinATry(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stop }))
	defer srv.Close()
	defer close(stop)
	f := forwardTo(srv)
	began := time.Now()
	_, err := f.Step(context.Background(), 2, 1, []byte("c"))
	took := time.Since(began)
	if err == nil || !strings.HasPrefix(err.Error(), "accounts: forward to node 2: ") || took >= batchWait {
		t.Errorf("after %v: %v, want the forward failed before %v", took, err, batchWait)
	}
}
