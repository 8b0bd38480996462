package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

type fakeSteps struct{}

func (fakeSteps) QuotaSteps() (memory, awaited, forwarded, late uint64) { return 7, 5, 3, 2 }

func (fakeSteps) ForwardBatches() (batches, steps uint64) { return 4, 11 }

func TestQuotaStepMetricsExposition(t *testing.T) {
	m := New()
	m.QuotaSteps(fakeSteps{})
	m.ForwardBatches(fakeSteps{})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, line := range []string{
		`modelgate_quota_steps_total{path="memory"} 7`,
		`modelgate_quota_steps_total{path="awaited"} 5`,
		`modelgate_quota_steps_total{path="forwarded"} 3`,
		`modelgate_late_settles_total 2`,
		`modelgate_forward_batches_total 4`,
		`modelgate_forward_batch_steps_total 11`,
	} {
		if !strings.Contains(string(body), line+"\n") {
			t.Errorf("exposition lacks %q:\n%s", line, body)
		}
	}
}
