package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const adminUsage = `modelgate admin: operator commands, sent to a running gateway's admin API.

  modelgate admin accounts create --email E [--plan P]
  modelgate admin accounts get ID
  modelgate admin accounts plan ID --plan P
  modelgate admin accounts credits ID --amount 25.00 --key IDEMPOTENCY_KEY
  modelgate admin accounts quota ID
  modelgate admin keys create --account ID --name N [--models a,b] [--zdr] [--import SECRET]
  modelgate admin keys list --account ID
  modelgate admin keys revoke KEY_ID
  modelgate admin usage --account ID [--from T] [--to T] [--key KEY_ID] [--model M]
                        [--limit N] [--cursor C | --all]   (T: RFC 3339 or unix seconds)
        one page of the request log with the totals of the whole selection; --cursor takes
        the page's next_cursor, --all reads every page and prints them as one
  modelgate admin routes      every route's health: cooldown, its reason, the provider's last refusal

Every command takes --url (MODELGATE_URL, default http://127.0.0.1:8080) and --token
(MODELGATE_ADMIN_TOKEN, else read from <--data>/admin-token, default ./data).
`

// flagsOnly are the resources that take no action word.
var flagsOnly = map[string]bool{"usage": true, "routes": true}

// adminClient talks to /admin/v1 with the admin token.
type adminClient struct {
	url, token string
	out        io.Writer
}

func adminCmd(args []string, out io.Writer) error {
	if len(args) == 0 || len(args) < 2 && !flagsOnly[args[0]] {
		fmt.Fprint(out, adminUsage)
		if len(args) == 1 && args[0] == "help" {
			return nil
		}
		return errors.New("admin needs a resource and an action")
	}
	fs := flag.NewFlagSet("admin", flag.ContinueOnError)
	baseURL := fs.String("url", env("MODELGATE_URL", "http://127.0.0.1:8080"), "gateway URL")
	token := fs.String("token", os.Getenv("MODELGATE_ADMIN_TOKEN"), "admin token")
	data := fs.String("data", env("MODELGATE_DATA", "./data"), "data directory holding admin-token")
	email := fs.String("email", "", "account e-mail")
	plan := fs.String("plan", "", "plan name")
	account := fs.String("account", "", "account id")
	name := fs.String("name", "", "key name")
	models := fs.String("models", "", "comma-separated models the key may call (empty: all)")
	zdr := fs.Bool("zdr", false, "zero-data-retention key")
	imp := fs.String("import", "", "existing sk-user-/sk-token- secret to import")
	from := fs.String("from", "", "usage from")
	to := fs.String("to", "", "usage to")
	amount := fs.String("amount", "", "credits to add, USD as a decimal string")
	idem := fs.String("key", "", "credits: the top-up's idempotency key (the same key twice adds once); usage: a key id to select")
	usageModel := fs.String("model", "", "usage: a model to select")
	limit := fs.String("limit", "", "usage: entries per page (1-1000)")
	cursor := fs.String("cursor", "", "usage: the next_cursor of the previous page")
	all := fs.Bool("all", false, "usage: read every page")
	resource, action, rest := args[0], "", args[1:]
	var positional string
	if flagsOnly[resource] { // no action word
		if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			return fmt.Errorf("%s takes flags only", resource)
		}
	} else {
		action, rest = args[1], args[2:]
		if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			positional, rest = rest[0], rest[1:]
		}
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if *token == "" {
		b, err := os.ReadFile(filepath.Join(*data, "admin-token"))
		if err != nil {
			return errors.New("no admin token: pass --token, set MODELGATE_ADMIN_TOKEN, or point --data at the gateway's data directory")
		}
		*token = strings.TrimSpace(string(b))
	}
	c := adminClient{url: strings.TrimRight(*baseURL, "/"), token: *token, out: out}
	need := func(v, what string) error {
		if v == "" {
			return fmt.Errorf("%s needs %s", strings.TrimSpace(resource+" "+action), what)
		}
		return nil
	}
	switch resource + " " + action {
	case "accounts create":
		if err := need(*email, "--email"); err != nil {
			return err
		}
		return c.do(http.MethodPost, "/admin/v1/accounts", map[string]string{"email": *email, "plan": *plan})
	case "accounts get":
		if err := need(positional, "an account id"); err != nil {
			return err
		}
		return c.do(http.MethodGet, "/admin/v1/accounts/"+positional, nil)
	case "accounts plan":
		if err := need(positional, "an account id"); err != nil {
			return err
		}
		if err := need(*plan, "--plan"); err != nil {
			return err
		}
		return c.do(http.MethodPut, "/admin/v1/accounts/"+positional+"/plan", map[string]string{"plan": *plan})
	case "accounts credits":
		if err := need(positional, "an account id"); err != nil {
			return err
		}
		if err := need(*amount, "--amount"); err != nil {
			return err
		}
		if err := need(*idem, "--key"); err != nil {
			return err
		}
		return c.do(http.MethodPost, "/admin/v1/accounts/"+positional+"/credits", map[string]string{"amount_usd": *amount, "idempotency_key": *idem})
	case "accounts quota":
		if err := need(positional, "an account id"); err != nil {
			return err
		}
		return c.do(http.MethodGet, "/admin/v1/accounts/"+positional+"/quota", nil)
	case "keys create":
		if err := need(*account, "--account"); err != nil {
			return err
		}
		body := map[string]any{"name": *name, "zdr": *zdr, "models": splitList(*models)}
		if *imp != "" {
			body["import_key"] = *imp
		}
		return c.do(http.MethodPost, "/admin/v1/accounts/"+*account+"/keys", body)
	case "keys list":
		if err := need(*account, "--account"); err != nil {
			return err
		}
		return c.do(http.MethodGet, "/admin/v1/accounts/"+*account+"/keys", nil)
	case "keys revoke":
		if err := need(positional, "a key id"); err != nil {
			return err
		}
		return c.do(http.MethodDelete, "/admin/v1/keys/"+positional, nil)
	case "usage ":
		if err := need(*account, "--account"); err != nil {
			return err
		}
		q := url.Values{}
		for k, v := range map[string]string{"from": *from, "to": *to, "key": *idem, "model": *usageModel, "limit": *limit, "cursor": *cursor} {
			if v != "" {
				q.Set(k, v)
			}
		}
		path := "/admin/v1/accounts/" + *account + "/usage?" + q.Encode()
		if *all {
			return c.usageAll(path)
		}
		return c.do(http.MethodGet, path, nil)
	case "routes ":
		return c.do(http.MethodGet, "/admin/v1/routes", nil)
	}
	fmt.Fprint(out, adminUsage)
	return fmt.Errorf("unknown admin command %q", strings.TrimSpace(resource+" "+action))
}

