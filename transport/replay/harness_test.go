package replay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// prompt is what every client asks; the fake upstream answers with the recording anyway.
const prompt = "Replay the recorded answer."

// cell is one recording replayed through one client format, against its own catalog
// model (so cooldowns, log entries and counters of one cell never touch another).
type cell struct {
	rec    recording
	model  string
	client string
}

// result is what a client got, in canonical terms, plus what the SDK hides.
type result struct {
	answer
	Status     int
	Header     http.Header
	Raw        []byte // the body as the gateway sent it
	ErrType    string // the client format's error type or code
	ErrMessage string
	InStream   bool     // the error came inside a 200 stream
	Grammar    []string // stream grammar and SDK violations
	Dropped    float64  // conversion-dropped fields with "signature" in their name, counted during the cell
}

func (r *result) violate(format string, args ...any) {
	r.Grammar = append(r.Grammar, fmt.Sprintf(format, args...))
}

// harness is the gateway node, the fake upstream and the SDK clients.
type harness struct {
	env *nodetest.Env
	up  *fakeUpstream
	tap *tap
	oai openai.Client
	ant anthropic.Client
}

func newHarness(env *nodetest.Env, up *fakeUpstream) *harness {
	tp := &tap{base: env.Client.Transport}
	hc := &http.Client{Timeout: 20 * time.Second, Transport: tp}
	return &harness{env: env, up: up, tap: tp,
		oai: openai.NewClient(ooption.WithBaseURL(env.Node.URL+"/v1/"), ooption.WithAPIKey(env.Key),
			ooption.WithMaxRetries(0), ooption.WithHTTPClient(hc)),
		ant: anthropic.NewClient(aoption.WithBaseURL(env.Node.URL), aoption.WithAPIKey(env.Key),
			aoption.WithMaxRetries(0), aoption.WithHTTPClient(hc)),
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// tap keeps the status, headers and bytes of the last answer the SDKs received.
type tap struct {
	base http.RoundTripper
	mu   sync.Mutex
	last *tapped
}

type tapped struct {
	status int
	header http.Header
	body   bytes.Buffer
}

func (t *tap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	tp := &tapped{status: resp.StatusCode, header: resp.Header}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, &tp.body), resp.Body}
	t.mu.Lock()
	t.last = tp
	t.mu.Unlock()
	return resp, nil
}

// take returns the last answer and forgets it.
func (t *tap) take() *tapped {
	t.mu.Lock()
	defer t.mu.Unlock()
	tp := t.last
	t.last = nil
	if tp == nil {
		tp = &tapped{header: http.Header{}}
	}
	return tp
}

// fill copies the tapped answer into the result.
func (r *result) fill(tp *tapped) {
	r.Status, r.Header, r.Raw = tp.status, tp.header, tp.body.Bytes()
}
