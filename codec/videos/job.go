package videos

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
)

// The job answers of OpenAI's asynchronous Videos API: a create and a poll both answer
// with the video object read here. transport/upstream fetches them; actors/video
// follows the job they describe.

// Upstream job states.
const (
	JobQueued     = "queued"
	JobInProgress = "in_progress"
	JobCompleted  = "completed"
	JobFailed     = "failed"
)

// Job is an upstream video job as its create and poll answers describe it.
type Job struct {
	ID       string
	Status   string // JobQueued, JobInProgress, JobCompleted, JobFailed (or what the upstream says)
	Progress int    // 0-100 (a fractional progress is rounded down)
	Seconds  int    // the clip's length as the upstream states it ("8" or 8); 0 when it does not
	Error    JobError
}

// JobError is a failed job's reason.
type JobError struct {
	Code    string
	Message string
}

// wireJob is the Videos API's video object, tolerant of a fractional progress and of an error
// given as a bare string.
type wireJob struct {
	ID       string          `json:"id"`
	Status   string          `json:"status"`
	Progress float64         `json:"progress"`
	Seconds  json.RawMessage `json:"seconds"`
	Error    json.RawMessage `json:"error"`
}

// DecodeJob reads a create or poll answer's body. A body that is not a job with an id is
// an error: the upstream answered, but with nothing a task can follow.
func DecodeJob(data []byte) (Job, error) {
	var w wireJob
	if err := json.Unmarshal(data, &w); err != nil {
		return Job{}, err
	}
	if w.ID == "" {
		return Job{}, errors.New("video job answer without an id")
	}
	j := Job{ID: w.ID, Status: w.Status, Progress: int(math.Max(0, math.Min(100, math.Floor(w.Progress)))), Seconds: jobSeconds(w.Seconds)}
	if e := bytes.TrimSpace(w.Error); len(e) > 0 && !bytes.Equal(e, []byte("null")) {
		var obj struct{ Code, Message json.RawMessage }
		if json.Unmarshal(e, &obj) == nil {
			// A numeric code (some upstreams) is its digits; one odd member never hides the other.
			j.Error = JobError{Code: check.ScalarText(obj.Code), Message: check.ScalarText(obj.Message)}
		} else {
			json.Unmarshal(e, &j.Error.Message)
		}
	}
	return j, nil
}

// jobSeconds reads the API's "seconds" (a string, "8"; a number is taken too); anything
// else is 0, unknown.
func jobSeconds(raw json.RawMessage) int {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw)
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