func (c adminClient) do(method, path string, body any) error {
	raw, err := c.call(method, path, body)
	if err != nil {
		return err
	}
	_, err = c.out.Write(raw)
	return err
}

// usageAll follows next_cursor from path to the last page and prints every page's entries as
// one list, with the totals (every page carries those of the whole selection).
func (c adminClient) usageAll(path string) error {
	var all struct {
		Object string            `json:"object"`
		Data   []json.RawMessage `json:"data"`
		Totals json.RawMessage   `json:"totals"`
		Cost   string            `json:"total_cost_usd"`
		List   string            `json:"total_list_cost_usd"`
	}
	all.Data = []json.RawMessage{}
	for next := path; ; {
		raw, err := c.call(http.MethodGet, next, nil)
		if err != nil {
			return err
		}
		var page struct {
			Data       []json.RawMessage `json:"data"`
			Totals     json.RawMessage   `json:"totals"`
			Cost       string            `json:"total_cost_usd"`
			List       string            `json:"total_list_cost_usd"`
			NextCursor *string           `json:"next_cursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return fmt.Errorf("usage page: %w", err)
		}
		all.Object, all.Totals, all.Cost, all.List = "list", page.Totals, page.Cost, page.List
		all.Data = append(all.Data, page.Data...)
		if page.NextCursor == nil {
			break
		}
		u, _ := url.Parse(next)
		q := u.Query()
		q.Set("cursor", *page.NextCursor)
		u.RawQuery = q.Encode()
		next = u.String()
	}
	out, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	_, err = c.out.Write(append(out, '\n'))
	return err
}

// call sends one admin request and returns the answer, indented; a status of 300 or more is
// an error carrying the answer.
func (c adminClient) call(method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var pretty bytes.Buffer
	// The server ends its JSON with a newline; Indent would keep it and add a blank line.
	if json.Indent(&pretty, bytes.TrimSpace(raw), "", "  ") == nil {
		raw = append(pretty.Bytes(), '\n')
	}
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(raw)))
	}
	return raw, nil
}

func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
