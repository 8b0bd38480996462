package video

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/modelgate/modelgate/codec/media"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/videos"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// What a task actor looks up and how it reads upstream answers.

func (a *taskActor) now() time.Time { return a.svc.clock.Now() }

// currentRoute is the task's route in the current catalog, else the one Create was given.
func (a *taskActor) currentRoute() *catalog.Route {
	if h := a.svc.deps.Catalog; h != nil {
		if c := h.Load(); c != nil {
			if r, ok := c.Route(a.rec.Route); ok {
				return r
			}
		}
	}
	return a.route
}

// Time-outs of one upstream call when neither the route nor the catalog sets them
// (decisions.md, "Limits not shown").
const (
	defaultConnect   = 10 * time.Second
	defaultFirstByte = 120 * time.Second
	defaultIdle      = 300 * time.Second
)

func (a *taskActor) timeouts(r *catalog.Route) catalog.Timeouts {
	var srv catalog.Server
	if h := a.svc.deps.Catalog; h != nil && h.Load() != nil {
		srv = h.Load().Server
	}
	t := r.Effective(srv)
	if t.Connect <= 0 {
		t.Connect = defaultConnect
	}
	if t.FirstByte <= 0 {
		t.FirstByte = defaultFirstByte
	}
	if t.IdleStream <= 0 {
		t.IdleStream = defaultIdle
	}
	return t
}

// plan is the plan the charge is made under: the catalog's plan of the stored name, else
// the overdraft stored at creation.
func (a *taskActor) plan() *catalog.Plan {
	if h := a.svc.deps.Catalog; h != nil && h.Load() != nil && a.rec.Plan != "" {
		if p, ok := h.Load().Plan(a.rec.Plan); ok {
			return p
		}
	}
	if a.rec.Plan == "" && a.rec.Overdraft == 0 {
		return nil
	}
	return &catalog.Plan{Name: a.rec.Plan, Overdraft: money.Amount(a.rec.Overdraft)}
}

// jobState maps an upstream job status to the task state it means; an unknown status is
// taken as work in progress.
func jobState(s string) string {
	switch strings.ToLower(s) {
	case videos.JobQueued, "pending", "submitted":
		return StatusQueued
	case videos.JobCompleted, "succeeded", "success":
		return StatusCompleted
	case videos.JobFailed, "cancelled", "canceled", "expired", "error":
		return StatusFailed
	}
	return StatusInProgress
}

// errNotVideo is a finished job whose file is not a video the gateway stores: fetching it
// again would bring the same bytes, so the task fails.
var errNotVideo = errors.New("the finished file is not an MP4 or WebM video")

// sniffVideo reads a download's first bytes: the type they are (one of media.Videos, whatever
// the upstream labelled them) and the whole file to store. Another type is errNotVideo.
func sniffVideo(body io.Reader, label string) (string, io.Reader, error) {
	file := bufio.NewReaderSize(body, media.SniffLen)
	head, err := file.Peek(media.SniffLen)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", nil, err
	}
	typ := media.Sniff(head)
	if !slices.Contains(media.Videos, typ) {
		return "", nil, fmt.Errorf("%w (labelled %q)", errNotVideo, label)
	}
	return typ, file, nil
}

func retryAfter(err error) time.Duration {
	var ue UpstreamError
	if errors.As(err, &ue) {
		return ue.RetryHint()
	}
	return 0
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
