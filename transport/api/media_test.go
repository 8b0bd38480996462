package api_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

type imageResult struct {
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Data    []struct {
		URL     string `json:"url"`
		B64JSON string `json:"b64_json"`
	} `json:"data"`
	Usage struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		TotalTokens  int64 `json:"total_tokens"`
	} `json:"usage"`
}

func decodePNG(t *testing.T, b []byte) image.Rectangle {
	t.Helper()
	img, format, err := image.Decode(bytes.NewReader(b))
	if err != nil || format != "png" {
		t.Fatalf("not a PNG: %v %q", err, format)
	}
	return img.Bounds()
}

func TestImages(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	for _, model := range []string{"img", "gimg"} {
		t.Run(model+"/url", func(t *testing.T) {
			resp := env.Post("/v1/images/generations", env.Key, `{"model":"`+model+`","prompt":"a red fox","size":"1920x1080"}`)
			raw := nodetest.Read(t, resp)
			var out imageResult
			if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != 200 || len(out.Data) != 1 {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			if !strings.HasPrefix(out.Data[0].URL, env.Node.URL+"/assets/gen/") || !strings.HasSuffix(out.Data[0].URL, ".png") || out.Usage.TotalTokens != out.Usage.InputTokens+out.Usage.OutputTokens {
				t.Fatalf("result %s", raw)
			}
			got, err := http.Get(out.Data[0].URL)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(got.Body)
			got.Body.Close()
			if got.StatusCode != 200 || got.Header.Get("Content-Type") != "image/png" {
				t.Fatalf("asset %d %q", got.StatusCode, got.Header.Get("Content-Type"))
			}
			decodePNG(t, body)
		})
	}
	// The answer names the model the client sent, never the catalog's display name.
	t.Run("b64_json and the client's model id", func(t *testing.T) {
		resp := env.Post("/v1/images/generations", env.Key, `{"model":"img","prompt":"a cat","response_format":"b64_json"}`)
		var out imageResult
		json.Unmarshal(nodetest.Read(t, resp), &out)
		data, err := base64.StdEncoding.DecodeString(out.Data[0].B64JSON)
		if resp.StatusCode != 200 || err != nil || out.Model != "img" || out.Data[0].URL != "" {
			t.Fatalf("%d %+v", resp.StatusCode, out)
		}
		decodePNG(t, data)
	})
	// The size sent upstream is the supported one with the closest aspect ratio.
	var fwd struct {
		Size string `json:"size"`
	}
	env.Post("/v1/images/generations", env.Key, `{"model":"img","prompt":"wide","size":"1600x900"}`).Body.Close()
	json.Unmarshal(env.Sim.LastRequest("i"), &fwd)
	if fwd.Size != "2752x1536" {
		t.Fatalf("upstream size %q", fwd.Size)
	}
	errs := []struct{ name, path, body, code string }{
		{"chat model on images", "/v1/images/generations", `{"model":"chat","prompt":"x"}`, "model_not_supported_on_endpoint"},
		{"image model on chat", "/v1/chat/completions", `{"model":"img","messages":[{"role":"user","content":"x"}]}`, "model_not_supported_on_endpoint"},
		{"image model on embeddings", "/v1/embeddings", `{"model":"img","input":"x"}`, "model_not_supported_on_endpoint"},
		{"n 2", "/v1/images/generations", `{"model":"img","prompt":"x","n":2}`, "invalid_request"},
		{"no prompt", "/v1/images/generations", `{"model":"img"}`, "invalid_request"},
	}
	for _, c := range errs {
		resp := env.Post(c.path, env.Key, c.body)
		raw := string(nodetest.Read(t, resp))
		if resp.StatusCode != 400 || !strings.Contains(raw, `"code":"`+c.code+`"`) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, raw)
		}
	}
}

func TestImageDailyLimit(t *testing.T) {
	env := nodetest.Start(t, plansCatalog+"  - {name: img2, image_daily_limit: 2, allow_automated: true}\n", nodetest.Options{Plan: "img2"})
	for i := 0; i < 2; i++ {
		resp := env.Post("/v1/images/generations", env.Key, `{"model":"img","prompt":"x"}`)
		nodetest.Read(t, resp)
		if resp.StatusCode != 200 {
			t.Fatalf("image %d: %d", i, resp.StatusCode)
		}
	}
	// A failed generation gives its count back.
	env.Sim.SetBehavior("i", simulator.Behavior{FailStatus: 500})
	nodetest.Read(t, env.Post("/v1/images/generations", env.Key, `{"model":"img","prompt":"x"}`))
	env.Sim.SetBehavior("i", simulator.Behavior{})
	resp := env.Post("/v1/images/generations", env.Key, `{"model":"img","prompt":"x"}`)
	raw := string(nodetest.Read(t, resp))
	if resp.StatusCode != 429 || !strings.Contains(raw, `"code":"image_daily_limit_exceeded"`) || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
}

