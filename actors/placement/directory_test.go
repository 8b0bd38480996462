package placement

import (
	"strings"
	"testing"
)

type recordingLocator struct{ sent []string }

func (r *recordingLocator) Send(kind, id string, msg any) { r.sent = append(r.sent, kind+"/"+id) }
func (r *recordingLocator) Stop(kind, id string)          {}

func TestDirectoryHandshake(t *testing.T) {
	loc := &recordingLocator{}
	d := NewDirectory("k", loc)
	if d.Route("e1", "m", false, nil) {
		t.Fatal("reached an entity with no incarnation without activating")
	}
	if !d.Route("e1", "m", true, nil) || !d.Route("e1", "m", true, nil) || d.Sent("e1") != 2 || !d.Active("e1") {
		t.Fatalf("sent %d active %v", d.Sent("e1"), d.Active("e1"))
	}
	first := strings.TrimPrefix(loc.sent[0], "k/")
	if !strings.HasPrefix(first, "e1#") || loc.sent[1] != loc.sent[0] {
		t.Fatalf("ids %v", loc.sent)
	}
	if d.Retire("e1", first, 1) {
		t.Fatal("retired with a message still on its way")
	}
	if !d.Retire("e1", first, 2) || d.Active("e1") || d.Count() != 0 {
		t.Fatal("did not retire after receiving everything")
	}
	d.Route("e1", "m", true, nil)
	if second := strings.TrimPrefix(loc.sent[2], "k/"); second == first {
		t.Fatalf("a new incarnation reused id %s", first)
	}
	if d.Route("e2", "m", true, func() bool { return true }) || d.Active("e2") {
		t.Fatal("a refused message was routed")
	}
	if got := d.Entities(); len(got) != 1 || got[0] != "e1" {
		t.Fatalf("entities %v", got)
	}
}
