package edge

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// request is one request's bounds and what its body holds, from Guard.Handler to ReadBody.
type request struct {
	start   time.Time
	timeout time.Duration       // body_timeout
	minRate int64               // body_min_rate
	grace   time.Duration       // before the minimum rate applies (catalog.BodyGrace)
	budget  *Budget             // nil: no in-flight cap
	refused func(reason string) // counts a refusal (nil: not counted)
	held    atomic.Int64        // bytes this request took from the budget
	// bodyDone: the body was read to its end, or there was none; else an HTTP/1 answer
	// closes the connection rather than let net/http drain it.
	bodyDone atomic.Bool
	// late: the body missed its deadline; its connection is closed without more waiting.
	late atomic.Bool
}

type stateKey struct{}

func stateOf(r *http.Request) *request {
	st, _ := r.Context().Value(stateKey{}).(*request)
	return st
}

func (st *request) take(n int64) bool {
	if st.budget == nil {
		return true
	}
	if !st.budget.take(n) {
		return false
	}
	st.held.Add(n)
	return true
}

func (st *request) give(n int64) {
	if st.budget != nil && n != 0 {
		st.held.Add(-n)
		st.budget.give(n)
	}
}

// release gives back all the request holds: its answer is out, its body is garbage.
func (st *request) release() { st.give(st.held.Load()) }

// trackedBody notes when a body is read to its end, however it is read.
type trackedBody struct {
	io.ReadCloser
	st *request
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.st.bodyDone.Store(true)
	}
	return n, err
}

func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
}

func withState(r *http.Request, st *request) *http.Request {
	r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	if hasBody(r) {
		r.Body = &trackedBody{ReadCloser: r.Body, st: st}
	} else {
		st.bodyDone.Store(true)
	}
	return r
}
