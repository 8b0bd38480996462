package replay

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// Bedrock streams are AWS event-stream frames, not SSE. The suite reads them with its own
// decoder (the gateway uses the AWS SDK's), and encodes the recordings kept one decoded
// event per line with the AWS SDK's encoder, as Bedrock's servers do.
//
// A frame: total length (4 bytes), headers length (4), prelude CRC32 (4), headers, payload,
// message CRC32 (4). A header: name length (1), name, value type (1; 7 = string), value
// length (2), value.

// esFrame is one decoded frame: its string headers and payload.
type esFrame struct {
	Headers map[string]string
	Payload []byte
}

// splitFrames cuts a recorded event stream into its frames, byte for byte, so the fake
// upstream sends (and flushes) one frame at a time. A tail too short to be a frame is the
// last piece.
func splitFrames(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= 4 {
		n := int(binary.BigEndian.Uint32(b))
		if n < 16 || n > len(b) {
			break
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	if len(b) > 0 {
		out = append(out, b)
	}
	return out
}

// readFrames decodes a whole event stream, checking both CRCs of every frame.
func readFrames(b []byte) ([]esFrame, error) {
	var out []esFrame
	for i, raw := range splitFrames(b) {
		if len(raw) < 16 {
			return out, fmt.Errorf("frame %d: %d bytes, too short", i, len(raw))
		}
		total, hlen := binary.BigEndian.Uint32(raw[0:]), binary.BigEndian.Uint32(raw[4:])
		if int(total) != len(raw) || 12+int(hlen)+4 > len(raw) {
			return out, fmt.Errorf("frame %d: lengths %d/%d do not fit %d bytes", i, total, hlen, len(raw))
		}
		if crc32.ChecksumIEEE(raw[:8]) != binary.BigEndian.Uint32(raw[8:]) {
			return out, fmt.Errorf("frame %d: prelude CRC mismatch", i)
		}
		if crc32.ChecksumIEEE(raw[:len(raw)-4]) != binary.BigEndian.Uint32(raw[len(raw)-4:]) {
			return out, fmt.Errorf("frame %d: message CRC mismatch", i)
		}
		f := esFrame{Headers: map[string]string{}, Payload: raw[12+hlen : len(raw)-4]}
		h := raw[12 : 12+hlen]
		for len(h) > 0 {
			n := int(h[0])
			if len(h) < 1+n+3 || h[1+n] != 7 {
				return out, fmt.Errorf("frame %d: a header that is not a string", i)
			}
			name := string(h[1 : 1+n])
			vlen := int(binary.BigEndian.Uint16(h[2+n:]))
			if len(h) < 4+n+vlen {
				return out, fmt.Errorf("frame %d: header %s runs past the headers", i, name)
			}
			f.Headers[name] = string(h[4+n : 4+n+vlen])
			h = h[4+n+vlen:]
		}
		out = append(out, f)
	}
	return out, nil
}

// bedrockEvent is one event of a Bedrock stream as the suite reads it: its type (the
// Anthropic event type for InvokeModel, the :event-type for Converse, the :exception-type
// for an exception) and its JSON.
type bedrockEvent struct {
	Type      string
	JSON      []byte
	Exception bool
}

// bedrockEvents reads a Bedrock stream recording, whichever way it is kept.
func bedrockEvents(rec recording) ([]bedrockEvent, error) {
	if rec.Meta.Framing == framingLines {
		var out []bedrockEvent
		for _, line := range lines(rec.Body) {
			ev, err := lineEvent(rec.Meta.Format, line)
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
		}
		return out, nil
	}
	frames, err := readFrames(rec.Body)
	if err != nil {
		return nil, err
	}
	var out []bedrockEvent
	for _, f := range frames {
		switch f.Headers[":message-type"] {
		case "exception":
			out = append(out, bedrockEvent{Type: f.Headers[":exception-type"], JSON: f.Payload, Exception: true})
		case "event":
			if rec.Meta.Format != "messages" {
				out = append(out, bedrockEvent{Type: f.Headers[":event-type"], JSON: f.Payload})
				continue
			}
			var chunk struct {
				Bytes []byte `json:"bytes"` // base64 in the JSON
			}
			if err := json.Unmarshal(f.Payload, &chunk); err != nil || f.Headers[":event-type"] != "chunk" {
				return nil, fmt.Errorf("InvokeModel frame %q is not a chunk: %s", f.Headers[":event-type"], f.Payload)
			}
			v, _ := decode(chunk.Bytes)
			out = append(out, bedrockEvent{Type: str(v, "type"), JSON: chunk.Bytes})
		default:
			return nil, fmt.Errorf("frame with :message-type %q", f.Headers[":message-type"])
		}
	}
	return out, nil
}

// lineEvent reads one line of a decoded recording: an Anthropic event for InvokeModel,
// {"<eventType>": payload} for Converse.
func lineEvent(format, line string) (bedrockEvent, error) {
	if format == "messages" {
		v, err := decode([]byte(line))
		return bedrockEvent{Type: str(v, "type"), JSON: []byte(line)}, err
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &one); err != nil || len(one) != 1 {
		return bedrockEvent{}, fmt.Errorf("line %q is not one {eventType: payload}", line)
	}
	for k, v := range one {
		return bedrockEvent{Type: k, JSON: v}, nil
	}
	return bedrockEvent{}, nil
}

func lines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// encodeLines turns a decoded recording into event-stream frames as Bedrock sends them:
// InvokeModel events inside `chunk` frames as {"bytes": base64}, Converse payloads under
// their event type.
func encodeLines(rec recording) [][]byte {
	enc := eventstream.NewEncoder()
	var out [][]byte
	for _, line := range lines(rec.Body) {
		ev, err := lineEvent(rec.Meta.Format, line)
		if err != nil {
			continue // the reference reader reports it
		}
		typ, payload := ev.Type, ev.JSON
		if rec.Meta.Format == "messages" {
			typ = "chunk"
			payload, _ = json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString(ev.JSON)})
		}
		msg := eventstream.Message{Payload: payload}
		msg.Headers.Set(":event-type", eventstream.StringValue(typ))
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		msg.Headers.Set(":message-type", eventstream.StringValue("event"))
		var b bytes.Buffer
		if err := enc.Encode(&b, msg); err == nil {
			out = append(out, b.Bytes())
		}
	}
	return out
}

