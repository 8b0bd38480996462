package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/reasoning"
	"github.com/modelgate/modelgate/codec/sse"
	"github.com/modelgate/modelgate/transport/upstream"
)

// A streamed answer is relayed by one pump, as net/http/httputil.ReverseProxy relays a body
// with one copy loop and a flushing writer. The pump reads the upstream's events; a frame
// handler (below: same-format chat relay, same-format pass-through, converted) turns
// each into the client's frames and says what each output is. The pump alone decides what
// follows from that:
//
//   - an error before the answer's first content fails over to the next route, invisibly:
//     the client has seen nothing (streamOut holds the opening frames);
//   - the first content commits the stream (the status line, then the held frames);
//   - the answer's finish or an error holds every later frame back as the stream's end;
//   - a stream that stops without its end marker is failed over before its first byte, or
//     ended with the client format's error event after it;
//   - at the end marker the route is told, the call is settled, and only then does the held
//     end go out: the call is durable before the client's last byte.

// frameHandler turns upstream events into the client's frames.
type frameHandler interface {
	// frame reads one upstream event into outputs (how many: n). done: it was the stream's
	// end marker. An error (the upstream's frame unreadable) goes to ended.
	frame(x *exchange, ev sse.Event, out *streamOut) (n int, done bool, err error)
	// ended reads a stream that stopped without its end marker: finished says the answer had
	// ended all the same, with n outputs that complete it.
	ended(x *exchange) (n int, finished bool)
	// piece says what output i of the last frame is.
	piece(i int) piece
	// observe takes output i's usage, errors and losses into the exchange.
	observe(x *exchange, i int)
	// write sends output i to the client's stream.
	write(x *exchange, i int, out *streamOut) error
	// close completes a stream that reached its end marker.
	close(x *exchange)
	// breakEncoder is what ends a broken stream in the client's format (nil: nothing can).
	breakEncoder(x *exchange, out *streamOut) ir.StreamEncoder
}

// piece is what the pump must know about one output of a frame handler.
type piece struct {
	err       *ir.Error // an error the upstream reported in it
	content   bool      // it begins or carries the answer: the stream commits before it
	finishing bool      // it is the answer's end: it and every later frame wait for the record
}

// relayStream opens the client's stream and runs the pump with the frame handler for the
// route's format: same says it is the client's. It returns false when the attempt broke
// before the client saw a byte (the next route is tried), true once the answer is over,
// however it ended.
func (s *Server) relayStream(x *exchange, a *attempt, same bool) bool {
	defer a.resp.Body.Close()
	t, answering := x.turn, s.answering(a)
	// The stream tells, when it commits, route health that the attempt is answering and the
	// exchange that its answer began, with the headers that describe the translation.
	out := newStreamOut(x.w, func() {
		answering()
		t.announce(x.w)
		x.status = http.StatusOK
		x.firstByte()
	})
	x.out = out
	var h frameHandler
	switch {
	case same && t.chatReq != nil:
		h = newChatFrames(t)
	case same:
		h = newPassFrames(a.route.Format)
	default:
		h = newConvertFrames(t, a.route.Format, out)
	}
	return s.pump(x, a, h)
}

// pump is the copy loop.
func (s *Server) pump(x *exchange, a *attempt, h frameHandler) bool {
	out := x.out
	rd := sse.NewReader(out.upstreamBody(a.resp.Body))
	for {
		ev, err := rd.Next()
		n, done := 0, false
		if err == nil {
			n, done, err = h.frame(x, ev, out)
		}
		if err != nil {
			var finished bool
			if n, finished = h.ended(x); !finished {
				return s.streamBroke(x, a, h.breakEncoder(x, out), err)
			}
			done = true // the upstream left out its end marker: it is sent in its place
		}
		for i := range n {
			p := h.piece(i)
			if p.err != nil && !out.started && s.failOverEarly(x, a, p.err) {
				return false
			}
			h.observe(x, i)
			if p.content && out.commit() != nil {
				return s.clientLeft(x, a)
			}
			if p.finishing {
				out.finishing()
			}
			if h.write(x, i, out) != nil {
				return s.clientLeft(x, a)
			}
		}
		if done {
			if out.commit() != nil {
				return s.clientLeft(x, a)
			}
			out.finishing()
			h.close(x)
			s.streamDone(x, a)
			s.settleStream(x) // durable, then the end marker
			return true
		}
	}
}

