package opsgenie_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/opsgenie"
)

// The Alert API as Opsgenie documents it, https://docs.opsgenie.com/docs/alert-api:
// Create Alert is POST /v2/alerts with "Authorization: GenieKey <key>" and
// message (130 characters, the only mandatory field), alias (512),
// description (15000), tags (20 of 50 characters), details (8000 in all),
// entity (512), source (100), priority P1-P5; Close Alert is POST
// /v2/alerts/:identifier/close?identifierType=alias with source (100) and
// note (25000); both answer 202 {"result": "Request will be processed",
// "took", "requestId"} and are processed asynchronously; GET
// /v2/alerts/requests/:requestId tells how a request ended. The response
// codes are https://docs.opsgenie.com/docs/response: 401 apiKey is invalid
// or integration is disabled, 403 no permission, 404 not found, 422
// semantic errors in the request body, 429 too many requests.

const apiKey = "eb243592-faa2-4ba2-a551-1afdf565c889"

type request struct {
	method, path, query string
	body                map[string]any
	at                  time.Time
}

// alertAPI stands in for api.opsgenie.com. It checks the documented fields
// and limits, keeps the open aliases, and reports a request processed only
// the second time it is asked (the first is Opsgenie's 404 for a request
// not processed yet).
type alertAPI struct {
	*notifytest.HTTPSink
	mu       sync.Mutex
	reqs     []request
	open     map[string]bool
	asked    map[string]int
	failNext string
}

func startAlertAPI(t *testing.T) *alertAPI {
	a := &alertAPI{HTTPSink: notifytest.StartHTTP(t, ""), open: map[string]bool{}, asked: map[string]int{}}
	a.Answer(a.serve)
	return a
}

func (a *alertAPI) serve(w http.ResponseWriter, h notifytest.Hit) {
	a.Record(h)
	a.mu.Lock()
	defer a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	id := "req-none"
	reply := func(status int, v map[string]any) {
		v["took"], v["requestId"] = 0.01, id
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	if h.Header.Get("Authorization") != "GenieKey "+apiKey {
		reply(http.StatusUnauthorized, map[string]any{"message": "Could not authenticate"})
		return
	}
	r := request{method: h.Method, path: h.Path, query: h.RawQuery, at: time.Now()}
	if len(h.Body) > 0 {
		if err := json.Unmarshal(h.Body, &r.body); err != nil {
			reply(http.StatusBadRequest, map[string]any{"message": "Invalid JSON body"})
			return
		}
	}
	a.reqs = append(a.reqs, r)
	id = fmt.Sprintf("req-%d", len(a.reqs)-1)
	switch {
	case h.Method == http.MethodPost && h.Path == "/v2/alerts":
		if problem := createProblem(r.body); problem != "" {
			reply(http.StatusUnprocessableEntity, map[string]any{"message": "Request body is not processable. Please check the errors.", "errors": map[string]string{"field": problem}})
			return
		}
		a.open[r.body["alias"].(string)] = true
		reply(http.StatusAccepted, map[string]any{"result": "Request will be processed"})
	case h.Method == http.MethodPost && strings.HasPrefix(h.Path, "/v2/alerts/") && strings.HasSuffix(h.Path, "/close"):
		q, _ := url.ParseQuery(h.RawQuery)
		if q.Get("identifierType") != "alias" || utf8.RuneCountInString(str(r.body["source"])) > 100 || utf8.RuneCountInString(str(r.body["note"])) > 25000 {
			reply(http.StatusUnprocessableEntity, map[string]any{"message": "Request body is not processable."})
			return
		}
		delete(a.open, strings.TrimSuffix(strings.TrimPrefix(h.Path, "/v2/alerts/"), "/close"))
		reply(http.StatusAccepted, map[string]any{"result": "Request will be processed"})
	case h.Method == http.MethodGet && strings.HasPrefix(h.Path, "/v2/alerts/requests/"):
		req := strings.TrimPrefix(h.Path, "/v2/alerts/requests/")
		if a.asked[req]++; a.asked[req] == 1 {
			reply(http.StatusNotFound, map[string]any{"message": "Request not found. It might not be processed, yet."})
			return
		}
		ok, status := a.failNext == "", "Created alert"
		if !ok {
			status = a.failNext
		}
		reply(http.StatusOK, map[string]any{"data": map[string]any{"success": ok, "isSuccess": ok, "action": "Create", "status": status}})
	default:
		reply(http.StatusNotFound, map[string]any{"message": "No handler found for " + id})
	}
}

func str(v any) string { s, _ := v.(string); return s }

// createProblem checks a Create Alert body against the documented limits.
func createProblem(b map[string]any) string {
	runes := func(k string) int { return utf8.RuneCountInString(str(b[k])) }
	switch {
	case str(b["message"]) == "":
		return "Message can not be empty."
	case runes("message") > 130, runes("alias") > 512, runes("description") > 15000, runes("entity") > 512, runes("source") > 100:
		return "a field is longer than its limit"
	}
	switch b["priority"] {
	case "P1", "P2", "P3", "P4", "P5", nil:
	default:
		return "Priority should be one of [P1, P2, P3, P4, P5]"
	}
	tags, _ := b["tags"].([]any)
	if len(tags) > 20 {
		return "too many tags"
	}
	for _, t := range tags {
		if utf8.RuneCountInString(str(t)) > 50 {
			return "tag too long"
		}
	}
	total := 0
	details, _ := b["details"].(map[string]any)
	for k, v := range details {
		s, ok := v.(string)
		if !ok {
			return "details values must be strings"
		}
		total += utf8.RuneCountInString(k) + utf8.RuneCountInString(s)
	}
	if total > 8000 {
		return "details too long"
	}
	return ""
}

func (a *alertAPI) requests() []request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]request(nil), a.reqs...)
}