// invokeSSE writes InvokeModel events as the Anthropic SSE stream they carry, so the
// messages reader reads them; an exception becomes Anthropic's error event.
func invokeSSE(events []bedrockEvent) []byte {
	var b bytes.Buffer
	for _, ev := range events {
		if ev.Exception {
			v, _ := decode(ev.JSON)
			msg, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": ev.Type, "message": str(v, "message")}})
			fmt.Fprintf(&b, "event: error\ndata: %s\n\n", msg)
			continue
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", ev.Type, ev.JSON)
	}
	return b.Bytes()
}

// TestEventStreamFraming: the suite's own frame reader reads what the AWS SDK's encoder
// writes for a decoded recording, event for event, and refuses a frame whose CRC is wrong.
func TestEventStreamFraming(t *testing.T) {
	cases := []struct {
		format, line string
		wantType     string
		wantJSON     string
	}{
		{"converse", `{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Hi"}}}`, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi"}}`},
		{"converse", `{"messageStop":{"stopReason":"end_turn"}}`, "messageStop", `{"stopReason":"end_turn"}`},
		{"messages", `{"type":"message_stop"}`, "message_stop", `{"type":"message_stop"}`},
	}
	for _, c := range cases {
		t.Run(c.format+"/"+c.wantType, func(t *testing.T) {
			rec := recording{Body: []byte(c.line + "\n"), Meta: meta{Provider: "bedrock", Format: c.format, Stream: true, Framing: framingLines}}
			frames := encodeLines(rec)
			if len(frames) != 1 {
				t.Fatalf("%d frames, want 1", len(frames))
			}
			rec.Body, rec.Meta.Framing = frames[0], framingEventStream
			got, err := bedrockEvents(rec)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Type != c.wantType || string(got[0].JSON) != c.wantJSON || got[0].Exception {
				t.Errorf("events = %+v, want one %s %s", got, c.wantType, c.wantJSON)
			}
			bad := append([]byte(nil), frames[0]...)
			bad[len(bad)-5] ^= 1 // a payload byte: the message CRC no longer matches
			if _, err := readFrames(bad); err == nil || !strings.Contains(err.Error(), "message CRC mismatch") {
				t.Errorf("a corrupted frame reads with error %v, want a message CRC mismatch", err)
			}
		})
	}
}