// streamDone tells the route how a stream that reached its end marker went, and sets the
// call's status: an error the upstream reported inside the stream is the answer's.
func (ro *router) streamDone(x *exchange, a *attempt) {
	e := x.streamErr
	switch {
	case e == nil:
		ro.finish(a, routehealth.Succeeded, http.StatusOK)
		return
	case e.Kind == ir.ErrInvalidRequest || e.Kind == ir.ErrTooLarge:
		// The upstream refused the request itself once it had begun to answer (a context
		// length found out while streaming): the client's fault, as the same refusal before
		// the first byte is, and no mark against the route.
		ro.tellRoute(x, a, e)
		x.status = http.StatusBadRequest
		if e.Status >= 400 && e.Status < 500 {
			x.status = e.Status
		}
		return
	}
	// The upstream reported an error in the stream: the route failed this request, was rate
	// limited or refused it for billing, and the call is refunded.
	ro.tellRoute(x, a, e)
	x.status = e.Status
	if x.status < 500 {
		x.status = http.StatusBadGateway
	}
}

// streamBroke handles a stream that stopped without its end marker: before the first byte it
// is failed over (false); after, the client gets its format's error event (enc). A stream
// that stopped because the client left is neither: the gateway cancelled the upstream read.
func (ro *router) streamBroke(x *exchange, a *attempt, enc ir.StreamEncoder, cause error) bool {
	if x.clientGone() {
		return ro.clientLeft(x, a)
	}
	out := x.out
	if !out.started {
		ro.finish(a, routehealth.Failed, 0)
		x.failed = true
		return false
	}
	ro.finish(a, routehealth.Failed, http.StatusOK)
	x.status = http.StatusBadGateway
	out.finishing()
	msg := "the upstream stream broke before it finished; the answer is incomplete"
	switch {
	case cause == upstream.ErrIdle:
		msg = "the upstream stream went silent past the idle time-out; the answer is incomplete"
	case errors.Is(cause, upstream.ErrCallTooLong):
		msg = "the call ran past the gateway's longest allowed call (" + x.catalog.Server.MaxCallDuration.String() + "); the answer is incomplete"
	case errors.Is(cause, sse.ErrTooLong):
		msg = "the upstream stream sent a line over " + strconv.Itoa(sse.MaxLine>>20) + " MiB, more than the gateway reads; the answer is incomplete"
	}
	if enc != nil {
		enc.Encode(ir.Event{Kind: ir.EvError, Err: &ir.Error{Status: http.StatusBadGateway, Kind: ir.ErrServer, Code: "stream_interrupted", Message: msg + " (request " + x.id + ")"}})
	}
	return true
}

// The three frame handlers.

// chatFrames relays a chat route's chunks to a chat client as they arrive (chat.Relay: the
// client's model name, tool-call indexes counted per call, the chat convention, the billing
// usage chunk dropped). A stream that stops after its finish_reason is whole: the client gets
// the data: [DONE] the upstream left out.
type chatFrames struct {
	relay *chat.Relay
	data  []byte // the frame to write
	done  bool
}

func newChatFrames(t *turn) *chatFrames {
	return &chatFrames{relay: chat.NewRelay(t.clientModel, t.chatReq.IncludeUsage, &t.loss)}
}

func (h *chatFrames) frame(_ *exchange, ev sse.Event, _ *streamOut) (int, bool, error) {
	var err error
	h.data, h.done, err = h.relay.Chunk(ev.Data)
	return 1, h.done, err
}

func (h *chatFrames) ended(*exchange) (int, bool) {
	if !h.relay.Finished() {
		return 0, false
	}
	h.data, h.done = []byte("[DONE]"), true
	return 1, true
}

func (h *chatFrames) piece(int) piece {
	e := h.relay.Err()
	return piece{err: e, content: h.relay.Content() || h.done, finishing: h.done || h.relay.Finished() || e != nil}
}

func (h *chatFrames) observe(x *exchange, _ int) {
	if u, ok := h.relay.Usage(); ok {
		x.usage = u
	}
}

func (h *chatFrames) write(x *exchange, _ int, out *streamOut) error {
	if h.data == nil {
		return nil
	}
	data := h.data
	if e := h.relay.Err(); e != nil && e.Kind == ir.ErrBilling {
		data = hideBillingFrame(data, x.id)
	}
	return out.Write("", data)
}

func (h *chatFrames) close(x *exchange) { x.streamErr = h.relay.Err() }

func (h *chatFrames) breakEncoder(x *exchange, out *streamOut) ir.StreamEncoder {
	return chat.NewStreamEncoder(out, nil, x.turn.clientModel)
}

