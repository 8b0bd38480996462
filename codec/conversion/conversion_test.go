package conversion

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/converse"
	"github.com/modelgate/modelgate/codec/gemini"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/messages"
	"github.com/modelgate/modelgate/codec/reasoning"
	"github.com/modelgate/modelgate/codec/responses"
	"github.com/modelgate/modelgate/codec/sse"
)

var update = flag.Bool("update", false, "rewrite upstream.*, expect.* and loss.* in testdata/conversion from current behaviour (review every file before keeping it)")

const root = "../../testdata/conversion"

// Format names, as a catalog route's format spells them.
const (
	formatChat      = "chat"
	formatMessages  = "messages"
	formatGemini    = "gemini"
	formatResponses = "responses"
	formatConverse  = "converse" // upstream only: no client speaks it
)

type clientSpec struct {
	name   string
	format ir.ClientFormat
}

type upstreamSpec struct {
	name   string
	format ir.UpstreamFormat
	model  string // the route's upstream model id
}

var clients = []clientSpec{
	{formatChat, chat.Format},
	{formatMessages, messages.Format},
	{formatResponses, responses.Format},
	{formatGemini, gemini.Format},
}

var upstreams = []upstreamSpec{
	{formatChat, chat.Format, "gpt-4.1"},
	{formatMessages, messages.Format, "claude-sonnet-4-5"},
	{formatGemini, gemini.Format, "gemini-2.5-flash"},
	{formatResponses, responses.Format, "gpt-5"},
	// A Claude model id, so the family's additional fields (thinking, top_k, the matched stop
	// sequence) are exercised.
	{formatConverse, converse.Format, "anthropic.claude-sonnet-4-5-20250929-v1:0"},
}

// TestConversion runs every case through every client → upstream pair, plain and streamed:
// the upstream request, the dropped fields and the client's answer must match the goldens.
func TestConversion(t *testing.T) {
	rec := newRecorder()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range clients {
				for _, u := range upstreams {
					t.Run(c.name+"->"+u.name, func(t *testing.T) {
						p := &pair{tc: tc, c: c, u: u, dir: filepath.Join(root, tc.name), rec: rec}
						t.Run("plain", func(t *testing.T) { p.run(t, false) })
						t.Run("stream", func(t *testing.T) { p.run(t, true) })
					})
				}
			}
		})
	}
	if *update {
		rec.write(t)
	}
}

// pair is one case sent by one client format to one upstream format.
type pair struct {
	tc  testCase
	c   clientSpec
	u   upstreamSpec
	dir string
	rec *recorder
}

func (p *pair) run(t *testing.T, stream bool) {
	body := readFile(t, p.dir, "client."+p.c.name+".json")
	if stream {
		body = streamClientBody(t, p.c.name, body, !p.tc.noUsageChunk)
	}
	req, err := p.c.format.DecodeRequest(body)
	if err != nil {
		t.Fatalf("the %s client request does not decode: %v", p.c.name, err)
	}
	if p.c.name == formatGemini { // the model and the stream mode are in the URL path
		req.Model, req.Stream = "house-model", stream
	}
	if p.c.name == formatChat { // chat clients are also read by the light parse
		if _, err := chat.ParseRequest(body); err != nil {
			t.Fatalf("chat.ParseRequest: %v", err)
		}
	}
	decision := reasoning.Resolve(p.tc.model.reasoning, req.Thinking)

	var loss ir.Loss
	upBody, err := convertBody(req, decision, p.c.name, p.u, p.tc.model, &loss)
	if err != nil {
		t.Fatalf("EncodeRequest: %v", err)
	}
	p.checkUpstream(t, upBody, stream)
	p.checkLoss(t, loss.Fields(), stream)

	switch {
	case stream:
		p.answerStream(t, req, decision)
	case !p.tc.streamOnly: // a failure after the first byte has no whole-answer variant
		p.answerWhole(t, req, decision)
	}
}

// answerWhole runs the route's whole answer back to the client.
func (p *pair) answerWhole(t *testing.T, req *ir.Request, d reasoning.Decision) {
	answer := readFile(t, p.dir, "answer."+p.u.name+".json")
	got, err := wholeChain(p.c.format, p.u.format, req, req.Model, d, answer)
	if err != nil {
		t.Fatalf("the %s answer does not decode (the gateway would fail over): %v", p.u.name, err)
	}
	z := newNormalizer()
	norm, err := z.normalizeJSON(got)
	if err != nil {
		t.Fatalf("the %s client answer is not JSON: %v\n%s", p.c.name, err, got)
	}
	p.checkCallIDs(t, z, answer, false)
	p.checkExpect(t, "json", norm)
}

