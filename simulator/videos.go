package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OpenAI Videos (Sora), asynchronous jobs:
//
//	POST /v1/videos                  create a job (JSON, or multipart/form-data as the SDKs send)
//	GET  /v1/videos/{id}             poll it
//	GET  /v1/videos/{id}/content     the finished MP4 (404 until the job has completed)
//
// A job is "queued" at creation and while its progress rounds to 0, then "in_progress" with
// progress 1..99 growing linearly over Behavior.VideoDuration, then "completed" (progress 100)
// or, for the share Behavior.VideoFailFraction of jobs, "failed" (progress stays 99, error
// set). Status is computed from the clock at each poll, so a job advances whether or not
// anyone polls. Every request goes through the shared pipeline, so polls and downloads count
// in Calls and honour FirstByteDelay and FailStatus (with Retry-After), which lets a gateway's
// polling back-off be tested. Behavior.RetryAfter is also a polling hint: while a job has not
// ended, a successful poll carries Retry-After: RetryAfter (with or without FailStatus), so a
// gateway that treats a 2xx Retry-After as its minimum poll interval can be tested too; polls
// of an ended job, creates and downloads never carry it unless they are injected failures.
//
// Jobs belong to the route that created them: polling one through another route is a 404, as
// it would be on another provider account. The simulator keeps the newest maxStoredVideos
// jobs.

const (
	defaultVideoModel   = "sora-2"
	defaultVideoSize    = "720x1280"
	defaultVideoSeconds = 5
	minVideoSeconds     = 4
	maxVideoSeconds     = 12
	maxVideoPrompt      = 32000 // characters
	// failedVideoProgress is the progress a failed job reports: where it stopped.
	failedVideoProgress = 99
)

// videoFailure is the error of a job that VideoFailFraction made fail.
var videoFailure = obj{{"code", "video_generation_failed"},
	{"message", "The video could not be generated (simulated failure)."}}

// videoRequestKeys are the create request's fields the simulator reads.
var videoRequestKeys = []string{"model", "prompt", "seconds", "size"}

// videoObjectKeys are the video object's own fields; an unknown request field of the same
// name is not echoed.
var videoObjectKeys = []string{"id", "object", "model", "status", "progress", "created_at",
	"completed_at", "expires_at", "prompt", "size", "seconds", "remixed_from_video_id", "error"}

// videoJob is one generation job. It is immutable after creation; its status is a function
// of the clock.
type videoJob struct {
	id, route     string
	model, prompt string
	size          string
	width, height int
	seconds       int // requested
	made          int // the completed clip's length (at most seconds)
	created       time.Time
	duration      time.Duration
	fails         bool
	extra         obj // request fields the simulator does not read, echoed in request order
}

// state is the job's status and progress at now, and when it ended (zero while running).
func (j *videoJob) state(now time.Time) (status string, progress int, ended time.Time) {
	elapsed := now.Sub(j.created)
	if elapsed >= j.duration {
		ended = j.created.Add(j.duration)
		if j.fails {
			return "failed", failedVideoProgress, ended
		}
		return "completed", 100, ended
	}
	p := int(int64(elapsed) * 100 / int64(j.duration))
	if p <= 0 {
		return "queued", 0, time.Time{}
	}
	return "in_progress", min(p, 99), time.Time{}
}

// object is the video object at now.
func (j *videoJob) object(now time.Time) obj {
	status, progress, ended := j.state(now)
	var completedAt, errBody any // null while running / unless failed
	if !ended.IsZero() {
		completedAt = ended.Unix()
	}
	if status == "failed" {
		errBody = videoFailure
	}
	seconds := j.seconds
	if status == "completed" {
		seconds = j.made
	}
	o := obj{{"id", j.id}, {"object", "video"}, {"model", j.model}, {"status", status},
		{"progress", progress}, {"created_at", j.created.Unix()}, {"completed_at", completedAt},
		{"expires_at", nil}, {"prompt", j.prompt}, {"size", j.size},
		{"seconds", strconv.Itoa(seconds)}, {"remixed_from_video_id", nil}, {"error", errBody}}
	return append(o, j.extra...)
}

