package api

import (
	"errors"
	"fmt"
	"testing"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/persistence"
)

func TestACallThatCannotBeRecordedIsAnswered503WithTheRetryItsCauseNeeds(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		code       string
		retryAfter int
	}{
		{"the account's shard did not answer", fmt.Errorf("%w: shard 3 did not answer within 2s", quota.ErrUnavailable), "quota_unavailable", 1},
		{"the store refuses writes", persistence.ErrFull, "cannot_record", cannotRecordRetry},
		{"anything else", errors.New("boom"), "cannot_record", cannotRecordRetry},
	}
	for _, tc := range tests {
		e := errRecordFailed(tc.err)
		if e.Status != 503 || e.Code != tc.code || e.RetryAfter != tc.retryAfter {
			t.Errorf("%s: %d %s Retry-After %d, want 503 %s Retry-After %d", tc.name, e.Status, e.Code, e.RetryAfter, tc.code, tc.retryAfter)
		}
	}
}