// answerStream runs the route's stream back to the client.
func (p *pair) answerStream(t *testing.T, req *ir.Request, d reasoning.Decision) {
	answer := readFile(t, p.dir, "answer."+p.u.name+".sse")
	raw, err := streamChain(p.c.format, p.u.format, req, req.Model, d, answer)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := readFrames(raw)
	if err != nil {
		t.Fatalf("the client stream is not well-formed SSE: %v\n%s", err, raw)
	}
	checkClientStream(t, p.c.name, fs)
	z := newNormalizer()
	norm := z.normalizeFrames(fs)
	p.checkCallIDs(t, z, answer, true)
	p.checkExpect(t, "sse", formatFrames(norm))
}

// convertBody is transport/api's generation.convertBody: a copy of the client's request with
// the resolved thinking, without the client format's unknown fields when the formats differ,
// and with max_tokens filled for messages routes.
func convertBody(src *ir.Request, d reasoning.Decision, client string, u upstreamSpec, m model, loss *ir.Loss) ([]byte, error) {
	req := *src
	req.Thinking = d.Thinking
	if u.name != client {
		for name := range req.Extra {
			loss.Drop(name)
		}
		req.Extra = nil
	}
	if req.MaxTokens == 0 && u.name == formatMessages {
		req.MaxTokens = m.maxOutputTokens
		if req.MaxTokens == 0 {
			req.MaxTokens = 4096
		}
	}
	return u.format.EncodeRequest(&req, u.model, loss)
}

// requestAwareEncoder is the Responses format's EncodeResponseFor, which the gateway prefers.
type requestAwareEncoder interface {
	EncodeResponseFor(r *ir.Response, req *ir.Request, model string) []byte
}

// wholeChain is transport/api's wholeConverted: the route's DecodeResponse, the inline
// reasoning split, the client's encoder.
func wholeChain(cf ir.ClientFormat, uf ir.UpstreamFormat, req *ir.Request, model string, d reasoning.Decision, answer []byte) ([]byte, error) {
	resp, err := uf.DecodeResponse(answer)
	if err != nil {
		return nil, err
	}
	if d.SplitInline {
		resp.Parts = reasoning.SplitParts(resp.Parts)
	}
	if e, ok := cf.(requestAwareEncoder); ok && req != nil {
		return e.EncodeResponseFor(resp, req, model), nil
	}
	return cf.EncodeResponse(resp, model), nil
}

// clientFrames is the client side of a stream: frames written as the gateway writes them.
type clientFrames struct {
	w       *sse.Writer
	started bool
}

func (f *clientFrames) Write(name string, data []byte) error {
	f.started = true
	return f.w.Write(name, data)
}

// streamInterrupted is the error transport/api's streamEnded hands the encoder when a stream
// stops without its end marker after the client got its first byte.
var streamInterrupted = &ir.Error{Status: 502, Kind: ir.ErrServer, Code: "stream_interrupted",
	Message: "the upstream stream broke before it finished; the answer is incomplete (request req-conversion-test)"}

// streamChain is transport/api's converted stream relay (convertFrames): each SSE event
// through the route's decoder, the inline reasoning splitter, and the client's encoder; Close after the end marker, or
// after what the decoder completes when the stream stops early but the answer had finished
// (ir.EndingDecoder); the interrupted error when it stops before.
func streamChain(cf ir.ClientFormat, uf ir.UpstreamFormat, req *ir.Request, model string, d reasoning.Decision, answer []byte) ([]byte, error) {
	var buf bytes.Buffer
	out := &clientFrames{w: sse.NewWriter(&buf, nil)}
	enc := cf.NewStreamEncoder(out, req, model)
	dec := uf.NewStreamDecoder()
	var split *reasoning.Splitter
	if d.SplitInline {
		split = &reasoning.Splitter{}
	}
	rd := sse.NewReader(bytes.NewReader(answer))
	for {
		ev, err := rd.Next()
		var events []ir.Event
		var done bool
		if err == nil {
			events, done, err = dec.Decode(ev.Name, ev.Data)
		}
		if err != nil {
			ender, ok := dec.(ir.EndingDecoder)
			finished := false
			if ok {
				events, _, finished = ender.End()
			}
			switch {
			case finished:
				done = true
			case !out.started:
				return nil, fmt.Errorf("the stream broke before the client got a byte (the gateway would fail over): %w", err)
			default:
				enc.Encode(ir.Event{Kind: ir.EvError, Err: streamInterrupted})
				return buf.Bytes(), nil
			}
		}
		for _, e := range events {
			filtered := []ir.Event{e}
			if split != nil {
				filtered = split.Filter(e)
			}
			for _, e := range filtered {
				if err := enc.Encode(e); err != nil {
					return nil, err
				}
			}
		}
		if done {
			enc.Close()
			return buf.Bytes(), nil
		}
	}
}

// streamClientBody is the streamed variant of a client request.
func streamClientBody(t *testing.T, client string, body []byte, includeUsage bool) []byte {
	if client == formatGemini {
		return body // streamGenerateContent is a path of its own
	}
	set := map[string]any{"stream": true}
	if client == formatChat && includeUsage {
		set["stream_options"] = map[string]bool{"include_usage": true}
	}
	return patchJSON(t, body, set)
}