type videoTask struct {
	ID       string `json:"id"`
	TaskID   string `json:"task_id"`
	VideoID  string `json:"video_id"`
	Object   string `json:"object"`
	Model    string `json:"model"`
	Status   string `json:"status"`
	Progress int    `json:"progress"`
	Seconds  string `json:"seconds"`
	Size     string `json:"size"`
	Metadata *struct {
		URL string `json:"url"`
	} `json:"metadata"`
	Error *struct{ Code, Message string } `json:"error"`
}

func TestVideoLifecycle(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	env.Sim.SetBehavior("v", simulator.Behavior{VideoDuration: 300 * time.Millisecond})
	env.Admin(http.MethodPost, "/admin/v1/accounts/"+env.Account.ID+"/credits", `{"amount_usd":"1","idempotency_key":"v1"}`).Body.Close()
	resp := env.Post("/v1/videos", env.Key, `{"model":"vid","prompt":"a wave","mode":"text","seconds":"6"}`)
	raw := nodetest.Read(t, resp)
	var task videoTask
	json.Unmarshal(raw, &task)
	if resp.StatusCode != 200 || task.Status != "queued" || task.Progress != 0 || task.ID == "" || task.TaskID != task.ID || task.VideoID != task.ID || task.Object != "video" || task.Seconds != "6" || task.Size != "720P" {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	last := 0
	deadline := time.Now().Add(10 * time.Second)
	for task.Status != "completed" && task.Status != "failed" {
		if time.Now().After(deadline) {
			t.Fatalf("task stuck: %+v", task)
		}
		time.Sleep(50 * time.Millisecond)
		r := env.Do(http.MethodGet, "/v1/videos/"+task.ID+"?model=vid", env.Key, "")
		json.Unmarshal(nodetest.Read(t, r), &task)
		if task.Progress < last {
			t.Fatalf("progress went back: %d after %d", task.Progress, last)
		}
		last = task.Progress
	}
	if task.Status != "completed" || task.Progress != 100 || task.Metadata == nil || !strings.Contains(task.Metadata.URL, "/assets/vid/") {
		t.Fatalf("task %+v", task)
	}
	// The video is served by the gateway, with ranges.
	req, _ := http.NewRequest(http.MethodGet, task.Metadata.URL, nil)
	req.Header.Set("Range", "bytes=4-7")
	got, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	part, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if got.StatusCode != 206 || string(part) != "ftyp" || got.Header.Get("Content-Type") != "video/mp4" {
		t.Fatalf("range %d %q %q", got.StatusCode, part, got.Header.Get("Content-Type"))
	}
	// Within the plan a video costs no credits; its seconds count today.
	settledVideo(t, env, "vid", task.ID)
	q := string(nodetest.Read(t, env.Admin(http.MethodGet, "/admin/v1/accounts/"+env.Account.ID+"/quota", "")))
	if !strings.Contains(q, `"balance_usd":"1"`) || !strings.Contains(q, `"spent_usd":"0"`) || !strings.Contains(q, `"video_seconds":{"used":6`) {
		t.Fatalf("quota %s", q)
	}
	// Polls need the model, and another account never sees the task.
	if r := env.Do(http.MethodGet, "/v1/videos/"+task.ID, env.Key, ""); r.StatusCode != 400 {
		t.Fatalf("poll without model: %d", r.StatusCode)
	}
	other, _ := env.Node.Store.CreateAccount("other@example.com", "demo")
	_, secret, _ := env.Node.Store.CreateKey(other.ID, persistence.KeySpec{Name: "o"})
	if r := env.Do(http.MethodGet, "/v1/videos/"+task.ID+"?model=vid", secret, ""); r.StatusCode != 404 {
		t.Fatalf("other account: %d", r.StatusCode)
	}
}

func TestVideoValidation(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	cases := []struct{ body, param string }{
		{`{"model":"vid","mode":"text"}`, "prompt"},
		{`{"model":"vid","prompt":"p"}`, "mode"},
		{`{"model":"vid","prompt":"p","mode":"text","seconds":"13"}`, "seconds"},
		{`{"model":"vid","prompt":"p","mode":"text","size":"1080P"}`, "size"},
		{`{"model":"vid","prompt":"p","mode":"text","n":2}`, "n"},
		{`{"model":"vid","prompt":"p","mode":"keyframe"}`, "first_frame"},
		{`{"model":"vid","prompt":"p","mode":"reference","images":["1","2","3","4","5","6"]}`, "images"},
		{`{"model":"vid","prompt":"p","mode":"reference","audios":["1","2","3","4"]}`, "audios"},
		{`{"model":"chat","prompt":"p","mode":"text"}`, "model"},
	}
	for _, c := range cases {
		resp := env.Post("/v1/videos", env.Key, c.body)
		raw := string(nodetest.Read(t, resp))
		if resp.StatusCode != 400 || !strings.Contains(raw, `"param":"`+c.param+`"`) {
			t.Errorf("%s: %d %s", c.body, resp.StatusCode, raw)
		}
	}
}

// pollVideo polls until the task ends and is billed.
func pollVideo(t *testing.T, env *nodetest.Env, id string) videoTask {
	t.Helper()
	return settledVideo(t, env, "vid", id)
}

func quotaOf(t *testing.T, env *nodetest.Env) string {
	env.WaitIdle()
	return string(nodetest.Read(t, env.Admin(http.MethodGet, "/admin/v1/accounts/"+env.Account.ID+"/quota", "")))
}

func TestVideoFailureCostsNothing(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	env.Sim.SetBehavior("v", simulator.Behavior{VideoDuration: 100 * time.Millisecond, VideoFailFraction: 1})
	env.Admin(http.MethodPost, "/admin/v1/accounts/"+env.Account.ID+"/credits", `{"amount_usd":"1","idempotency_key":"v1"}`).Body.Close()
	var task videoTask
	json.Unmarshal(nodetest.Read(t, env.Post("/v1/videos", env.Key, `{"model":"vid","prompt":"p","mode":"text"}`)), &task)
	task = pollVideo(t, env, task.ID)
	if task.Status != "failed" || task.Error == nil || task.Error.Message == "" || task.Metadata != nil {
		t.Fatalf("task %+v", task)
	}
	if q := quotaOf(t, env); !strings.Contains(q, `"balance_usd":"1"`) || !strings.Contains(q, `"video_seconds":{"used":0,"reserved":0`) {
		t.Fatalf("a failed video cost something: %s", q)
	}
}

func TestVideoDailySeconds(t *testing.T) {
	env := nodetest.Start(t, plansCatalog+"  - {name: vid10, video_daily_seconds: 10, allow_automated: true}\n", nodetest.Options{Plan: "vid10"})
	env.Sim.SetBehavior("v", simulator.Behavior{VideoDuration: time.Hour}) // stays in progress: seconds stay reserved
	env.Admin(http.MethodPost, "/admin/v1/accounts/"+env.Account.ID+"/credits", `{"amount_usd":"5","idempotency_key":"v1"}`).Body.Close()
	for _, c := range []struct {
		seconds string
		status  int
	}{{"6", 200}, {"4", 200}, {"4", 429}} {
		resp := env.Post("/v1/videos", env.Key, `{"model":"vid","prompt":"p","mode":"text","seconds":"`+c.seconds+`"}`)
		raw := string(nodetest.Read(t, resp))
		if resp.StatusCode != c.status || c.status == 429 && (!strings.Contains(raw, `"code":"video_daily_limit_exceeded"`) || resp.Header.Get("Retry-After") == "") {
			t.Fatalf("%s s: %d %s", c.seconds, resp.StatusCode, raw)
		}
	}
}

// A node restarted in the middle of a task: the task completes after the restart (within
// the plan: no credits) and its video is still served after another restart. A paid task
// across a restart: TestVideoIsNeverFree.
func TestVideoSurvivesRestart(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	env.Sim.SetBehavior("v", simulator.Behavior{VideoDuration: 800 * time.Millisecond})
	env.Admin(http.MethodPost, "/admin/v1/accounts/"+env.Account.ID+"/credits", `{"amount_usd":"1","idempotency_key":"v1"}`).Body.Close()
	var task videoTask
	json.Unmarshal(nodetest.Read(t, env.Post("/v1/videos", env.Key, `{"model":"vid","prompt":"p","mode":"text","seconds":"4"}`)), &task)
	for env.Sim.Calls("v") < 2 { // created upstream and polled at least once
		time.Sleep(20 * time.Millisecond)
	}
	env.Restart()
	task = pollVideo(t, env, task.ID)
	if task.Status != "completed" {
		t.Fatalf("task %+v", task)
	}
	if q := quotaOf(t, env); !strings.Contains(q, `"balance_usd":"1"`) || !strings.Contains(q, `"spent_usd":"0"`) || !strings.Contains(q, `"video_seconds":{"used":4`) {
		t.Fatalf("not counted exactly once: %s", q)
	}
	env.Restart()
	url := strings.Replace(task.Metadata.URL, task.Metadata.URL[:strings.Index(task.Metadata.URL, "/assets/")], env.Node.URL, 1)
	got, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if got.StatusCode != 200 || len(body) < 8 || string(body[4:8]) != "ftyp" {
		t.Fatalf("asset after restart: %d", got.StatusCode)
	}
	if q := quotaOf(t, env); !strings.Contains(q, `"balance_usd":"1"`) || !strings.Contains(q, `"video_seconds":{"used":4`) {
		t.Fatalf("counted again after a restart: %s", q)
	}
}
