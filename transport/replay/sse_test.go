package replay

import (
	"bytes"
	"strings"
)

// The suite's own SSE reading, independent of the gateway's codec/sse.

// splitEvents cuts a stream into its events with their separators, byte for byte, so
// concatenating the pieces gives the recording back. A tail without a blank line is the
// last piece.
func splitEvents(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i, n := bytes.Index(b, []byte("\n\n")), 2
		if j := bytes.Index(b, []byte("\r\n\r\n")); j >= 0 && (i < 0 || j < i) {
			i, n = j, 4
		}
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+n])
		b = b[i+n:]
	}
	return out
}

// frame is one SSE event: its event name (may be empty) and its data lines joined.
type frame struct {
	Name string
	Data string
	// Terminated says the event ended with a blank line (a tail without one is still
	// returned, so a reader can decide what an unterminated last event means).
	Terminated bool
}

// parseFrames reads the events of a stream; comment lines and events without data are
// skipped.
func parseFrames(b []byte) []frame {
	var out []frame
	for _, ev := range splitEvents(b) {
		text := strings.ReplaceAll(string(ev), "\r\n", "\n")
		f := frame{Terminated: strings.HasSuffix(text, "\n\n")}
		var data []string
		for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				f.Name = value
			case "data":
				data = append(data, value)
			}
		}
		if len(data) == 0 {
			continue
		}
		f.Data = strings.Join(data, "\n")
		out = append(out, f)
	}
	return out
}
