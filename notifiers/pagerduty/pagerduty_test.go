package pagerduty_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/pagerduty"
)

// The Events API v2 as PagerDuty documents it:
// https://developer.pagerduty.com/docs/events-api-v2/trigger-events/ (the
// request: routing_key of 32 characters, event_action trigger, acknowledge
// or resolve, dedup_key of at most 255 characters, payload.summary of at
// most 1024, payload.source and payload.severity critical, error, warning
// or info required for a trigger) and
// https://developer.pagerduty.com/docs/events-api-v2/overview/ (202
// Accepted; 400 invalid event, not to be retried; 429 and 5xx, retry
// later; events limited to 512 KB).

const routingKey = "e93facc04764012d7bfb002500d5d1a6"

type event struct {
	RoutingKey  string `json:"routing_key"`
	EventAction string `json:"event_action"`
	DedupKey    string `json:"dedup_key"`
	Client      string `json:"client"`
	ClientURL   string `json:"client_url"`
	Payload     *struct {
		Summary       string         `json:"summary"`
		Source        string         `json:"source"`
		Severity      string         `json:"severity"`
		Timestamp     string         `json:"timestamp"`
		Component     string         `json:"component"`
		Group         string         `json:"group"`
		Class         string         `json:"class"`
		CustomDetails map[string]any `json:"custom_details"`
	} `json:"payload"`
	at time.Time
}

