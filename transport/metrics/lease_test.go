package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

type fakeLease struct{ valid bool }

func (f fakeLease) LeaseValid() bool                { return f.valid }
func (fakeLease) KeyChecks() (lease, linear uint64) { return 41, 3 }

func TestReadLeaseMetricsExposition(t *testing.T) {
	for _, tc := range []struct {
		valid bool
		want  string
	}{{true, "modelgate_read_lease_valid 1"}, {false, "modelgate_read_lease_valid 0"}} {
		m := New()
		m.ReadLease(fakeLease{valid: tc.valid})
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		body, _ := io.ReadAll(rec.Body)
		for _, line := range []string{tc.want, `modelgate_key_checks_total{path="lease"} 41`, `modelgate_key_checks_total{path="linear"} 3`} {
			if !strings.Contains(string(body), line+"\n") {
				t.Errorf("exposition lacks %q:\n%s", line, body)
			}
		}
	}
}
