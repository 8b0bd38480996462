//go:build faults

package supervise

import (
	"reflect"
	"testing"
)

// TestFaultPanicsOncePerArming: an armed fault point panics with Injected as many times as
// it was armed, then does nothing; other points are not touched.
func TestFaultPanicsOncePerArming(t *testing.T) {
	PanicAt("test.fault", 2)
	var got []any
	for range 4 {
		func() {
			defer func() { got = append(got, recover()) }()
			Fault("test.fault.other")
			Fault("test.fault")
		}()
	}
	want := []any{Injected{"test.fault"}, Injected{"test.fault"}, nil, nil}
	if !reflect.DeepEqual(got, want) || Armed("test.fault") != 0 {
		t.Fatalf("recovered %v (armed %d), want %v", got, Armed("test.fault"), want)
	}
}