// eventsAPI stands in for events.pagerduty.com: it refuses what the
// documentation says is invalid, with PagerDuty's own answer, and accepts
// the rest with 202.
func eventsAPI(t *testing.T) (*notifytest.HTTPSink, func() []event) {
	s := notifytest.StartHTTP(t, "")
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		s.Record(h)
		w.Header().Set("Content-Type", "application/json")
		if h.Method != http.MethodPost || h.Path != "/v2/enqueue" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		var e event
		var problems []string
		if !strings.HasPrefix(h.Header.Get("Content-Type"), "application/json") || json.Unmarshal(h.Body, &e) != nil {
			problems = append(problems, "Event object is not valid JSON")
		}
		if len(e.RoutingKey) != 32 {
			problems = append(problems, "Length of 'routing_key' is incorrect (should be 32 characters)")
		}
		switch e.EventAction {
		case "trigger":
			p := e.Payload
			switch {
			case p == nil || p.Summary == "" || p.Source == "":
				problems = append(problems, "'payload' is missing or blank")
			case utf8.RuneCountInString(p.Summary) > 1024:
				problems = append(problems, "'payload.summary' is too long")
			case p.Severity != "critical" && p.Severity != "error" && p.Severity != "warning" && p.Severity != "info":
				problems = append(problems, "'payload.severity' is invalid")
			}
			if p != nil && p.Timestamp != "" {
				if _, err := time.Parse(time.RFC3339, p.Timestamp); err != nil {
					problems = append(problems, "'payload.timestamp' is invalid")
				}
			}
		case "acknowledge", "resolve":
			if e.DedupKey == "" {
				problems = append(problems, "'dedup_key' is missing or blank")
			}
		default:
			problems = append(problems, "'event_action' is invalid")
		}
		if len(e.DedupKey) > 255 || len(h.Body) > 512<<10 {
			problems = append(problems, "'dedup_key' or event too long")
		}
		if len(problems) > 0 {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"status": "invalid event", "message": "Event object is invalid", "errors": problems})
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "success", "message": "Event processed", "dedup_key": e.DedupKey})
	})
	events := func() []event {
		var out []event
		for _, h := range s.All() {
			var e event
			if err := json.Unmarshal(h.Body, &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		return out
	}
	return s, events
}

func channelTo(url, clientURL string) config.ChannelConfig {
	return config.ChannelConfig{Name: "pd", Type: "pagerduty",
		Settings: pagerduty.Config{RoutingKey: config.Secret{Value: routingKey}, URL: url, ClientURL: clientURL}}
}

func TestPagerDutyTriggerRequest(t *testing.T) {
	s, events := eventsAPI(t)
	n := notifytest.Firing("nas1", "pd-1")
	n.GroupKey = "host=nas1,pool=vault"
	if err := notifytest.Send(t, channelTo(s.URL+"/v2/enqueue", ""), n); err != nil {
		t.Fatal(err)
	}
	es := events()
	if len(es) != 1 {
		t.Fatalf("%d events, want 1", len(es))
	}
	e, p := es[0], es[0].Payload
	if e.RoutingKey != routingKey || e.EventAction != "trigger" || e.DedupKey != pagerduty.DedupKey(n, n.Alerts[0]) ||
		!strings.HasPrefix(e.DedupKey, "zwatch:host=nas1_pool=vault:ZpoolVdevFaulted:") {
		t.Errorf("event %s %q", e.EventAction, e.DedupKey)
	}
	if e.Client != "" || e.ClientURL != "" {
		t.Errorf("client %q %q without client_url in the config", e.Client, e.ClientURL)
	}
	if p.Summary != "[CRITICAL] nas1: "+strings.TrimPrefix(notifytest.WantSummary, "[CRITICAL] ") || p.Source != "nas1" ||
		p.Severity != "critical" || p.Component != "vault" || p.Group != "host=nas1,pool=vault" || p.Class != "ZpoolVdevFaulted" {
		t.Errorf("payload %+v", p)
	}
	if ts, err := time.Parse(time.RFC3339, p.Timestamp); err != nil || !ts.Equal(n.Created) {
		t.Errorf("timestamp %q, want %s", p.Timestamp, n.Created)
	}
	text, _ := p.CustomDetails["text"].(string)
	if !strings.HasPrefix(text, notifytest.WantSummary) || !strings.Contains(text, notifytest.GuideText) {
		t.Errorf("custom_details.text lacks the summary or the replacement guide: %q", text)
	}
	if r, _ := p.CustomDetails["replacement"].(map[string]any); r["vdev_guid"] != "9384718273645510293" {
		t.Errorf("custom_details.replacement %v", p.CustomDetails["replacement"])
	}

	// With the status page's address configured, PagerDuty links to it.
	s2, events2 := eventsAPI(t)
	if err := notifytest.Send(t, channelTo(s2.URL+"/v2/enqueue", "https://nas1.example.net:8931/"), n); err != nil {
		t.Fatal(err)
	}
	if e := events2()[0]; e.Client != "zwatch on nas1" || e.ClientURL != "https://nas1.example.net:8931/" {
		t.Errorf("client %q client_url %q", e.Client, e.ClientURL)
	}
}

func TestPagerDutySummaryIsCutTo1024Characters(t *testing.T) {
	s, events := eventsAPI(t)
	n := notifytest.Firing("nas1", "pd-long")
	n.Alerts[0].Summary = strings.Repeat("ü", 2000)
	if err := notifytest.Send(t, channelTo(s.URL+"/v2/enqueue", ""), n); err != nil {
		t.Fatal(err)
	}
	if sum := events()[0].Payload.Summary; utf8.RuneCountInString(sum) != 1024 || !strings.HasSuffix(sum, "…") {
		t.Errorf("summary of %d characters", utf8.RuneCountInString(sum))
	}
}

func resolved(n alert.Notification, fps ...string) alert.Notification {
	end := n.Created.Add(2 * time.Hour)
	out := n
	out.ID, out.Status, out.Alerts = n.ID+"-r", alert.Resolved, nil
	for _, a := range n.Alerts {
		for _, fp := range fps {
			if a.Fingerprint == fp {
				a.State, a.EndsAt = alert.Resolved, &end
				out.Alerts = append(out.Alerts, a)
			}
		}
	}
	return out
}

// TestPagerDutyResolveClosesExactlyItsAlert: the pool's group pages a disk
// fault and a capacity warning; capacity recovers first. Its resolved
// notice carries only the capacity alert, and resolves only that alert's
// dedup_key: the disk fault stays open.
func TestPagerDutyResolveClosesExactlyItsAlert(t *testing.T) {
	s, events := eventsAPI(t)
	n := notifytest.Firing("nas1", "pd-2")
	n.GroupKey = "host=nas1,pool=vault"
	capLabels := map[string]string{"alertname": "PoolCapacity", "host": "nas1", "pool": "vault"}
	n.Alerts = append(n.Alerts, alert.Alert{Name: "PoolCapacity", Severity: alert.Warning, State: alert.Firing,
		Labels: capLabels, Fingerprint: alert.Fingerprint(capLabels), Summary: "vault is 91% full", StartsAt: n.Created})
	cc := channelTo(s.URL+"/v2/enqueue", "")
	if err := notifytest.Send(t, cc, n); err != nil {
		t.Fatal(err)
	}
	if err := notifytest.Send(t, cc, resolved(n, n.Alerts[1].Fingerprint)); err != nil {
		t.Fatal(err)
	}
	es := events()
	if len(es) != 3 {
		t.Fatalf("%d events, want 2 triggers and 1 resolve", len(es))
	}
	disk, capacity := es[0].DedupKey, es[1].DedupKey
	if disk == capacity || es[1].Payload.Severity != "warning" {
		t.Errorf("the two alerts share dedup_key %q, or capacity is not a warning", disk)
	}
	if r := es[2]; r.EventAction != "resolve" || r.DedupKey != capacity || r.Payload != nil {
		t.Errorf("resolve %s %q payload %v, want the capacity alert's key %q", r.EventAction, r.DedupKey, r.Payload, capacity)
	}
}

// TestPagerDutyTestOpensThenResolves: zwatch notify test opens a test
// incident and resolves it, with a key no real alert has.
func TestPagerDutyTestOpensThenResolves(t *testing.T) {
	s, events := eventsAPI(t)
	cfg := notifytest.NotifyConfig(channelTo(s.URL+"/v2/enqueue", ""))
	cfg.SendTimeout = config.Duration(2 * time.Second)
	start := time.Now()
	res := notifiers.Test(context.Background(), cfg, "pd", notifiers.SampleNotification("nas1"))
	if len(res) != 1 || !res[0].Delivered {
		t.Fatalf("notify test: %+v", res)
	}
	hits := s.All()
	es := events()
	if len(es) != 2 || es[0].EventAction != "trigger" || es[1].EventAction != "resolve" || es[0].DedupKey != es[1].DedupKey {
		t.Fatalf("events %+v", es)
	}
	if !strings.HasPrefix(es[0].DedupKey, "zwatch-test:") || !strings.HasPrefix(es[0].Payload.Summary, "[TEST] [CRITICAL] nas1: ") {
		t.Errorf("test key %q summary %q", es[0].DedupKey, es[0].Payload.Summary)
	}
	// The resolve waits for the page to open: half the send timeout here.
	if took := time.Since(start); took < 900*time.Millisecond || took > 2*time.Second || len(hits) != 2 {
		t.Errorf("took %s for %d requests", took, len(hits))
	}
}

func TestPagerDutyRefusalsAndHints(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		want   string
	}{
		{400, `{"status":"invalid event","message":"Event object is invalid","errors":["Length of 'routing_key' is incorrect (should be 32 characters)"]}`, "copy the Integration Key (32 characters)"},
		{400, `{"status":"invalid event","message":"Event object is invalid","errors":["'payload.severity' is invalid"]}`, "400 Bad Request, which PagerDuty says not to retry"},
		{429, ``, "about 120 events a minute per integration key"},
		{502, `<html>Bad Gateway</html>`, "retries later by itself, as PagerDuty asks"},
		{404, `Not Found`, "https://events.eu.pagerduty.com/v2/enqueue"},
	} {
		s := notifytest.StartHTTP(t, "")
		s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
			w.WriteHeader(c.status)
			// A refusal that echoed the key must not pass it on.
			_, _ = w.Write([]byte(strings.Replace(c.body, "routing_key'", "routing_key' "+routingKey, 1)))
		})
		ch := notifytest.BuildOne(t, channelTo(s.URL, ""))
		err := ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "pd-h")))
		if err == nil || strings.Contains(err.Error(), routingKey) {
			t.Fatalf("%d: err %v", c.status, err)
		}
		if fix := ch.Fix(err); !strings.Contains(fix, c.want) {
			t.Errorf("%d %s:\n fix %q\nwant %q", c.status, c.body, fix, c.want)
		}
	}
}

