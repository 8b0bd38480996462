package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/modelgate/modelgate/codec/videos"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// The asynchronous video job API of a chat-format route (OpenAI's Videos API):
// POST {base}/videos creates a job, GET {base}/videos/{id} polls it, and
// GET {base}/videos/{id}/content downloads the finished MP4. Auth, time-outs and the
// classification of failures are the Client's, as for every other call; the job object
// itself is codec/videos'.

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
// (on a 2xx answer, or on a 429, whose *Error carries it too), 0 when absent. With
// DownloadVideo it is the video task actor's way to its job (actors/video's Upstream).
func (c *Client) PollVideo(ctx context.Context, route *catalog.Route, t catalog.Timeouts, id string) (videos.Job, time.Duration, error) {
	resp, err := c.Get(ctx, Request{Route: route, Timeouts: t, Path: "/videos/" + url.PathEscape(id)})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return videos.Job{}, e.RetryAfter, err
		}
		return videos.Job{}, 0, err
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

// ReadJob reads a create or poll answer (and closes it). An answer that is not a job is a
// ServerError: the route answered, but not with anything the gateway can use.
func ReadJob(resp *Response) (videos.Job, error) {
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJobBody+1))
	if err != nil {
		return videos.Job{}, &Error{Kind: Unreachable, Err: fmt.Errorf("reading the video job: %w", err)}
	}
	var job videos.Job
	if len(data) > maxJobBody {
		err = fmt.Errorf("video job answer over %d bytes", maxJobBody)
	} else {
		job, err = videos.DecodeJob(data)
	}
	if err != nil {
		return videos.Job{}, &Error{Kind: ServerError, Header: resp.Header, Body: truncate(data), Err: err}
	}
	return job, nil
}

func truncate(b []byte) []byte {
	if len(b) > 64<<10 {
		return b[:64<<10]
	}
	return b
}
