package meta

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// A snapshot saved from one replica and recovered into a third store (which held other
// accounts) makes that store exactly the snapshot's: identical scan, the applied index, and
// entries applied after PrepareSnapshot are not in it.
func TestSnapshotRecoveredIntoAnotherStoreIsExactlyTheSnapshot(t *testing.T) {
	l := newSampleLog(t)
	src, srcStore := newReplica(t)
	update(t, src, entries(1, l.cmds[:9]...))
	want := scan(t, srcStore)
	captured, err := src.PrepareSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	update(t, src, entries(10, l.cmds[9:]...)) // Updates go on while the snapshot is saved
	var buf bytes.Buffer
	if err := src.SaveSnapshot(captured, &buf); err != nil {
		t.Fatal(err)
	}

	dst, dstStore := newReplica(t)
	other := must(dstStore.CreateAccount("other@example.com", "free"))(t)
	if err := dstStore.SetMeta("operator", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	var recovered []uint64
	dst.OnRecovered(func(index uint64) { recovered = append(recovered, index) })
	if err := dst.RecoverFromSnapshot(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got := scan(t, dstStore); !reflect.DeepEqual(got, want) {
		t.Fatalf("recovered store:\n%s\nwant the snapshot's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if dst.Applied() != 9 || !reflect.DeepEqual(recovered, []uint64{9}) {
		t.Errorf("applied %d, OnRecovered %v; want 9", dst.Applied(), recovered)
	}
	if _, err := dstStore.GetAccount(other.ID); err == nil {
		t.Error("an account the snapshot lacks survived the recovery")
	}
	if v, err := dstStore.GetMeta("operator"); err != nil || string(v) != "kept" {
		t.Errorf("operator meta outside the metadata key space = %q, %v", v, err)
	}
	// The recovered replica goes on from the snapshot's index like the source did.
	update(t, dst, entries(10, l.cmds[9:]...))
	if got, want := scan(t, dstStore), scan(t, srcStore); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the same entries the replicas differ:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A snapshot cut off, or one that is not a metadata snapshot, changes nothing.
func TestABrokenSnapshotChangesNothing(t *testing.T) {
	l := newSampleLog(t)
	src, _ := newReplica(t)
	update(t, src, entries(1, l.cmds[:4]...))
	var buf bytes.Buffer
	if err := src.SaveSnapshot(must(src.PrepareSnapshot())(t), &buf); err != nil {
		t.Fatal(err)
	}
	dst, dstStore := newReplica(t)
	update(t, dst, entries(1, l.cmds[2]))
	before := scan(t, dstStore)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"cut off before its end", buf.Bytes()[:buf.Len()-1], "snapshot cut off"},
		{"cut off in a pair", buf.Bytes()[:buf.Len()/2], "meta: recover"},
		{"not a snapshot", []byte("\xa5hello"), "not a metadata snapshot"},
		{"empty", nil, "not a metadata snapshot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := dst.RecoverFromSnapshot(bytes.NewReader(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if got := scan(t, dstStore); !reflect.DeepEqual(got, before) || dst.Applied() != 1 {
				t.Fatalf("a refused snapshot changed the store (applied %d)", dst.Applied())
			}
		})
	}
	if err := dst.SaveSnapshot("not captured", &buf); err == nil {
		t.Error("SaveSnapshot took a value PrepareSnapshot did not make")
	}
}
