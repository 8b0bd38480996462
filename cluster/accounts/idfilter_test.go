package accounts

import (
	"fmt"
	"testing"
)

func TestTheIDFilterKnowsEveryIDStillRememberedAndForgetsWholeGenerations(t *testing.T) {
	f := newIDFilter()
	f.per = 2
	for i := range 6 { // generations: {0,1} at 1–2, {2,3} at 3–4, {4,5} at 5–6
		f.add(fmt.Sprint("id-", i), uint64(i+1))
	}
	steps := []struct {
		forgetFrom uint64
		gens       int
		kept       []int // ids that must still answer maybe
	}{
		{0, 3, []int{0, 1, 2, 3, 4, 5}},
		{2, 3, []int{0, 1, 2, 3, 4, 5}}, // id-0 is forgotten, but its generation holds id-1
		{3, 2, []int{2, 3, 4, 5}},
		{6, 1, []int{4, 5}},
		{7, 0, nil},
	}
	for _, s := range steps {
		f.forget(s.forgetFrom)
		if len(f.gens) != s.gens {
			t.Fatalf("after forget(%d): %d generations, want %d", s.forgetFrom, len(f.gens), s.gens)
		}
		for _, i := range s.kept {
			if !f.mayHave(fmt.Sprint("id-", i)) {
				t.Errorf("after forget(%d): id-%d is said to be absent", s.forgetFrom, i)
			}
		}
	}
	if f.mayHave("id-0") {
		t.Error("an empty filter says maybe")
	}
	var nilFilter *idFilter
	if !nilFilter.mayHave("anything") {
		t.Error("a filter never loaded must say maybe (the store decides)")
	}
}

// Ids never added are nearly all said absent: the filter saves the store read it exists for.
func TestTheIDFilterSaysAbsentForNearlyEveryNewID(t *testing.T) {
	f := newIDFilter()
	for i := range genIDs {
		f.add(fmt.Sprint("old-", i), 1)
	}
	maybe := 0
	const n = 100_000
	for i := range n {
		if f.mayHave(fmt.Sprint("new-", i)) {
			maybe++
		}
	}
	if maybe > n/50 { // 1% expected at a full generation
		t.Fatalf("%d of %d new ids said maybe", maybe, n)
	}
}
