package edge

import (
	"io"
	"math"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// writer bounds each write to the client, not the answer: before every piece of at most
// catalog.WritePiece bytes and every flush it sets a write deadline timeout away, and on
// HTTP/2 clears it after (an HTTP/2 stream's deadline is a timer that would reset the stream
// even with no write pending, in the middle of a long stream waiting for its upstream). A client
// that stops reading is cut after timeout; a stream that simply lasts long is not.
//
// It also decides the Connection header as the status line goes out: close on HTTP/1 when
// the body was not read to its end, and close on any protocol for a connection over its
// address's cap (on HTTP/2 net/http turns that into a GOAWAY).
type writer struct {
	http.ResponseWriter
	rc          *http.ResponseController
	st          *request
	r           *http.Request
	timeout     time.Duration // catalog.WriteTimeout
	wroteHeader bool
	closeConn   bool
}

func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *writer) WriteHeader(code int) {
	if code >= 200 { // 1xx are informational: the real status is still to come
		w.statusLine()
	}
	w.ResponseWriter.WriteHeader(code)
}

// statusLine sets the Connection header, once, before the status line goes out.
func (w *writer) statusLine() {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	if w.closeConn {
		w.Header().Set("Connection", "close")
	} else if !w.st.bodyDone.Load() {
		closeUnread(w.Header(), w.r)
	}
}

func (w *writer) Write(p []byte) (int, error) {
	w.statusLine()
	if len(p) == 0 {
		return w.ResponseWriter.Write(p)
	}
	written := 0
	for len(p) > 0 {
		piece := p[:min(len(p), catalog.WritePiece)]
		w.bound()
		n, err := w.ResponseWriter.Write(piece)
		w.unbound()
		written += n
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

func (w *writer) Flush() {
	w.statusLine()
	w.bound()
	w.rc.Flush()
	w.unbound()
}

// ReadFrom copies src piece by piece, each within its deadline. A file inside an
// io.LimitedReader (what http.ServeContent writes) stays one LimitedReader deep, so
// net/http still sends it with sendfile.
func (w *writer) ReadFrom(src io.Reader) (int64, error) {
	w.statusLine()
	lr, ok := src.(*io.LimitedReader)
	if !ok {
		lr = &io.LimitedReader{R: src, N: math.MaxInt64}
	}
	var total int64
	for lr.N > 0 {
		piece := min(lr.N, catalog.WritePiece)
		w.bound()
		n, err := io.Copy(w.ResponseWriter, &io.LimitedReader{R: lr.R, N: piece})
		w.unbound()
		total += n
		lr.N -= n
		if err != nil || n < piece {
			return total, err
		}
	}
	return total, nil
}

func (w *writer) bound() { w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) }

// unbound clears the deadline bound set, on HTTP/2 only: there it is a timer that would reset
// a stream waiting for its upstream. An HTTP/1 connection's deadline only bears on a write,
// and every write through w sets its own first, so clearing it would be a second deadline
// update per write for nothing.
func (w *writer) unbound() {
	if w.r.ProtoMajor != 1 {
		w.rc.SetWriteDeadline(time.Time{})
	}
}

// finish runs when the handler returns: a status line not yet sent gets its Connection
// header, and on HTTP/1 what net/http still flushes (the buffered end, a chunked trailer) is
// bounded too (net/http clears the deadline after). An unread body is then given
// unreadLinger: net/http reads what is left of it (up to 256 KiB) after the answer went out,
// so that closing the connection does not reset it under an answer the client has not read
// yet; a body that does not come in that time is not waited for, and one that already
// missed its deadline (408) not at all.
func (w *writer) finish() {
	w.statusLine()
	if w.r.ProtoMajor != 1 {
		return
	}
	w.bound()
	if !w.st.bodyDone.Load() && !w.st.late.Load() {
		w.rc.SetReadDeadline(time.Now().Add(unreadLinger))
	}
}

// unreadLinger is net/http's own wait before it closes a connection with unread input
// (rstAvoidanceDelay).
const unreadLinger = 500 * time.Millisecond