// passFrames relays a same-format stream frame by frame with the client's model name; the
// route format's decoder reads usage, the end and errors on the side, from every frame but
// the content deltas after the first byte (contentDelta).
type passFrames struct {
	format string // the route's, which is the client's
	dec    ir.StreamDecoder
	events []ir.Event
	out    *ir.Frame   // the frame to write
	p      piece       // what the frame is (judge)
	blocks *openBlocks // messages: the blocks to close before the answer's end
	stops  [][]byte    // the content_block_stop frames that go before out
}

func newPassFrames(format string) *passFrames {
	h := &passFrames{format: format, dec: upstreamFormats[format].NewStreamDecoder()}
	if format == codec.FormatMessages {
		h.blocks = &openBlocks{}
	}
	return h
}

func (h *passFrames) frame(_ *exchange, ev sse.Event, out *streamOut) (int, bool, error) {
	h.events = nil
	done := false
	var err error
	if !(out.started && contentDelta(h.format, ev.Name, ev.Data)) {
		h.events, done, err = h.dec.Decode(ev.Name, ev.Data)
	}
	h.out = &ir.Frame{Name: string(ev.Name), Data: ev.Data}
	h.judge(done)
	h.stops = nil
	if h.blocks != nil {
		h.stops = h.blocks.before(ev.Name, ev.Data)
	}
	return len(h.stops) + 1, done, err
}

func (h *passFrames) ended(*exchange) (int, bool) {
	var finished bool
	h.events, h.out, finished = endedEarly(h.dec)
	h.judge(finished)
	return 1, finished
}

// judge works out what the frame is, once: its error, whether it carries content, whether
// the answer ends with it.
func (h *passFrames) judge(done bool) {
	failed := firstErr(h.events)
	content := failed != nil || done
	for _, e := range h.events {
		content = content || isContent(e)
	}
	h.p = piece{err: failed, content: content,
		finishing: done || failed != nil || finishes(h.events) || finishingDecoder(h.dec)}
}

// piece: the block stops a frame is preceded by are part of the answer already begun.
func (h *passFrames) piece(i int) piece {
	if i < len(h.stops) {
		return piece{}
	}
	return h.p
}

func (h *passFrames) observe(x *exchange, i int) {
	if i < len(h.stops) {
		return
	}
	for _, e := range h.events {
		x.observe(e)
	}
}

func (h *passFrames) write(x *exchange, i int, out *streamOut) error {
	if i < len(h.stops) {
		return out.Write("content_block_stop", h.stops[i])
	}
	if h.out == nil {
		return nil
	}
	data := nameModel(h.format, h.out.Data, x.turn.clientModel)
	if failed := h.p.err; failed != nil && failed.Kind == ir.ErrBilling {
		data = hideBillingFrame(data, x.id)
	}
	return out.Write(h.out.Name, data)
}

func (h *passFrames) close(*exchange) {}

// breakEncoder is made only to end a broken stream the client has begun to read.
func (h *passFrames) breakEncoder(x *exchange, out *streamOut) ir.StreamEncoder {
	if !out.started {
		return nil
	}
	return x.turn.spec.format.NewStreamEncoder(out, x.turn.req, x.turn.clientModel)
}

// convertFrames runs upstream events through the route format's decoder, the inline
// reasoning splitter when the model needs it, and the client format's encoder.
type convertFrames struct {
	dec      ir.StreamDecoder
	enc      ir.StreamEncoder
	split    *reasoning.Splitter
	events   []ir.Event // the outputs of the last frame
	splitOut []ir.Event // the splitter's outputs, reused
}

func newConvertFrames(t *turn, routeFormat string, out *streamOut) *convertFrames {
	req := t.req
	if req == nil {
		req = &ir.Request{IncludeUsage: t.chatReq.IncludeUsage}
	}
	h := &convertFrames{dec: upstreamFormats[routeFormat].NewStreamDecoder(), enc: t.spec.format.NewStreamEncoder(out, req, t.clientModel)}
	if t.decision.SplitInline {
		h.split = &reasoning.Splitter{}
	}
	out.enc = h.enc
	return h
}

func (h *convertFrames) frame(_ *exchange, ev sse.Event, _ *streamOut) (int, bool, error) {
	events, done, err := h.dec.Decode(ev.Name, ev.Data)
	return h.take(events), done, err
}