func TestPagerDutyConfig(t *testing.T) {
	parse := func(entry string) (*config.Loaded, error) {
		return config.Parse(strings.NewReader("host: nas1\nstate_dir: /tmp/zw\nnotify:\n  console: false\n  channels:\n    - "+entry+"\n"), config.Catalog{Channels: []config.ChannelType{pagerduty.Service}})
	}
	t.Setenv("ZW_PD_KEY", routingKey)
	l, err := parse(`{name: pd, type: pagerduty, routing_key: "${ZW_PD_KEY}", url: "https://events.eu.pagerduty.com/v2/enqueue", client_url: "https://nas1.example.net:8931"}`)
	if err != nil {
		t.Fatal(err)
	}
	masked, err := l.Config.Masked()
	if err != nil || strings.Contains(string(masked), routingKey) || !strings.Contains(string(masked), "routing_key: '******") {
		t.Errorf("Masked: %v\n%s", err, masked)
	}
	for entry, want := range map[string]string{
		`{name: pd, type: pagerduty}`: "notify.channels[0].routing_key: empty: set the Integration Key of an Events API v2 integration",
		`{name: pd, type: pagerduty, routing_key: e93facc04764012d7bfb002500d5d1a}`:        "notify.channels[0].routing_key: has 31 characters, not the 32 letters and digits",
		`{name: pd, type: pagerduty, routing_key: e93facc04764012d7bfb002500d5d1a!}`:       "notify.channels[0].routing_key: has 32 characters, not the 32 letters and digits",
		`{name: pd, type: pagerduty, routing_key: ` + routingKey + `, url: "events.eu"}`:   `notify.channels[0].url = "events.eu": want an http:// or https:// URL`,
		`{name: pd, type: pagerduty, routing_key: ` + routingKey + `, client_url: "nas1"}`: `notify.channels[0].client_url = "nas1": want an http:// or https:// URL`,
	} {
		_, err := parse(entry)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\n  got  %v\n  want %q", entry, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "e93facc04764012d7bfb002500d5d1a") {
			t.Errorf("the error shows the routing key: %v", err)
		}
	}
}