// streamUpstreamBody is the streamed variant of an upstream request: the plain one plus the
// format's stream fields (gemini and converse say it in the path only).
func streamUpstreamBody(t *testing.T, upstream string, body []byte) []byte {
	switch upstream {
	case formatChat:
		return patchJSON(t, body, map[string]any{"stream": true, "stream_options": map[string]bool{"include_usage": true}})
	case formatGemini, formatConverse:
		return body
	}
	return patchJSON(t, body, map[string]any{"stream": true})
}

func patchJSON(t *testing.T, body []byte, set map[string]any) []byte {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("not a JSON object: %v", err)
	}
	for k, v := range set {
		m[k] = v
	}
	return encodeJSON(m, "")
}

// readLoss reads a loss golden: one field per line (a field may hold spaces); none when the
// file is absent.
func readLoss(name string) []string {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("missing golden: %v", err)
	}
	return b
}

// exists reports whether a golden file is there.
func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// upstreamFile is the golden request for this pair: the client's override, else the shared one.
func (p *pair) upstreamFile() string {
	if name := "upstream." + p.u.name + ".from-" + p.c.name + ".json"; exists(p.dir, name) {
		return name
	}
	return "upstream." + p.u.name + ".json"
}

// expectFile is the golden answer for this pair: the upstream's override, else the shared one.
func (p *pair) expectFile(ext string) string {
	if name := "expect." + p.c.name + ".from-" + p.u.name + "." + ext; exists(p.dir, name) {
		return name
	}
	return "expect." + p.c.name + "." + ext
}

func (p *pair) lossFile() string { return "loss." + p.c.name + "-" + p.u.name + ".txt" }

func (p *pair) checkUpstream(t *testing.T, got []byte, stream bool) {
	t.Helper()
	gotCanon, err := canonical(got)
	if err != nil {
		t.Fatalf("the upstream request is not JSON: %v\n%s", err, got)
	}
	if *update {
		if !stream {
			p.rec.upstream(p.tc.name, p.u.name, p.c.name, encodeJSON(mustDecode(t, got), "  "))
		}
		return
	}
	name := p.upstreamFile()
	want := readFile(t, p.dir, name)
	if stream {
		want = streamUpstreamBody(t, p.u.name, want)
	}
	wantCanon, err := canonical(want)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if gotCanon != wantCanon {
		t.Errorf("the %s upstream request differs from %s\n got: %s\nwant: %s", p.u.name, name, gotCanon, wantCanon)
	}
}

func (p *pair) checkLoss(t *testing.T, got []string, stream bool) {
	t.Helper()
	if *update {
		if !stream {
			p.rec.loss(p.tc.name, p.c.name, p.u.name, got)
		}
		return
	}
	want := readLoss(filepath.Join(p.dir, p.lossFile()))
	if !slices.Equal(got, want) {
		t.Errorf("dropped fields (%s) = %q, want %q", p.lossFile(), got, want)
	}
}

func (p *pair) checkExpect(t *testing.T, ext string, got []byte) {
	t.Helper()
	if *update {
		p.rec.expect(p.tc.name, p.c.name, ext, p.u.name, got)
		return
	}
	name := p.expectFile(ext)
	want := readFile(t, p.dir, name)
	if ext == "json" {
		g, _ := canonical(got)
		w, err := canonical(want)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g != w {
			t.Errorf("the %s client answer differs from %s\n got: %s\nwant: %s", p.c.name, name, g, w)
		}
		return
	}
	g, _ := canonicalFrames(got)
	w, err := canonicalFrames(want)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if d := diffFrames(g, w); d != "" {
		t.Errorf("the %s client stream differs from %s\n%s", p.c.name, name, d)
	}
}

var mintedCallID = regexp.MustCompile(`^call_[0-9A-Za-z]{24}$`)

// checkCallIDs: tool-call ids pass through unchanged; gemini calls, which come without ids,
// get minted call_<24 base62> ids.
func (p *pair) checkCallIDs(t *testing.T, client *normalizer, answer []byte, stream bool) {
	t.Helper()
	up := newNormalizer()
	if stream {
		fs, _ := readFrames(answer)
		up.normalizeFrames(fs)
	} else {
		up.normalizeJSON(answer)
	}
	if p.u.name == formatGemini {
		for _, id := range client.callIDs {
			if !mintedCallID.MatchString(id) {
				t.Errorf("tool-call id %q for a gemini call without id is not call_<24 base62>", id)
			}
		}
		return
	}
	if !slices.Equal(client.callIDs, up.callIDs) {
		t.Errorf("tool-call ids %q, want the upstream's %q unchanged", client.callIDs, up.callIDs)
	}
}

func mustDecode(t *testing.T, b []byte) any {
	t.Helper()
	v, err := decodeJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
