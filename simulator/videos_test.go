package simulator

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// createVideo creates a job on route and returns its decoded video object.
func createVideo(t *testing.T, base, route, body string) map[string]any {
	t.Helper()
	resp, data := post(t, base+"/r/"+route+"/v1/videos", body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create: status %d: %s", resp.StatusCode, data)
	}
	return object(t, string(data))
}

// pollVideo GETs the job and returns the response and its body.
func pollVideo(t *testing.T, base, route, id string) (*http.Response, []byte) {
	t.Helper()
	return call(t, http.MethodGet, base+"/r/"+route+"/v1/videos/"+id, "", "")
}

// waitVideo polls until the job has ended and returns its last object.
func waitVideo(t *testing.T, base, route, id string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		resp, data := pollVideo(t, base, route, id)
		if resp.StatusCode != http.StatusOK {
			continue
		}
		if v := object(t, string(data)); v["status"] == "completed" || v["status"] == "failed" {
			return v
		}
	}
	t.Fatalf("video %s did not end in 5 s", id)
	return nil
}

func TestVideoLifecycle(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("v", Behavior{VideoDuration: 300 * time.Millisecond})
	body := `{"model":"sora-2-pro","prompt":"A calico cat on a boat","seconds":"8","size":"1280x720","style":"noir","extra":{"a":[1,2]}}`
	created := createVideo(t, base, "v", body)
	id := str(created, "id")
	if !strings.HasPrefix(id, "video_") || num(created, "created_at") == 0 {
		t.Errorf("id %q, created_at %v", id, created["created_at"])
	}
	delete(created, "id")
	delete(created, "created_at")
	assertJSON(t, marshal(t, created), `{"object":"video","model":"sora-2-pro","status":"queued","progress":0,
		"completed_at":null,"expires_at":null,"prompt":"A calico cat on a boat","size":"1280x720","seconds":"8",
		"remixed_from_video_id":null,"error":null,"style":"noir","extra":{"a":[1,2]}}`)

	// Poll until done: status only moves forward, progress never drops, and the content is
	// there exactly when the job has completed.
	order := map[string]int{"queued": 0, "in_progress": 1, "completed": 2}
	lastStatus, lastProgress, polls, sawInProgress := "queued", 0, 0, false
	for lastStatus != "completed" {
		if polls++; polls > 500 {
			t.Fatal("the job did not complete")
		}
		resp, data := pollVideo(t, base, "v", id)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("poll: status %d: %s", resp.StatusCode, data)
		}
		if resp.Header.Get("Retry-After") != "" {
			t.Error("a successful poll carries Retry-After")
		}
		v := object(t, string(data))
		status, progress := str(v, "status"), num(v, "progress")
		if order[status] < order[lastStatus] || progress < lastProgress {
			t.Fatalf("went from %s %d to %s %d", lastStatus, lastProgress, status, progress)
		}
		switch status {
		case "queued":
			if progress != 0 {
				t.Errorf("queued with progress %d", progress)
			}
		case "in_progress":
			sawInProgress = true
			if progress < 1 || progress > 99 || v["completed_at"] != nil {
				t.Errorf("in_progress: %s", data)
			}
		case "completed":
			if progress != 100 || num(v, "completed_at") < num(v, "created_at") || v["error"] != nil {
				t.Errorf("completed: %s", data)
			}
		default:
			t.Fatalf("status %q", status)
		}
		contentResp, content := call(t, http.MethodGet, base+"/r/v/v1/videos/"+id+"/content", "", "")
		// The job may finish between the poll and this request (progress follows the clock),
		// so only a completed poll pins the answer; before it, 404 or a late 200 are both right.
		switch {
		case status == "completed" && contentResp.StatusCode != http.StatusOK:
			t.Errorf("completed, content answered %d: %.200s", contentResp.StatusCode, content)
		case status != "completed" && contentResp.StatusCode != http.StatusOK && str(decode(t, content), "error", "code") != "video_not_ready":
			t.Errorf("content before completion: %s", content)
		}
		lastStatus, lastProgress = status, progress
		time.Sleep(10 * time.Millisecond)
	}
	if !sawInProgress {
		t.Error("never saw in_progress")
	}
	// create + polls + content downloads, all counted.
	if got, want := s.Calls("v"), int64(1+2*polls); got != want {
		t.Errorf("Calls = %d, want %d", got, want)
	}

	resp, mp4 := call(t, http.MethodGet, base+"/r/v/v1/videos/"+id+"/content?variant=video", "", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "video/mp4" {
		t.Fatalf("content: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	checkMP4(t, mp4, 8, 64, 36)
	if want := buildMP4(mediaSeed("A calico cat on a boat", 0), 64, 36, 8); !bytes.Equal(mp4, want) {
		t.Error("the content is not the job's deterministic MP4")
	}
	// Another job with the same prompt, size and seconds has the same bytes.
	s.SetBehavior("v", Behavior{VideoDuration: time.Millisecond})
	other := createVideo(t, base, "v", `{"prompt":"A calico cat on a boat","seconds":"8","size":"1280x720"}`)
	waitVideo(t, base, "v", str(other, "id"))
	if _, again := call(t, http.MethodGet, base+"/r/v/v1/videos/"+str(other, "id")+"/content", "", ""); !bytes.Equal(again, mp4) {
		t.Error("equal jobs gave different MP4s")
	}
}

func TestVideoJobState(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	ok := &videoJob{created: t0, duration: time.Second}
	bad := &videoJob{created: t0, duration: time.Second, fails: true}
	tests := []struct {
		job      *videoJob
		elapsed  time.Duration
		status   string
		progress int
		ended    bool
	}{
		{ok, 0, "queued", 0, false},
		{ok, 9 * time.Millisecond, "queued", 0, false},
		{ok, 10 * time.Millisecond, "in_progress", 1, false},
		{ok, 500 * time.Millisecond, "in_progress", 50, false},
		{ok, 999 * time.Millisecond, "in_progress", 99, false},
		{ok, time.Second, "completed", 100, true},
		{ok, time.Hour, "completed", 100, true},
		{bad, 500 * time.Millisecond, "in_progress", 50, false},
		{bad, time.Second, "failed", 99, true},
	}
	for _, tc := range tests {
		status, progress, ended := tc.job.state(t0.Add(tc.elapsed))
		if status != tc.status || progress != tc.progress || ended.IsZero() == tc.ended {
			t.Errorf("fails=%v after %v: %s %d ended %v; want %s %d ended %v", tc.job.fails, tc.elapsed,
				status, progress, ended, tc.status, tc.progress, tc.ended)
		}
		if tc.ended && !ended.Equal(t0.Add(time.Second)) {
			t.Errorf("ended at %v, want created + duration", ended)
		}
	}
}

func TestVideoCreateRequests(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name, body, auth string
		status           int
		want             string // the object without id and created_at, or the error
	}{
		{"defaults", `{"prompt":"a dog"}`, "", 200, `{"object":"video","model":"sora-2","status":"queued","progress":0,
			"completed_at":null,"expires_at":null,"prompt":"a dog","size":"720x1280","seconds":"5","remixed_from_video_id":null,"error":null}`},
		{"nulls are absent; own keys not echoed", `{"prompt":"a dog","model":null,"seconds":"12","status":"done","id":"x","n":2}`, "", 200,
			`{"object":"video","model":"sora-2","status":"queued","progress":0,"completed_at":null,"expires_at":null,
			"prompt":"a dog","size":"720x1280","seconds":"12","remixed_from_video_id":null,"error":null,"n":2}`},
		{"no prompt", `{"model":"sora-2"}`, "", 400, `{"error":{"message":"Missing required parameter: 'prompt'.",
			"type":"invalid_request_error","param":"prompt","code":null}}`},
		{"empty body", ``, "", 400, `{"error":{"message":"Missing required parameter: 'prompt'.",
			"type":"invalid_request_error","param":"prompt","code":null}}`},
		{"empty prompt", `{"prompt":""}`, "", 400, `{"error":{"message":"Invalid 'prompt': empty string. Expected a non-empty prompt.",
			"type":"invalid_request_error","param":"prompt","code":null}}`},
		{"too long prompt", `{"prompt":"` + strings.Repeat("a", maxVideoPrompt+1) + `"}`, "", 400,
			`{"error":{"message":"Invalid 'prompt': string too long. Expected a string with maximum length 32000.",
			"type":"invalid_request_error","param":"prompt","code":null}}`},
		{"seconds 3", `{"prompt":"a","seconds":"3"}`, "", 400, `{"error":{"message":"Invalid value: '3'. Supported values are the strings '4' through '12'.",
			"type":"invalid_request_error","param":"seconds","code":null}}`},
		{"seconds 13", `{"prompt":"a","seconds":"13"}`, "", 400, `{"error":{"message":"Invalid value: '13'. Supported values are the strings '4' through '12'.",
			"type":"invalid_request_error","param":"seconds","code":null}}`},
		{"seconds as a number", `{"prompt":"a","seconds":8}`, "", 400, `{"error":{"message":"Invalid type for 'seconds': expected a string, got 8.",
			"type":"invalid_request_error","param":"seconds","code":null}}`},
		{"bad size", `{"prompt":"a","size":"hd"}`, "", 400, `{"error":{"message":"Invalid value: 'hd'. Supported values are 'WxH' sizes with each side within 1..4096, such as '720x1280'.",
			"type":"invalid_request_error","param":"size","code":null}}`},
		{"not an object", `["a"]`, "", 400, `{"error":{"message":"We could not parse the JSON body of your request: must be a JSON object",
			"type":"invalid_request_error","param":null,"code":null}}`},
		{"no credential", `{"prompt":"a"}`, "-", 401, `{"error":{"message":` + fmt.Sprintf("%q", openAI.unauthorized.Message) + `,
			"type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := call(t, http.MethodPost, base+"/v1/videos", tc.body, tc.auth)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, data)
			}
			if tc.status == 200 {
				data = without(t, data, "id", "created_at")
			}
			assertJSON(t, data, tc.want)
		})
	}
}

func TestVideoCreateMultipart(t *testing.T) {
	_, base := startSim(t)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range [][2]string{{"prompt", "a paper boat"}, {"model", "sora-2"}, {"seconds", "4"}, {"size", "1792x1024"},
		{"input_reference[image_url]", "https://example.com/a.png"}} {
		_ = mw.WriteField(f[0], f[1])
	}
	fw, _ := mw.CreateFormFile("input_reference", "ref.png")
	_, _ = fw.Write([]byte("\x89PNG not really"))
	_ = mw.Close()
	resp, data := callHeaders(t, http.MethodPost, base+"/v1/videos", buf.String(),
		map[string]string{"Authorization": "Bearer k", "Content-Type": mw.FormDataContentType()})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	assertJSON(t, without(t, data, "id", "created_at"), `{"object":"video","model":"sora-2","status":"queued","progress":0,
		"completed_at":null,"expires_at":null,"prompt":"a paper boat","size":"1792x1024","seconds":"4",
		"remixed_from_video_id":null,"error":null,"input_reference[image_url]":"https://example.com/a.png"}`)

	resp, data = callHeaders(t, http.MethodPost, base+"/v1/videos", "--x\r\nbroken", map[string]string{
		"Authorization": "Bearer k", "Content-Type": "multipart/form-data; boundary=x"})
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("broken multipart: %d %s", resp.StatusCode, data)
	}
}

func TestVideoFailFraction(t *testing.T) {
	s, base := startSim(t)
	tests := []struct {
		fraction float64
		jobs     int
		failing  []int // 1-based job numbers
	}{
		{0.5, 4, []int{2, 4}},
		{0.3, 10, []int{4, 7, 10}},
		{1, 2, []int{1, 2}},
		{0, 3, nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.fraction), func(t *testing.T) {
			s.SetBehavior("f", Behavior{VideoDuration: time.Millisecond, VideoFailFraction: tc.fraction})
			var ids []string
			for range tc.jobs {
				ids = append(ids, str(createVideo(t, base, "f", `{"prompt":"p","seconds":"4"}`), "id"))
			}
			var failing []int
			for k, id := range ids {
				v := waitVideo(t, base, "f", id)
				resp, data := call(t, http.MethodGet, base+"/r/f/v1/videos/"+id+"/content", "", "")
				if v["status"] == "failed" {
					failing = append(failing, k+1)
					assertJSON(t, marshal(t, map[string]any{"progress": v["progress"], "error": v["error"]}),
						`{"progress":99,"error":{"code":"video_generation_failed","message":"The video could not be generated (simulated failure)."}}`)
					if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(data), "its status is failed") {
						t.Errorf("content of a failed job: %d %s", resp.StatusCode, data)
					}
				} else if resp.StatusCode != http.StatusOK {
					t.Errorf("content of a completed job: %d", resp.StatusCode)
				}
			}
			if fmt.Sprint(failing) != fmt.Sprint(tc.failing) {
				t.Errorf("failing jobs %v, want %v", failing, tc.failing)
			}
		})
	}
}

// VideoOutputSeconds makes every completed clip shorter than asked (never longer): the job
// states the asked seconds while it runs and the made ones once completed, and the MP4
// lasts that long.
func TestVideoOutputSeconds(t *testing.T) {
	s, base := startSim(t)
	cases := []struct {
		output         int
		asked, running string
		completed      string
		mp4Seconds     int
	}{
		{output: 4, asked: "8", running: "8", completed: "4", mp4Seconds: 4},
		{output: 12, asked: "8", running: "8", completed: "8", mp4Seconds: 8},
		{output: 0, asked: "6", running: "6", completed: "6", mp4Seconds: 6},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.output, "of", c.asked), func(t *testing.T) {
			s.SetBehavior("o", Behavior{VideoDuration: 50 * time.Millisecond, VideoOutputSeconds: c.output})
			v := createVideo(t, base, "o", `{"prompt":"p","seconds":"`+c.asked+`","size":"1280x720"}`)
			if str(v, "seconds") != c.running {
				t.Fatalf("while running: seconds %v", v["seconds"])
			}
			if done := waitVideo(t, base, "o", str(v, "id")); str(done, "seconds") != c.completed {
				t.Fatalf("completed: seconds %v, want %s", done["seconds"], c.completed)
			}
			_, mp4 := call(t, http.MethodGet, base+"/r/o/v1/videos/"+str(v, "id")+"/content", "", "")
			checkMP4(t, mp4, c.mp4Seconds, 64, 36)
		})
	}
}

func TestVideoPollsHonourFailStatus(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("p", Behavior{VideoDuration: time.Hour})
	running := str(createVideo(t, base, "p", `{"prompt":"waves"}`), "id")
	s.SetBehavior("p", Behavior{VideoDuration: time.Millisecond})
	ended := str(createVideo(t, base, "p", `{"prompt":"waves"}`), "id")
	time.Sleep(20 * time.Millisecond)

	// Every second call is rate limited with Retry-After; a successful poll of a running job
	// carries the same Retry-After as a hint, one of an ended job none. Jobs keep the duration
	// they were created with.
	s.SetBehavior("p", Behavior{FailStatus: 429, RetryAfter: 3, FailFraction: 0.5, VideoDuration: time.Nanosecond})
	tests := []struct {
		id, status, retryAfter string
		code                   int
	}{
		{running, "queued", "3", 200},
		{running, "", "3", 429},
		{ended, "completed", "", 200},
		{ended, "", "3", 429},
	}
	for k, tc := range tests {
		resp, data := pollVideo(t, base, "p", tc.id)
		if resp.StatusCode != tc.code || resp.Header.Get("Retry-After") != tc.retryAfter {
			t.Errorf("poll %d: %d Retry-After %q, want %d %q: %s", k+1, resp.StatusCode,
				resp.Header.Get("Retry-After"), tc.code, tc.retryAfter, data)
			continue
		}
		if tc.code == 429 {
			assertJSON(t, data, `{"error":{"message":"Rate limit reached for requests (simulated). Please try again later.",
				"type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`)
		} else if got := str(decode(t, data), "status"); got != tc.status {
			t.Errorf("poll %d: status %q, want %q", k+1, got, tc.status)
		}
	}
	// RetryAfter without FailStatus is only the hint.
	s.SetBehavior("p", Behavior{RetryAfter: 2})
	if resp, _ := pollVideo(t, base, "p", running); resp.StatusCode != 200 || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("hint: %d %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for _, path := range []string{"/r/p/v1/videos/" + ended, "/r/p/v1/videos/" + ended + "/content"} {
		if resp, _ := call(t, http.MethodGet, base+path, "", ""); resp.StatusCode != 200 || resp.Header.Get("Retry-After") != "" {
			t.Errorf("GET %s: %d Retry-After %q", path, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
}

func TestVideoLookups(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("a", Behavior{VideoDuration: time.Millisecond})
	id := str(createVideo(t, base, "a", `{"prompt":"x","seconds":"4"}`), "id")
	waitVideo(t, base, "a", id)
	notFound := `{"error":{"message":"Video with id '%s' not found.","type":"invalid_request_error","param":"video_id","code":"video_not_found"}}`
	tests := []struct {
		name, path, auth string
		status           int
		body             string
	}{
		{"another route", "/r/b/v1/videos/" + id, "", 404, fmt.Sprintf(notFound, id)},
		{"the default route", "/v1/videos/" + id + "/content", "", 404, fmt.Sprintf(notFound, id)},
		{"unknown id", "/r/a/v1/videos/video_nope", "", 404, fmt.Sprintf(notFound, "video_nope")},
		{"thumbnail variant", "/r/a/v1/videos/" + id + "/content?variant=thumbnail", "", 400,
			`{"error":{"message":"Invalid value: 'thumbnail'. The simulator serves only variant 'video'.","type":"invalid_request_error","param":"variant","code":null}}`},
		{"poll without a credential", "/r/a/v1/videos/" + id, "-", 401, ""},
		{"content without a credential", "/r/a/v1/videos/" + id + "/content", "-", 401, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := call(t, http.MethodGet, base+tc.path, "", tc.auth)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, data)
			}
			if tc.body != "" {
				assertJSON(t, data, tc.body)
			}
		})
	}
	// A Range request gets part of the file, as from a file server.
	resp, data := callHeaders(t, http.MethodGet, base+"/r/a/v1/videos/"+id+"/content", "",
		map[string]string{"Authorization": "Bearer k", "Range": "bytes=4-7"})
	if resp.StatusCode != http.StatusPartialContent || string(data) != "ftyp" {
		t.Errorf("range: %d %q", resp.StatusCode, data)
	}
	if s.Calls("b") != 1 {
		t.Errorf("Calls(b) = %d", s.Calls("b"))
	}
}

// mp4Box is one parsed ISO-BMFF box.
type mp4Box struct {
	typ      string
	offset   int // of the box header in the file
	payload  []byte
	children []mp4Box
}

// mp4Containers are the box types whose payload is a list of boxes.
var mp4Containers = map[string]bool{"moov": true, "trak": true, "mdia": true, "minf": true, "dinf": true, "stbl": true}

// parseBoxes splits data (at file offset base) into boxes, failing unless the sizes tile it
// exactly.
func parseBoxes(t *testing.T, data []byte, base int) []mp4Box {
	t.Helper()
	var boxes []mp4Box
	for off := 0; off < len(data); {
		if len(data)-off < 8 {
			t.Fatalf("%d stray bytes at offset %d", len(data)-off, base+off)
		}
		size := int(binary.BigEndian.Uint32(data[off:]))
		if size < 8 || off+size > len(data) {
			t.Fatalf("box %q at %d has size %d, %d bytes left", data[off+4:off+8], base+off, size, len(data)-off)
		}
		b := mp4Box{typ: string(data[off+4 : off+8]), offset: base + off, payload: data[off+8 : off+size]}
		if mp4Containers[b.typ] {
			b.children = parseBoxes(t, b.payload, base+off+8)
		}
		boxes = append(boxes, b)
		off += size
	}
	return boxes
}

// find returns the box at the path of types below boxes.
func find(t *testing.T, boxes []mp4Box, types ...string) mp4Box {
	t.Helper()
	for _, b := range boxes {
		if b.typ == types[0] {
			if len(types) == 1 {
				return b
			}
			return find(t, b.children, types[1:]...)
		}
	}
	t.Fatalf("no %q box", types[0])
	return mp4Box{}
}

// checkMP4 walks the box tree and checks it describes seconds one-second w×h RGB frames held
// in mdat.
func checkMP4(t *testing.T, data []byte, seconds, w, h int) {
	t.Helper()
	be := binary.BigEndian
	boxes := parseBoxes(t, data, 0)
	var types []string
	for _, b := range boxes {
		types = append(types, b.typ)
	}
	if strings.Join(types, " ") != "ftyp moov mdat" {
		t.Fatalf("top-level boxes %v", types)
	}
	ftyp := boxes[0].payload
	if string(ftyp[:4]) != "isom" || string(ftyp[8:]) != "isomiso2mp41" {
		t.Errorf("ftyp %q", ftyp)
	}
	mvhd := find(t, boxes, "moov", "mvhd").payload
	timescale, duration := be.Uint32(mvhd[12:]), be.Uint32(mvhd[16:])
	if timescale == 0 || duration/timescale != uint32(seconds) || duration%timescale != 0 {
		t.Errorf("mvhd: duration %d / timescale %d, want %d s", duration, timescale, seconds)
	}
	tkhd := find(t, boxes, "moov", "trak", "tkhd").payload
	if be.Uint32(tkhd[20:]) != duration || be.Uint32(tkhd[76:]) != uint32(w)<<16 || be.Uint32(tkhd[80:]) != uint32(h)<<16 {
		t.Errorf("tkhd: duration %d, %d×%d (16.16)", be.Uint32(tkhd[20:]), be.Uint32(tkhd[76:]), be.Uint32(tkhd[80:]))
	}
	mdhd := find(t, boxes, "moov", "trak", "mdia", "mdhd").payload
	if be.Uint32(mdhd[16:])/be.Uint32(mdhd[12:]) != uint32(seconds) {
		t.Errorf("mdhd: duration %d / timescale %d", be.Uint32(mdhd[16:]), be.Uint32(mdhd[12:]))
	}
	if hdlr := find(t, boxes, "moov", "trak", "mdia", "hdlr").payload; string(hdlr[8:12]) != "vide" {
		t.Errorf("handler %q", hdlr[8:12])
	}
	stbl := []string{"moov", "trak", "mdia", "minf", "stbl"}
	stsd := find(t, boxes, append(stbl, "stsd")...).payload
	entry := stsd[8:]
	if string(entry[4:8]) != "raw " || be.Uint16(entry[32:]) != uint16(w) || be.Uint16(entry[34:]) != uint16(h) || be.Uint16(entry[82:]) != 24 {
		t.Errorf("sample entry %q %d×%d depth %d", entry[4:8], be.Uint16(entry[32:]), be.Uint16(entry[34:]), be.Uint16(entry[82:]))
	}
	stts := find(t, boxes, append(stbl, "stts")...).payload
	if be.Uint32(stts[4:]) != 1 || be.Uint32(stts[8:]) != uint32(seconds) || be.Uint32(stts[12:]) != timescale {
		t.Errorf("stts %x", stts)
	}
	stsz := find(t, boxes, append(stbl, "stsz")...).payload
	frame := w * h * 3
	if be.Uint32(stsz[4:]) != uint32(frame) || be.Uint32(stsz[8:]) != uint32(seconds) {
		t.Errorf("stsz: %d samples of %d bytes", be.Uint32(stsz[8:]), be.Uint32(stsz[4:]))
	}
	stco := find(t, boxes, append(stbl, "stco")...).payload
	mdat := boxes[2]
	if be.Uint32(stco[8:]) != uint32(mdat.offset+8) || len(mdat.payload) != seconds*frame {
		t.Errorf("chunk at %d, mdat payload at %d with %d bytes", be.Uint32(stco[8:]), mdat.offset+8, len(mdat.payload))
	}
}

func TestBuildMP4(t *testing.T) {
	tests := []struct {
		size          string
		seconds, w, h int
	}{
		{"720x1280", 4, 36, 64},
		{"1280x720", 12, 64, 36},
		{"1792x1024", 5, 64, 36},
		{"99x99", 7, 48, 48},
		{"1x1", 4, 2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.size, func(t *testing.T) {
			sw, sh, _ := parseSize(tc.size)
			w, h := videoFrameSize(sw, sh)
			if w != tc.w || h != tc.h {
				t.Fatalf("frame %dx%d, want %dx%d", w, h, tc.w, tc.h)
			}
			mp4 := buildMP4(mediaSeed("p", 0), w, h, tc.seconds)
			checkMP4(t, mp4, tc.seconds, w, h)
			// The first frame is the picture, as RGB rows.
			first := mp4[len(mp4)-tc.seconds*w*h*3:]
			img := picture(mediaSeed("p", 0), w, h, 0)
			for i := 0; i < w*h; i++ {
				if !bytes.Equal(first[3*i:3*i+3], img.Pix[4*i:4*i+3]) {
					t.Fatalf("pixel %d differs", i)
				}
			}
		})
	}
}