// mp4 is the job's finished video; equal prompt, size and seconds give equal bytes.
func (j *videoJob) mp4() []byte {
	w, h := videoFrameSize(j.width, j.height)
	return buildMP4(mediaSeed(j.prompt, 0), w, h, j.made)
}

func (s *Server) createVideo(ex *exchange) {
	job, apiErr := decodeVideoRequest(ex.r.Header.Get("Content-Type"), ex.body)
	if apiErr != nil {
		writeOpenAIError(ex.w, *apiErr)
		return
	}
	job.id = s.newID("video_")
	job.route = ex.route
	job.created = time.Now()
	job.duration = ex.behavior.videoDuration()
	job.made = job.seconds
	if m := ex.behavior.VideoOutputSeconds; m > 0 && m < job.seconds {
		job.made = m
	}
	job.fails = s.state(ex.route).judgeVideo(ex.behavior)
	s.videos.put(job.id, job)
	writeJSON(ex.w, http.StatusOK, job.object(job.created))
}

// job finds the video of the request's {video} on the request's route, or writes the 404.
func (s *Server) job(ex *exchange) (*videoJob, bool) {
	id := ex.r.PathValue("video")
	job, ok := s.videos.get(id)
	if !ok || job.route != ex.route {
		writeOpenAIError(ex.w, apiError{Status: http.StatusNotFound, Type: "invalid_request_error",
			Code: "video_not_found", Param: "video_id", Message: fmt.Sprintf("Video with id '%s' not found.", id)})
		return nil, false
	}
	return job, true
}

func (s *Server) getVideo(ex *exchange) {
	job, ok := s.job(ex)
	if !ok {
		return
	}
	now := time.Now()
	if _, _, ended := job.state(now); ended.IsZero() && ex.behavior.RetryAfter > 0 {
		ex.w.Header().Set("Retry-After", strconv.Itoa(ex.behavior.RetryAfter))
	}
	writeJSON(ex.w, http.StatusOK, job.object(now))
}

func (s *Server) videoContent(ex *exchange) {
	job, ok := s.job(ex)
	if !ok {
		return
	}
	if v := ex.r.URL.Query().Get("variant"); v != "" && v != "video" {
		writeOpenAIError(ex.w, *badRequest("variant", fmt.Sprintf("Invalid value: '%s'. The simulator serves only variant 'video'.", v)))
		return
	}
	if status, _, _ := job.state(time.Now()); status != "completed" {
		writeOpenAIError(ex.w, apiError{Status: http.StatusNotFound, Type: "invalid_request_error",
			Code: "video_not_ready", Message: fmt.Sprintf("Video '%s' has no content: its status is %s.", job.id, status)})
		return
	}
	serveBytes(ex.w, ex.r, "video/mp4", job.mp4())
}

// decodeVideoRequest reads a create request, JSON or multipart/form-data, into a job without
// id, route or timing.
func decodeVideoRequest(contentType string, body []byte) (*videoJob, *apiError) {
	fields, apiErr := videoFields(contentType, body)
	if apiErr != nil {
		return nil, apiErr
	}
	job := &videoJob{model: defaultVideoModel, size: defaultVideoSize, seconds: defaultVideoSeconds}
	hasPrompt := false
	for _, f := range fields {
		if !slices.Contains(videoRequestKeys, f.key) {
			if !slices.Contains(videoObjectKeys, f.key) {
				job.extra = append(job.extra, f)
			}
			continue
		}
		text, present, apiErr := fieldString(f)
		if apiErr != nil {
			return nil, apiErr
		}
		if !present {
			continue
		}
		switch f.key {
		case "model":
			if text != "" {
				job.model = text
			}
		case "prompt":
			job.prompt, hasPrompt = text, true
		case "seconds":
			n, err := strconv.Atoi(text)
			if err != nil || n < minVideoSeconds || n > maxVideoSeconds {
				return nil, badRequest("seconds", fmt.Sprintf("Invalid value: '%s'. Supported values are the strings '%d' through '%d'.", text, minVideoSeconds, maxVideoSeconds))
			}
			job.seconds = n
		case "size":
			job.size = text
		}
	}
	switch {
	case !hasPrompt:
		return nil, badRequest("prompt", "Missing required parameter: 'prompt'.")
	case strings.TrimSpace(job.prompt) == "":
		return nil, badRequest("prompt", "Invalid 'prompt': empty string. Expected a non-empty prompt.")
	case len([]rune(job.prompt)) > maxVideoPrompt:
		return nil, badRequest("prompt", fmt.Sprintf("Invalid 'prompt': string too long. Expected a string with maximum length %d.", maxVideoPrompt))
	}
	if e := checkVideoMedia(fields); e != nil {
		return nil, e
	}
	w, h, ok := parseSize(job.size)
	if !ok {
		return nil, badRequest("size", fmt.Sprintf("Invalid value: '%s'. Supported values are 'WxH' sizes with each side within 1..%d, such as '720x1280'.", job.size, maxMediaSide))
	}
	job.width, job.height = w, h
	return job, nil
}