func channelTo(api string) config.ChannelConfig {
	return config.ChannelConfig{Name: "og", Type: "opsgenie",
		Settings: opsgenie.Config{APIKey: config.Secret{Value: apiKey}, APIURL: api}}
}

func TestOpsgenieCreateRequest(t *testing.T) {
	api := startAlertAPI(t)
	n := notifytest.Firing("nas1", "og-1")
	n.GroupKey = "host=nas1,pool=vault"
	n.Alerts[0].Summary += strings.Repeat(" and more", 40)
	n.Alerts[0].Evidence["huge"] = strings.Repeat("x", 9000)
	if err := notifytest.Send(t, channelTo(api.URL+"/"), n); err != nil {
		t.Fatal(err)
	}
	rs := api.requests()
	if len(rs) != 1 || rs[0].method != http.MethodPost || rs[0].path != "/v2/alerts" {
		t.Fatalf("requests %+v", rs)
	}
	b := rs[0].body
	msg := str(b["message"])
	if utf8.RuneCountInString(msg) != 130 || !strings.HasPrefix(msg, "[CRITICAL] nas1: vault DEGRADED — disk WD-WX32D7088AF1 FAULTED") {
		t.Errorf("message (%d characters) %q", utf8.RuneCountInString(msg), msg)
	}
	if b["alias"] != opsgenie.Alias(n, n.Alerts[0]) || !strings.HasPrefix(str(b["alias"]), "zwatch:host=nas1_pool=vault:ZpoolVdevFaulted:") {
		t.Errorf("alias %q", b["alias"])
	}
	if b["priority"] != "P1" || b["source"] != "nas1" || b["entity"] != "vault" {
		t.Errorf("priority %v source %v entity %v", b["priority"], b["source"], b["entity"])
	}
	if d := str(b["description"]); !strings.Contains(d, notifytest.GuideText) || utf8.RuneCountInString(d) > 15000 {
		t.Errorf("description lacks the replacement guide, or is too long (%d)", utf8.RuneCountInString(d))
	}
	tags := fmt.Sprint(b["tags"])
	if tags != "[zwatch nas1 critical ZpoolVdevFaulted pool:vault]" {
		t.Errorf("tags %s", tags)
	}
	details, _ := b["details"].(map[string]any)
	if details["replacement.vdev_guid"] != "9384718273645510293" || details["label.serial"] != "WD-WX32D7088AF1" {
		t.Errorf("details %v", details)
	}
}

