package edge_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// Write deadlines bound each write, not the answer: a client that stops reading is cut
// after the write timeout, on HTTP/1.1 and HTTP/2; a stream silent between its events for
// longer than the timeout, to a client that reads, is not.
func TestWriteDeadlineCutsOnlyAClientThatStopsReading(t *testing.T) {
	for _, c := range []struct {
		name    string
		http2   bool
		path    string
		read    bool
		cut     bool
		content string
	}{
		{name: "HTTP/1.1: a client that stops reading", path: "/stream?size=65536", cut: true},
		{name: "HTTP/2: a client that stops reading", http2: true, path: "/stream?size=65536", cut: true},
		{name: "HTTP/1.1: a stream silent longer than the timeout", path: "/stream?pieces=3&size=4&gap=1500", read: true, content: "xxxxxxxxxxxx"},
		{name: "HTTP/2: a stream silent longer than the timeout", http2: true, path: "/stream?pieces=3&size=4&gap=1500", read: true, content: "xxxxxxxxxxxx"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureOpts{writeTimeout: time.Second, http2: c.http2})
			resp, err := f.srv.Client().Get(f.srv.URL + c.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if want := map[bool]int{false: 1, true: 2}[c.http2]; resp.ProtoMajor != want {
				t.Fatalf("answered over HTTP/%d, want %d", resp.ProtoMajor, want)
			}
			if c.read {
				got, err := io.ReadAll(resp.Body)
				if err != nil || string(got) != c.content {
					t.Fatalf("read %q, %v; want %q", got, err, c.content)
				}
			}
			select {
			case err := <-f.writeErr:
				if (err != nil) != c.cut {
					t.Fatalf("the stream ended with %v; cut: %v", err, c.cut)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the stream's writes were not cut")
			}
		})
	}
}

// A file served with http.ServeContent goes out piece by piece, whole, and so does a range
// of it.
func TestWriterSendsFilesWhole(t *testing.T) {
	for _, c := range []struct {
		name, rng string
		want      []byte
		status    int
	}{
		{"the whole file", "", fileBytes, 200},
		{"a range across pieces", "bytes=1000-200999", fileBytes[1000:201000], 206},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{})
			req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/file", nil)
			if c.rng != "" {
				req.Header.Set("Range", c.rng)
			}
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != c.status || !bytes.Equal(got, c.want) {
				t.Fatalf("%d, %d bytes, %v; want %d, %d bytes equal to the file's", resp.StatusCode, len(got), err, c.status, len(c.want))
			}
		})
	}
}

// On HTTP/2 an unread body resets its stream only: the answer comes at once and the
// connection serves the next request.
func TestUnreadBodyOnHTTP2KeepsTheConnection(t *testing.T) {
	f := newFixture(t, fixtureOpts{http2: true})
	client := f.srv.Client()
	body, never := io.Pipe()
	defer never.Close()
	began := time.Now()
	resp, err := client.Post(f.srv.URL+"/unread", "application/json", body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(began); resp.StatusCode != 401 || resp.ProtoMajor != 2 || took > time.Second {
		t.Fatalf("HTTP/%d %d after %v, want HTTP/2 401 at once", resp.ProtoMajor, resp.StatusCode, took)
	}
	var reused bool
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.srv.URL+"/read", strings.NewReader("hello"))
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(got) != "5 bytes" || !reused {
		t.Fatalf("next request: %d %q, connection reused: %v; want 200 \"5 bytes\" on the same connection", resp.StatusCode, got, reused)
	}
}
