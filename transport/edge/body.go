package edge

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// ReadBody reads r's whole body, the one reader of every API's bodies: within limit bytes
// (413, at once when the announced length is over), within the request's body_timeout and
// minimum rate (408), and within the node's bytes in flight (503 with Retry-After). The body
// grows buffer by buffer as bytes arrive, never by the length a client announces. The
// bounds are the request's as Guard.Handler found them; a request that did not pass through
// a Guard gets the catalog's defaults and no in-flight cap.
//
// On a refusal the answer closes an HTTP/1 connection (the unread rest of the body is not
// drained); a refusal of Status StatusClientClosed has nobody to answer.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *Problem) {
	st := stateOf(r)
	if st == nil {
		st = &request{start: time.Now(), timeout: catalog.DefaultBodyTimeout, minRate: catalog.DefaultBodyMinRate, grace: catalog.BodyGrace}
	}
	rd := &reading{st: st, r: r, rc: http.NewResponseController(w), limit: limit}
	body, p := rd.read()
	if p != nil {
		closeUnread(w.Header(), r)
		rd.free()
		if st.refused != nil && p.Reason != "" {
			st.refused(p.Reason)
		}
		return nil, p
	}
	return body, nil
}

// reading is one body being read.
type reading struct {
	st     *request
	r      *http.Request
	rc     *http.ResponseController
	limit  int64
	chunks [][]byte
	total  int64
	// rateBound says the read deadline set last is the minimum rate's, not body_timeout's.
	rateBound bool
}

func (rd *reading) read() ([]byte, *Problem) {
	r := rd.r
	if r.ContentLength > rd.limit {
		return nil, tooLarge(rd.limit)
	}
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		rd.st.bodyDone.Store(true)
		return []byte{}, nil
	}
	for {
		buf, p := rd.room()
		if p != nil {
			return nil, p
		}
		rd.setDeadline()
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		rd.chunks[len(rd.chunks)-1] = buf[:len(buf)+n]
		rd.total += int64(n)
		if rd.total > rd.limit {
			return nil, tooLarge(rd.limit)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, rd.failed(err)
		}
	}
	// The body is in: no deadline may outlive it, or net/http's background read of an HTTP/1
	// connection would meet it and cancel the request's context in the middle of a stream.
	rd.rc.SetReadDeadline(time.Time{})
	rd.st.bodyDone.Store(true)
	return rd.join(), nil
}

// room is the buffer with space left to read into: the last one, or a new one taken from
// the budget.
func (rd *reading) room() ([]byte, *Problem) {
	if n := len(rd.chunks); n > 0 {
		if last := rd.chunks[n-1]; len(last) < cap(last) {
			return last, nil
		}
	}
	// Room for one byte past the limit shows a body of unknown length is over it; a body of
	// known length (net/http stops it there) needs no more than its length.
	want := rd.limit + 1 - rd.total
	if cl := rd.r.ContentLength; cl > 0 {
		want = max(cl-rd.total, 1)
	}
	size := chunkSize(len(rd.chunks), want)
	if !rd.st.take(int64(size)) {
		return nil, busy()
	}
	buf := newChunk(size)
	rd.chunks = append(rd.chunks, buf)
	return buf, nil
}

// setDeadline lets the next read wait until the body is due: body_timeout after the request
// began, or sooner when the bytes so far fall under the minimum rate (counted from the start,
// never before the grace, catalog.BodyGrace).
func (rd *reading) setDeadline() {
	st := rd.st
	due := st.start.Add(st.timeout)
	rd.rateBound = false
	if st.minRate > 0 {
		allowed := max(st.grace, time.Duration(float64(rd.total)/float64(st.minRate)*float64(time.Second)))
		if t := st.start.Add(allowed); t.Before(due) {
			due, rd.rateBound = t, true
		}
	}
	rd.rc.SetReadDeadline(due)
}

// failed names what ended a read that was not the body's end.
func (rd *reading) failed(err error) *Problem {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		rd.st.late.Store(true)
		return tooSlow(rd.st, rd.total, rd.r.ContentLength, rd.rateBound)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, net.ErrClosed),
		rd.r.Context().Err() != nil:
		return clientGone()
	}
	return unreadable(err)
}

// join is the body as one slice: the only buffer as it is, or the buffers copied into one
// of the body's size (theirs go back to the pools, and the budget keeps the body's size).
func (rd *reading) join() []byte {
	if len(rd.chunks) == 1 {
		return rd.chunks[0]
	}
	body := make([]byte, 0, rd.total)
	var held int64
	for _, c := range rd.chunks {
		body = append(body, c...)
		held += int64(cap(c))
		freeChunk(c)
	}
	rd.chunks = nil
	rd.st.give(held - rd.total)
	return body
}

// free gives a refused body's buffers back to the pools and their bytes to the budget.
func (rd *reading) free() {
	var held int64
	for _, c := range rd.chunks {
		held += int64(cap(c))
		freeChunk(c)
	}
	rd.chunks = nil
	rd.st.give(held)
}

// closeUnread answers with Connection: close on HTTP/1, where an unread body would otherwise
// be drained by net/http before the answer goes out (a body that never comes: forever). On
// HTTP/2 the stream is reset when the handler returns and the connection stays.
func closeUnread(h http.Header, r *http.Request) {
	if r.ProtoMajor == 1 {
		h.Set("Connection", "close")
	}
}