// TestOpsgenieCloseClosesExactlyItsAlert: the pool's group pages a disk
// fault and a capacity warning; the capacity alert's resolved notice closes
// its alias, and the disk fault stays open.
func TestOpsgenieCloseClosesExactlyItsAlert(t *testing.T) {
	api := startAlertAPI(t)
	n := notifytest.Firing("nas1", "og-2")
	n.GroupKey = "host=nas1,pool=vault"
	capLabels := map[string]string{"alertname": "PoolCapacity", "host": "nas1", "pool": "vault"}
	capacity := alert.Alert{Name: "PoolCapacity", Severity: alert.Warning, State: alert.Firing,
		Labels: capLabels, Fingerprint: alert.Fingerprint(capLabels), Summary: "vault is 91% full", StartsAt: n.Created}
	n.Alerts = append(n.Alerts, capacity)
	cc := channelTo(api.URL)
	if err := notifytest.Send(t, cc, n); err != nil {
		t.Fatal(err)
	}
	end := n.Created.Add(90 * time.Minute)
	capacity.State, capacity.EndsAt = alert.Resolved, &end
	r := n
	r.ID, r.Status, r.Alerts = "og-2-r", alert.Resolved, []alert.Alert{capacity}
	if err := notifytest.Send(t, cc, r); err != nil {
		t.Fatal(err)
	}
	rs := api.requests()
	if len(rs) != 3 || rs[1].body["priority"] != "P3" {
		t.Fatalf("%d requests (want 2 creates, 1 close), capacity priority %v", len(rs), rs[1].body["priority"])
	}
	c := rs[2]
	if c.path != "/v2/alerts/"+opsgenie.Alias(n, capacity)+"/close" || c.query != "identifierType=alias" ||
		c.body["source"] != "nas1" || c.body["note"] != "zwatch: resolved after 1h30m0s" {
		t.Errorf("close %s ?%s %v", c.path, c.query, c.body)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.open) != 1 || !api.open[opsgenie.Alias(n, n.Alerts[0])] {
		t.Errorf("open aliases %v, want only the disk fault's", api.open)
	}
}

// TestOpsgenieTestClosesOnceCreated: zwatch notify test creates a test
// alert, waits until Opsgenie says it is created, then closes it.
func TestOpsgenieTestClosesOnceCreated(t *testing.T) {
	api := startAlertAPI(t)
	res := notifiers.Test(context.Background(), notifytest.NotifyConfig(channelTo(api.URL)), "og", notifiers.SampleNotification("nas1"))
	if len(res) != 1 || !res[0].Delivered {
		t.Fatalf("notify test: %+v", res)
	}
	rs := api.requests()
	var kinds []string
	for _, r := range rs {
		kinds = append(kinds, r.method+" "+r.path)
	}
	if len(rs) != 4 || rs[0].path != "/v2/alerts" || rs[1].path != "/v2/alerts/requests/req-0" || rs[2].path != "/v2/alerts/requests/req-0" ||
		!strings.HasSuffix(rs[3].path, "/close") {
		t.Fatalf("requests %v", kinds)
	}
	alias := str(rs[0].body["alias"])
	if !strings.HasPrefix(alias, "zwatch-test:") || rs[3].path != "/v2/alerts/"+alias+"/close" || !strings.HasPrefix(str(rs[0].body["message"]), "[TEST] ") {
		t.Errorf("test alias %q close %s message %v", alias, rs[3].path, rs[0].body["message"])
	}
	if tags := fmt.Sprint(rs[0].body["tags"]); !strings.HasSuffix(tags, " test]") {
		t.Errorf("tags %s", tags)
	}

	// Opsgenie processed the request but created nothing: the test says why.
	api.mu.Lock()
	api.failNext = "Integration [API] does not have create access"
	api.mu.Unlock()
	res = notifiers.Test(context.Background(), notifytest.NotifyConfig(channelTo(api.URL)), "og", notifiers.SampleNotification("nas1"))
	if len(res) != 1 || res[0].Delivered || !strings.Contains(res[0].Err.Error(), "does not have create access") {
		t.Errorf("notify test: %+v", res)
	}
}

