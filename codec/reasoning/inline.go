package reasoning

import (
	"strings"

	"github.com/modelgate/modelgate/codec/ir"
)

const openTag, closeTag = "<think>", "</think>"

// SplitParts moves a leading <think>…</think> of a whole answer's text into a reasoning part.
func SplitParts(parts []ir.Part) []ir.Part {
	for i, p := range parts {
		if p.Kind != ir.PartText {
			continue
		}
		body := strings.TrimLeft(p.Text, " \t\r\n")
		if !strings.HasPrefix(body, openTag) {
			return parts
		}
		inner, rest, closed := strings.Cut(body[len(openTag):], closeTag)
		if !closed {
			rest = ""
		}
		out := append([]ir.Part{}, parts[:i]...)
		out = append(out, ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: strings.TrimSpace(inner)}})
		if rest = strings.TrimLeft(rest, "\r\n"); rest != "" {
			out = append(out, ir.Part{Kind: ir.PartText, Text: rest})
		}
		return append(out, parts[i+1:]...)
	}
	return parts
}

// Splitter moves a leading <think>…</think> out of a stream's text events, even when the
// tags arrive split across chunks. It holds back only what could still be part of a tag.
type Splitter struct {
	state   int // 0 before any text, 1 inside think, 2 after (pass-through)
	pending string
}

const (
	before = iota
	inside
	closing // just after </think>: newlines that separated it from the answer are dropped
	after
)

// Filter turns one event into the events to pass on.
func (s *Splitter) Filter(ev ir.Event) []ir.Event {
	if s.state == after {
		return []ir.Event{ev}
	}
	if ev.Kind != ir.EvText {
		if ev.Kind == ir.EvFinish || ev.Kind == ir.EvError || ev.Kind == ir.EvToolStart {
			return append(s.flush(), ev)
		}
		return []ir.Event{ev}
	}
	s.pending += ev.Text
	var out []ir.Event
	for {
		switch s.state {
		case before:
			trimmed := strings.TrimLeft(s.pending, " \t\r\n")
			if strings.HasPrefix(trimmed, openTag) {
				s.pending, s.state = trimmed[len(openTag):], inside
				continue
			}
			if strings.HasPrefix(openTag, trimmed) { // could still become "<think>"
				return out
			}
			s.state = after
			out = append(out, text(s.pending))
			s.pending = ""
			return out
		case inside:
			if i := strings.Index(s.pending, closeTag); i >= 0 {
				if i > 0 {
					out = append(out, ir.Event{Kind: ir.EvReasoning, Text: s.pending[:i]})
				}
				s.pending, s.state = s.pending[i+len(closeTag):], closing
				continue
			}
			keep := partialSuffix(s.pending, closeTag)
			if emit := s.pending[:len(s.pending)-keep]; emit != "" {
				out = append(out, ir.Event{Kind: ir.EvReasoning, Text: emit})
			}
			s.pending = s.pending[len(s.pending)-keep:]
			return out
		case closing:
			rest := strings.TrimLeft(s.pending, "\r\n")
			s.pending = ""
			if rest != "" {
				s.state = after
				out = append(out, text(rest))
			}
			return out
		default:
			return out
		}
	}
}

// flush releases held-back text when the stream moves on.
func (s *Splitter) flush() []ir.Event {
	p := s.pending
	s.pending = ""
	if p == "" {
		return nil
	}
	switch s.state {
	case inside:
		return []ir.Event{{Kind: ir.EvReasoning, Text: p}}
	case closing:
		return nil
	}
	s.state = after
	return []ir.Event{text(p)}
}

func text(s string) ir.Event { return ir.Event{Kind: ir.EvText, Text: s} }

// partialSuffix is the length of the longest suffix of s that is a proper prefix of tag.
func partialSuffix(s, tag string) int {
	for n := min(len(tag)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