// videoFields lists the request's fields in order: JSON values as json.RawMessage, form
// fields as strings. Uploaded files (input_reference) are accepted and dropped.
func videoFields(contentType string, body []byte) (obj, *apiError) {
	mediaType, params, _ := mime.ParseMediaType(contentType)
	if mediaType != "multipart/form-data" {
		keys, values, err := objectMembers(body)
		if err != nil {
			return nil, badRequest("", "We could not parse the JSON body of your request: "+err.Error())
		}
		fields := make(obj, len(keys))
		for i, k := range keys {
			fields[i] = member{k, values[i]}
		}
		return fields, nil
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var fields obj
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return fields, nil
		}
		if err != nil {
			return nil, badRequest("", "We could not parse the multipart body of your request: "+err.Error())
		}
		value, err := io.ReadAll(part)
		if err != nil {
			return nil, badRequest("", "We could not parse the multipart body of your request: "+err.Error())
		}
		if part.FileName() == "" {
			fields = append(fields, member{part.FormName(), string(value)})
		}
	}
}

// fieldString is a string field's value: a form field as it is, a JSON string decoded; a
// JSON null is absent, any other JSON type a 400 (the API takes "seconds" as a string, "8").
func fieldString(f member) (string, bool, *apiError) {
	raw, isJSON := f.value.(json.RawMessage)
	if !isJSON {
		s, _ := f.value.(string)
		return s, true, nil
	}
	if string(raw) == "null" {
		return "", false, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false, badRequest(f.key, fmt.Sprintf("Invalid type for '%s': expected a string, got %s.", f.key, raw))
	}
	return s, true, nil
}

// videoMediaKeys are the provider's frame and reference fields, each a URL it fetches (or a
// list of them for images and audios).
var videoMediaKeys = []string{"first_frame", "last_frame", "images", "audios"}

// checkVideoMedia refuses a frame or reference the provider would not fetch (anything but an
// http(s) or base64 data URL), and one given with mode "text", which uses none.
func checkVideoMedia(fields obj) *apiError {
	mode := ""
	for _, f := range fields {
		if f.key == "mode" {
			mode, _, _ = fieldString(f)
		}
	}
	for _, f := range fields {
		if !slices.Contains(videoMediaKeys, f.key) {
			continue
		}
		urls, ok := mediaList(f)
		if !ok {
			return badRequest(f.key, fmt.Sprintf("Invalid type for '%s': expected a URL string or an array of URL strings.", f.key))
		}
		if mode == "text" && len(urls) > 0 {
			return badRequest(f.key, fmt.Sprintf("Invalid '%s': not allowed with mode 'text'.", f.key))
		}
		for _, u := range urls {
			if !webOrDataURL(u) {
				e := badRequest(f.key, fmt.Sprintf("Invalid '%s': expected an http(s) URL or a base64 data URL, got '%s'.", f.key, u))
				e.Code = "invalid_url"
				return e
			}
		}
	}
	return nil
}

// mediaList is a media field's URLs: one string (a form field, or JSON) or a JSON array.
func mediaList(f member) ([]string, bool) {
	raw, isJSON := f.value.(json.RawMessage)
	if !isJSON {
		s, _ := f.value.(string)
		return []string{s}, true
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, true
		}
		return []string{one}, true
	}
	var many []string
	if string(raw) != "null" && json.Unmarshal(raw, &many) != nil {
		return nil, false
	}
	return many, true
}