func TestOpsgenieRefusalsAndHints(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		api    string
		want   string
	}{
		{401, `{"message":"Could not authenticate","took":0.001,"requestId":"r"}`, "", "enable the integration; an account on the EU instance needs api_url: https://api.eu.opsgenie.com"},
		{403, `{"code":40301,"message":"To perform this action, use an API key from an API integration.","took":0.001,"requestId":"r"}`, "x", "API integration with Create and Update Access"},
		{404, `{"message":"No handler found","took":0.001}`, "x", "nothing after the host"},
		{422, `{"message":"Request body is not processable. Please check the errors.","errors":{"message":"Message can not be empty."},"took":0.0}`, "x", "Message can not be empty."},
		{429, `{"message":"You are making too many requests!"}`, "x", "429 Too Many Requests"},
	} {
		s := notifytest.StartHTTP(t, "")
		s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
			w.WriteHeader(c.status)
			_, _ = w.Write([]byte(c.body))
		})
		settings := opsgenie.Config{APIKey: config.Secret{Value: apiKey}, APIURL: s.URL}
		ch := notifytest.BuildOne(t, config.ChannelConfig{Name: "og", Type: "opsgenie", Settings: settings})
		err := ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "og-h")))
		if err == nil || strings.Contains(err.Error(), apiKey) {
			t.Fatalf("%d: err %v", c.status, err)
		}
		// The hint about the EU instance needs the default api_url.
		sender := opsgenie.New(opsgenie.Config{APIKey: settings.APIKey, APIURL: c.api}, channel.Env{})
		if fix := sender.Hint(err); !strings.Contains(fix, c.want) {
			t.Errorf("%d %s:\n fix %q\nwant %q", c.status, c.body, fix, c.want)
		}
	}
}

func TestOpsgenieConfig(t *testing.T) {
	parse := func(entry string) (*config.Loaded, error) {
		return config.Parse(strings.NewReader("host: nas1\nstate_dir: /tmp/zw\nnotify:\n  console: false\n  channels:\n    - "+entry+"\n"), config.Catalog{Channels: []config.ChannelType{opsgenie.Service}})
	}
	l, err := parse(`{name: og, type: opsgenie, api_key: ` + apiKey + `, api_url: "https://api.eu.opsgenie.com"}`)
	if err != nil {
		t.Fatal(err)
	}
	if masked, _ := l.Config.Masked(); strings.Contains(string(masked), apiKey) || !strings.Contains(string(masked), "api_key: '******'") {
		t.Errorf("Masked:\n%s", masked)
	}
	for entry, want := range map[string]string{
		`{name: og, type: opsgenie}`: "notify.channels[0].api_key: empty: set the API key of an Opsgenie API integration",
		`{name: og, type: opsgenie, api_key: k, api_url: "https://api.opsgenie.com/v2/alerts"}`: `notify.channels[0].api_url = "https://api.opsgenie.com/v2/alerts": holds a path: set only the base`,
		`{name: og, type: opsgenie, api_key: k, api_url: "api.opsgenie.com"}`:                   `notify.channels[0].api_url = "api.opsgenie…": want an http:// or https:// URL`,
	} {
		if _, err := parse(entry); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\n  got  %v\n  want %q", entry, err, want)
		}
	}
}
