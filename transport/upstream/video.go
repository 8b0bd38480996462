package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// The asynchronous video job API of a chat-format route (wire-formats.md §6.3):
// POST {base}/videos creates a job, GET {base}/videos/{id} polls it, and
// GET {base}/videos/{id}/content downloads the finished MP4. Auth, time-outs and the
// classification of failures are the Client's, as for every other call.

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

// maxJobBody caps a create or poll answer.
const maxJobBody = 1 << 20

// CreateVideoRequest is the call that starts a job: POST {base}/videos with body (the
// upstream create body as is). A non-empty idempotencyKey is sent as Idempotency-Key, so an
// upstream that honours it does not start a second job when a create is sent again after
// its answer was lost. Its answer is read with ReadJob.
func CreateVideoRequest(route *catalog.Route, t catalog.Timeouts, body []byte, idempotencyKey string) Request {
	req := Request{Route: route, Timeouts: t, Path: "/videos", Body: body}
	if idempotencyKey != "" {
		req.Header = http.Header{"Idempotency-Key": {idempotencyKey}}
	}
	return req
}

// PollVideo reads a job: GET {base}/videos/{id}. retryAfter is the upstream's Retry-After
// (on a 2xx answer, or on a 429, whose *Error carries it too), 0 when absent.
func (c *Client) PollVideo(ctx context.Context, route *catalog.Route, t catalog.Timeouts, id string) (Job, time.Duration, error) {
	resp, err := c.Get(ctx, Request{Route: route, Timeouts: t, Path: "/videos/" + url.PathEscape(id)})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return Job{}, e.RetryAfter, err
		}
		return Job{}, 0, err
	}
	wait := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	job, err := ReadJob(resp)
	return job, wait, err
}

// DownloadVideo streams a finished job's video: GET {base}/videos/{id}/content. The body
// enforces the idle time-out and must be closed; contentType is the upstream's header.
func (c *Client) DownloadVideo(ctx context.Context, route *catalog.Route, t catalog.Timeouts, id string) (io.ReadCloser, string, error) {
	resp, err := c.Get(ctx, Request{Route: route, Timeouts: t, Path: "/videos/" + url.PathEscape(id) + "/content"})
	if err != nil {
		return nil, "", err
	}
	return resp.Body, resp.Header.Get("Content-Type"), nil
}

// Get is Do for a GET (req.Body is not sent): the same auth, time-outs and errors.
func (c *Client) Get(ctx context.Context, req Request) (*Response, error) {
	return c.send(ctx, http.MethodGet, req)
}

// wireJob is the video object of §6.3, tolerant of a fractional progress and of an error
// given as a bare string.
type wireJob struct {
	ID       string          `json:"id"`
	Status   string          `json:"status"`
	Progress float64         `json:"progress"`
	Seconds  json.RawMessage `json:"seconds"`
	Error    json.RawMessage `json:"error"`
}

// ReadJob reads a create or poll answer (and closes it). An answer that is not a job is a
// ServerError: the route answered, but not with anything the gateway can use.
func ReadJob(resp *Response) (Job, error) {
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJobBody+1))
	if err != nil {
		return Job{}, &Error{Kind: Unreachable, Err: fmt.Errorf("reading the video job: %w", err)}
	}
	var w wireJob
	if len(data) > maxJobBody {
		err = fmt.Errorf("video job answer over %d bytes", maxJobBody)
	} else if err = json.Unmarshal(data, &w); err == nil && w.ID == "" {
		err = errors.New("video job answer without an id")
	}
	if err != nil {
		return Job{}, &Error{Kind: ServerError, Header: resp.Header, Body: truncate(data), Err: err}
	}
	j := Job{ID: w.ID, Status: w.Status, Progress: int(math.Max(0, math.Min(100, math.Floor(w.Progress)))), Seconds: jobSeconds(w.Seconds)}
	if e := bytes.TrimSpace(w.Error); len(e) > 0 && !bytes.Equal(e, []byte("null")) {
		var obj struct{ Code, Message string }
		if json.Unmarshal(e, &obj) == nil {
			j.Error = JobError{Code: obj.Code, Message: obj.Message}
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

func truncate(b []byte) []byte {
	if len(b) > 64<<10 {
		return b[:64<<10]
	}
	return b
}