func (h *convertFrames) ended(*exchange) (int, bool) {
	events, _, finished := endedEarly(h.dec)
	if !finished {
		return 0, false
	}
	return h.take(events), true
}

// take makes a frame's events the outputs: as they are, or through the splitter when the
// model writes its reasoning inline.
func (h *convertFrames) take(events []ir.Event) int {
	if h.split == nil {
		h.events = events
		return len(events)
	}
	h.splitOut = h.splitOut[:0]
	for _, e := range events {
		h.splitOut = append(h.splitOut, h.split.Filter(e)...)
	}
	h.events = h.splitOut
	return len(h.events)
}

func (h *convertFrames) piece(i int) piece {
	e := h.events[i]
	p := piece{content: isContent(e) || e.Kind == ir.EvError, finishing: e.Kind == ir.EvFinish || e.Kind == ir.EvError}
	if e.Kind == ir.EvError {
		p.err = e.Err
	}
	return p
}

func (h *convertFrames) observe(x *exchange, i int) {
	x.observe(h.events[i])
	x.turn.eventLoss(h.events[i]) // too late for the header: counted in the metrics
}

func (h *convertFrames) write(x *exchange, i int, _ *streamOut) error {
	return h.enc.Encode(hideBilling(h.events[i], x.id))
}

func (h *convertFrames) close(*exchange) { h.enc.Close() }

func (h *convertFrames) breakEncoder(*exchange, *streamOut) ir.StreamEncoder { return h.enc }

// endedEarly asks the route format's decoder about a stream that stopped before its end
// marker: whether the answer had finished, and what completes it (ir.EndingDecoder).
func endedEarly(dec ir.StreamDecoder) ([]ir.Event, *ir.Frame, bool) {
	if e, ok := dec.(ir.EndingDecoder); ok {
		return e.End()
	}
	return nil, nil, false
}

// contentDelta reports a frame that a same-format relay, once its client has the first byte,
// passes without decoding: a content delta of the route's format (ir.DeltaSkipper).
func contentDelta(format string, name, data []byte) bool {
	ds, ok := upstreamFormats[format].(ir.DeltaSkipper)
	return ok && ds.ContentDelta(name, data)
}

// isContent reports an event that begins the answer proper: anything but the opening, usage
// and an error.
func isContent(e ir.Event) bool {
	switch e.Kind {
	case ir.EvStart, ir.EvUsage, ir.EvError:
		return false
	}
	return true
}

// finishes reports whether events hold the answer's finish.
func finishes(events []ir.Event) bool {
	for _, e := range events {
		if e.Kind == ir.EvFinish {
			return true
		}
	}
	return false
}

// finishingDecoder reports a decoder of a format without an end marker whose answer may end
// with any frame now (ir.FinishingDecoder).
func finishingDecoder(dec ir.StreamDecoder) bool {
	f, ok := dec.(ir.FinishingDecoder)
	return ok && f.Finishing()
}

// firstErr is the error among events, if any.
func firstErr(events []ir.Event) *ir.Error {
	for _, e := range events {
		if e.Kind == ir.EvError {
			return e.Err
		}
	}
	return nil
}

// billingNotice is what a client reads in place of a provider's billing refusal inside an
// answer that has begun: the refusal is the operator's problem (quota or credit gone at the
// provider), and its words would read as the client's own quota.
func billingNotice(requestID string) string {
	return "the upstream provider stopped this answer for a reason on the gateway operator's side; the answer is incomplete and costs nothing (request " + requestID + ")"
}

// hideBilling is e with a billing refusal's message replaced by billingNotice; other errors
// keep the provider's words.
func hideBilling(e ir.Event, requestID string) ir.Event {
	if e.Kind != ir.EvError || e.Err == nil || e.Err.Kind != ir.ErrBilling {
		return e
	}
	err := *e.Err
	err.Message = billingNotice(requestID)
	e.Err = &err
	return e
}

// errorMessagePaths are where the formats put an in-band error's message: chat, messages and
// gemini `error.message`, responses' error event `message` (flat) or `error.message` (nested)
// and response.failed's `response.error.message`.
var errorMessagePaths = [][]string{{"error", "message"}, {"message"}, {"response", "error", "message"}}

// hideBillingFrame replaces a relayed error frame's message with billingNotice, keeping every
// other byte (the error's type and code stay the provider's).
func hideBillingFrame(data []byte, requestID string) []byte {
	msg, _ := json.Marshal(billingNotice(requestID))
	out, _ := jsonscan.Replace(data, msg, errorMessagePaths...)
	return out
}
