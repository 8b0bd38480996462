package video

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/persistence"
)

// Task states (the spec's video task status; decisions.md "Video").
const (
	StatusQueued     = persistence.TaskQueued
	StatusInProgress = persistence.TaskInProgress
	StatusCompleted  = persistence.TaskCompleted
	StatusFailed     = persistence.TaskFailed
)

// Error codes of a failed task that the gateway sets itself. A job the upstream failed
// keeps the upstream's code (CodeFailed when it gave none). A task abandoned at creation
// (CodeRejected, CodeNoRoute, CodeNoCredits) was never shown to its client, who got the
// error instead; the codes are for operators.
const (
	CodeFailed           = "video_generation_failed"  // the upstream failed the job without a code
	CodeRejected         = "upstream_rejected"        // the upstream refused the request itself (4xx)
	CodeNoRoute          = "upstream_unavailable"     // no route created the job (refusals, failures)
	CodeTimeout          = "video_generation_timeout" // not finished within Config.MaxAge
	CodeRouteUnavailable = "route_unavailable"        // the task's route left the catalog
	CodeUpstreamJobLost  = "upstream_job_not_found"   // the upstream answered 404/410 for the job
	CodeTooLarge         = "video_too_large"          // the finished video is over the asset store's cap
)

// Task is a video task as a client sees it. Its JSON (MarshalJSON) is the spec's video
// task object.
type Task struct {
	ID        string // "video_" + 24 base62; also the task_id and the video_id
	Account   string
	KeyID     string
	Model     string
	Status    string // StatusQueued, StatusInProgress, StatusCompleted, StatusFailed
	Progress  int    // 0 queued, 1-99 in progress (never decreasing), 100 completed
	Seconds   int
	Size      string
	CreatedAt time.Time
	// FinishedAt is when it became completed or failed (zero before).
	FinishedAt time.Time
	// URL is metadata.url, set when completed: the asset's public path
	// (/assets/vid/<id>.mp4). A handler that wants an absolute URL prefixes it before
	// encoding.
	URL string
	// Error is set when failed.
	Error *TaskError
	// Charged is what the task was billed from credits (completed, once settled).
	Charged int64
	// Settled reports that the quota step is done: seconds committed and the charge made
	// (completed), or the seconds released (failed).
	Settled bool
}

// TaskError is why a task failed.
type TaskError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// taskJSON fixes the key order of the wire object.
type taskJSON struct {
	ID        string        `json:"id"`
	TaskID    string        `json:"task_id"`
	VideoID   string        `json:"video_id"`
	Object    string        `json:"object"`
	Model     string        `json:"model"`
	Status    string        `json:"status"`
	Progress  int           `json:"progress"`
	Seconds   string        `json:"seconds"`
	Size      string        `json:"size"`
	CreatedAt int64         `json:"created_at"`
	Metadata  *taskMetadata `json:"metadata,omitempty"`
	Error     *TaskError    `json:"error,omitempty"`
}

type taskMetadata struct {
	URL string `json:"url"`
}

// MarshalJSON renders the spec's video task:
//
//	{"id","task_id","video_id","object":"video","model","status","progress","seconds","size",
//	 "created_at","metadata":{"url"} (completed only),"error":{"code","message"} (failed only)}
//
// seconds is a string ("5"), created_at unix seconds.
func (t Task) MarshalJSON() ([]byte, error) {
	j := taskJSON{ID: t.ID, TaskID: t.ID, VideoID: t.ID, Object: "video", Model: t.Model, Status: t.Status, Progress: t.Progress,
		Seconds: strconv.Itoa(t.Seconds), Size: t.Size, CreatedAt: t.CreatedAt.Unix()}
	if t.Status == StatusCompleted {
		j.Metadata = &taskMetadata{URL: t.URL}
	}
	if t.Status == StatusFailed && t.Error != nil {
		j.Error = t.Error
	}
	return json.Marshal(j)
}

// view is the client's picture of a stored task.
func view(r *persistence.VideoTask) Task {
	t := Task{ID: r.ID, Account: r.Account, KeyID: r.KeyID, Model: r.Model, Status: r.Status, Progress: r.Progress,
		Seconds: int(r.Seconds), Size: r.Size, CreatedAt: time.Unix(0, r.Created).UTC(), Charged: r.Charged, Settled: r.Settled}
	if r.Finished != 0 {
		t.FinishedAt = time.Unix(0, r.Finished).UTC()
	}
	switch r.Status {
	case StatusCompleted:
		t.URL = r.AssetPath
	case StatusFailed:
		t.Error = &TaskError{Code: r.ErrorCode, Message: r.ErrorMessage}
	}
	return t
}
