package videos

import "testing"

// DecodeJob reads the Videos API's job object as upstreams write it, clamping
// what is out of range, and refuses what no task could follow.
func TestDecodeJob(t *testing.T) {
	cases := []struct {
		name string
		body string
		want Job
		err  string
	}{
		{"queued", `{"id":"v1","status":"queued","progress":0}`, Job{ID: "v1", Status: JobQueued}, ""},
		{"progress clamped below", `{"id":"v1","status":"in_progress","progress":-3}`, Job{ID: "v1", Status: JobInProgress}, ""},
		{"progress clamped above", `{"id":"v1","status":"in_progress","progress":140.5}`, Job{ID: "v1", Status: JobInProgress, Progress: 100}, ""},
		{"negative seconds unknown", `{"id":"v1","status":"completed","seconds":"-4"}`, Job{ID: "v1", Status: JobCompleted}, ""},
		{"null error", `{"id":"v1","status":"completed","seconds":" 8 ","error":null}`, Job{ID: "v1", Status: JobCompleted, Seconds: 8}, ""},
		{"unknown status kept", `{"id":"v1","status":"rendering"}`, Job{ID: "v1", Status: "rendering"}, ""},
		{"error code only", `{"id":"v1","status":"failed","error":{"code":"timeout"}}`, Job{ID: "v1", Status: JobFailed, Error: JobError{Code: "timeout"}}, ""},
		{"numeric error code (FuzzDecodeJob)", `{"id":"v1","status":"failed","error":{"code":504,"message":"render timed out"}}`, Job{ID: "v1", Status: JobFailed, Error: JobError{Code: "504", Message: "render timed out"}}, ""},
		{"no id", `{"status":"queued"}`, Job{}, "video job answer without an id"},
		{"not an object", `[]`, Job{}, "json: cannot unmarshal array into Go value of type videos.wireJob"},
	}
	for _, c := range cases {
		got, err := DecodeJob([]byte(c.body))
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if got != c.want || msg != c.err {
			t.Errorf("%s: got %+v, %q; want %+v, %q", c.name, got, msg, c.want, c.err)
		}
	}
}
