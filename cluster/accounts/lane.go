package accounts

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/modelgate/modelgate/internal/supervise"
)

// A lane carries this node's forwarded steps to one other node. At most laneSenders
// batches are being sent to it at once; the steps that come meanwhile wait and go together
// in the next batch, so under load one request (and one connection's turn) carries many
// steps, and with one step at a time each goes at once. A sender is free again as soon as
// the node has begun answering its batch: the answers are read apart from it, each handed
// to its step as it comes.
const (
	laneSenders = 2
	// batchWait bounds a batch's request and the reading of its answers: every step's
	// answer is due within AttemptWait of the batch's arrival.
	batchWait = AttemptWait + time.Second
)

type lane struct {
	f    *HTTPForward
	node uint64

	mu      sync.Mutex
	queue   []*forwardedStep
	senders int
}

// forwardedStep is a step waiting in a lane, or in a batch, for its answer.
type forwardedStep struct {
	batchStep
	done chan forwardReply // buffered: the answer never waits for a step whose caller left
}

type forwardReply struct {
	out []byte
	err error
}

func (s *forwardedStep) answer(out []byte, err error) { s.done <- forwardReply{out, err} }

// add queues s; it reports whether the caller is to be a sender (fewer than laneSenders
// were at work), and then send must follow.
func (l *lane) add(s *forwardedStep) (sender bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue = append(l.queue, s)
	if l.senders < laneSenders {
		l.senders++
		return true
	}
	return false
}

// send is a sender's work: the queued steps, a batch at a time, until none is left. The
// caller whose step made it a sender sends the first batch itself (one goroutine fewer on
// the way of a lone step), and leaves the rest to a new goroutine.
func (l *lane) send(caller bool) {
	for {
		batch := l.take()
		if batch == nil {
			return
		}
		if supervise.Run("forward lane", func() { l.post(batch) }) {
			for _, s := range batch { // whatever the panic left unanswered; a second answer is dropped
				select {
				case s.done <- forwardReply{err: supervise.ErrPanicked}:
				default:
				}
			}
		}
		if caller {
			if l.more() {
				supervise.Go("forward lane", func() { l.send(false) })
			}
			return
		}
	}
}

// more reports whether steps are queued; when none is, the sender stops.
func (l *lane) more() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.queue) == 0 {
		l.senders--
		return false
	}
	return true
}

// take is the next batch to send, or nil when none is queued (the sender then stops).
func (l *lane) take() []*forwardedStep {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := min(len(l.queue), maxBatchSteps)
	if n == 0 {
		l.senders--
		return nil
	}
	batch := make([]*forwardedStep, n)
	copy(batch, l.queue)
	l.queue = append(l.queue[:0], l.queue[n:]...)
	return batch
}

// post sends batch and returns once the node has begun answering (within AttemptWait, or
// the batch fails: a node that has stopped must not hold its senders), or the batch failed.
func (l *lane) post(batch []*forwardedStep) {
	ctx, cancel := context.WithTimeout(context.Background(), batchWait)
	late := time.AfterFunc(AttemptWait, cancel)
	resp, err := l.begin(ctx, batch)
	late.Stop()
	if err != nil {
		cancel()
		for _, s := range batch {
			s.answer(nil, err)
		}
		return
	}
	l.f.batches.Add(1)
	l.f.batched.Add(uint64(len(batch)))
	supervise.GoOwing("forward answers", func() {
		defer cancel()
		defer resp.Body.Close()
		l.read(resp.Body, batch)
	}, func() {
		for _, s := range batch { // an answer given twice is dropped: done holds one
			select {
			case s.done <- forwardReply{err: supervise.ErrPanicked}:
			default:
			}
		}
	})
}

// begin sends batch to the node and returns its response once the answers begin.
func (l *lane) begin(ctx context.Context, batch []*forwardedStep) (*http.Response, error) {
	addr, err := l.f.Addr(ctx, l.node, batch[0].shard)
	if err != nil {
		return nil, err
	}
	var body []byte
	for _, s := range batch {
		body = appendStep(body, s.batchStep)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.f.url(addr, StepsPath), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := l.f.Client.Do(req)
	if err != nil {
		l.f.forget(l.node)
		return nil, fmt.Errorf("accounts: forward to node %d: %w", l.node, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		out, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return nil, fmt.Errorf("accounts: node %d answered %d: %s", l.node, resp.StatusCode, bytes.TrimSpace(out))
	}
	return resp, nil
}

// read hands each answer in body to its step; the steps left unanswered when body ends or
// breaks get an error (their outcome is unknown: they are tried again).
func (l *lane) read(body io.Reader, batch []*forwardedStep) {
	r := bufio.NewReader(body)
	answered := make([]bool, len(batch))
	for left := len(batch); left > 0; left-- {
		a, err := readBatchAnswer(r, len(batch))
		if err == nil && answered[a.index] {
			err = fmt.Errorf("%w: step %d answered twice", errBadBatch, a.index)
		}
		if err != nil {
			err = fmt.Errorf("accounts: forward to node %d: %d of %d answers missing: %w", l.node, left, len(batch), err)
			for i, s := range batch {
				if !answered[i] {
					s.answer(nil, err)
				}
			}
			return
		}
		answered[a.index] = true
		batch[a.index].answer(a.result(l.node))
	}
}
