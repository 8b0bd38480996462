package node

import (
	"io"
	"net/http"
	"runtime/debug"
)

// recoverPanics is the node's last line against a panicking handler: the
// request gets its 500 from answer (in its API's envelope, logged with the stack, counted)
// instead of a dropped connection, and the process lives on. Recorded API requests recover
// on their own first (transport/api, done), ending a begun stream in-band; what reaches this
// middleware after the status line went out cannot be mended, so the connection is cut
// (http.ErrAbortHandler) rather than a half answer passing for a whole one.
func recoverPanics(next http.Handler, answer func(w http.ResponseWriter, r *http.Request, v any, stack []byte, written bool)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackedWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v) // a handler's deliberate abort
			}
			written := tw.written
			answer(tw, r, v, debug.Stack(), written)
			if written {
				panic(http.ErrAbortHandler)
			}
		}()
		next.ServeHTTP(tw, r)
	})
}

// trackedWriter knows whether the status line went out. It keeps what the handlers rely on:
// Flush (event streams), Unwrap (http.ResponseController) and ReadFrom (sendfile for assets).
type trackedWriter struct {
	http.ResponseWriter
	written bool
}

func (t *trackedWriter) WriteHeader(status int) {
	if status >= 200 { // 1xx are informational: the real status is still to come
		t.written = true
	}
	t.ResponseWriter.WriteHeader(status)
}

func (t *trackedWriter) Write(p []byte) (int, error) {
	t.written = true
	return t.ResponseWriter.Write(p)
}

func (t *trackedWriter) ReadFrom(r io.Reader) (int64, error) {
	t.written = true
	return io.Copy(t.ResponseWriter, r)
}

func (t *trackedWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		t.written = true
		f.Flush()
	}
}

// Written reports whether the status line went out (transport/api asks it after a panic).
func (t *trackedWriter) Written() bool { return t.written }

func (t *trackedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
