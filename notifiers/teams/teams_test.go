package teams_test

// The request is checked against Microsoft's documentation:
//   Adaptive Card message for a webhook ("type":"message", attachments of
//   contentType application/vnd.microsoft.card.adaptive):
//     https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using#send-adaptive-cards-using-an-incoming-webhook
//   Workflows webhooks, the 28 KB message limit, retired Office 365 connectors:
//     https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook
//     https://support.microsoft.com/en-us/office/create-incoming-webhooks-with-workflows-for-microsoft-teams-8ae491c7-0394-4861-ba59-055e33f75498
//     https://devblogs.microsoft.com/microsoft365dev/retirement-of-office-365-connectors-within-microsoft-teams/
//   Container styles (good, attention, warning, accent):
//     https://adaptivecards.io/explorer/Container.html

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/teams"
)

const invoke = "/powerautomate/automations/direct/workflows/8d2c3a9f/triggers/manual/paths/invoke"
const query = "api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=SiGnAtUrE-9x"

func teamsChannel(url string) config.ChannelConfig {
	return config.ChannelConfig{Name: "teams", Type: "teams", Settings: teams.Config{WebhookURL: config.Secret{Value: url}}}
}

// workflow answers as Power Automate's trigger does: 202 Accepted.
func workflow(t *testing.T) *notifytest.HTTPSink {
	s := notifytest.StartHTTP(t, "")
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) { s.Record(h); w.WriteHeader(http.StatusAccepted) })
	return s
}

func card(t *testing.T, h notifytest.Hit) teams.Card {
	t.Helper()
	var m teams.Message
	if err := json.Unmarshal(h.Body, &m); err != nil {
		t.Fatal(err)
	}
	if m.Type != "message" || len(m.Attachments) != 1 || m.Attachments[0].ContentType != "application/vnd.microsoft.card.adaptive" {
		t.Fatalf("message %s", h.Body)
	}
	return m.Attachments[0].Content
}

func TestTeamsRequest(t *testing.T) {
	s := workflow(t)
	if err := notifytest.Send(t, teamsChannel(s.URL+invoke+"?"+query), notifytest.Firing("nas1", "t-1")); err != nil {
		t.Fatal(err)
	}
	h := notifytest.Only(t, s)
	if h.Method != http.MethodPost || h.Path != invoke || h.RawQuery != query || h.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%s %s?%s %s", h.Method, h.Path, h.RawQuery, h.Header.Get("Content-Type"))
	}
	if !strings.Contains(string(h.Body), `"contentUrl":null`) {
		t.Error("no contentUrl: null as in the documented example")
	}
	c := card(t, h)
	if c.Type != "AdaptiveCard" || c.Version != "1.4" || c.Schema != "http://adaptivecards.io/schemas/adaptive-card.json" || c.FallbackText != notifytest.WantSummary {
		t.Errorf("card %+v", c)
	}
	head := c.Body[0]
	items, _ := head["items"].([]any)
	first, _ := items[0].(map[string]any)
	if head["type"] != "Container" || head["style"] != "attention" || first["text"] != notifytest.WantSummary || first["weight"] != "Bolder" {
		t.Errorf("head %v", head)
	}
	var lines []string
	for _, b := range c.Body[1:] {
		if b["type"] != "TextBlock" || b["wrap"] != true {
			t.Errorf("block %v", b)
		}
		lines = append(lines, b["text"].(string))
	}
	if got := strings.Join(lines, "\n"); !strings.Contains(got, "Replacement guide:\n1. Run: zpool offline vault 9384718273645510293\n2. Pull the disk with serial WD-WX32D7088AF1 from bay 3 <left cage>") {
		t.Errorf("lines:\n%s", got)
	}
}

func TestTeamsResolvedAndLongMessage(t *testing.T) {
	s := workflow(t)
	n := notifytest.Firing("nas1", "t-2")
	end := n.Alerts[0].StartsAt.Add(time.Hour)
	n.Alerts[0].State, n.Alerts[0].EndsAt, n.Status = alert.Resolved, &end, alert.Resolved
	n.Alerts[0].Description = strings.Repeat("a scrub repaired 4K on sdc \"quoted\"\n", 3000)
	if err := notifytest.Send(t, teamsChannel(s.URL+invoke+"?"+query), n); err != nil {
		t.Fatal(err)
	}
	h := notifytest.Only(t, s)
	if len(h.Body) > 28000 {
		t.Errorf("message is %d bytes; Teams refuses over 28 KB", len(h.Body))
	}
	c := card(t, h)
	last, _ := c.Body[len(c.Body)-1]["text"].(string)
	if c.Body[0]["style"] != "good" || !strings.HasSuffix(last, "…") || c.FallbackText != "[RESOLVED] vault DEGRADED — disk WD-WX32D7088AF1 FAULTED, raidz2-0 can lose 1 more disk" {
		t.Errorf("style %v, last %q, fallback %q", c.Body[0]["style"], last, c.FallbackText)
	}
}

func TestTeamsRefusalsAndHints(t *testing.T) {
	for _, tc := range []struct {
		status   int
		body     string
		inErr    string
		fix      string
		severity alert.Severity
	}{
		{401, `{"error":{"code":"DirectApiAuthorizationRequired","message":"The request must be authenticated only by Shared Access scheme."}}`,
			"DirectApiAuthorizationRequired", "Who can trigger the flow", alert.Critical},
		{404, `{"error":{"code":"WorkflowNotFound","message":"The workflow '8d2c3a9f' could not be found."}}`, "WorkflowNotFound", "Post to a channel when a webhook request is received", alert.Critical},
		{400, `{"error":{"code":"InvalidRequestContent","message":"The input body for trigger 'manual' of type 'Request' must be of type JSON."}}`, "InvalidRequestContent", "When a Teams webhook request is received", alert.Warning},
		{429, `{"error":{"code":"WorkflowTriggeredTooFrequently","message":"Rate limit is exceeded."}}`, "HTTP 429", "retries by itself", alert.Warning},
		{413, `{"error":{"code":"MessageTooLarge","message":"Request entity too large"}}`, "HTTP 413", "28 KB", alert.Info},
	} {
		s := notifytest.StartHTTP(t, "")
		s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		})
		ch := notifytest.BuildOne(t, teamsChannel(s.URL+invoke+"?"+query))
		n := notifytest.Firing("nas1", "t-3")
		n.Alerts[0].Severity = tc.severity
		err := ch.Send(context.Background(), notifiers.Render(n))
		if err == nil || !strings.Contains(err.Error(), tc.inErr) || strings.Contains(err.Error(), "SiGnAtUrE") {
			t.Errorf("HTTP %d: err %v", tc.status, err)
			continue
		}
		if fix := ch.Fix(err); !strings.Contains(fix, tc.fix) {
			t.Errorf("HTTP %d: fix %q, want %q", tc.status, fix, tc.fix)
		}
	}
}

func TestTeamsConfigErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		`{name: a, type: teams}`: `notify.channels[0].webhook_url: empty: in Teams open the channel's ⋯ → Workflows`,
		`{name: a, type: teams, webhook_url: "https://outlook.office.com/webhook/0d7e-SeCrEt/IncomingWebhook/abc/def"}`:                                                `webhook_url = "https://outlook.office.com/…": is an Office 365 connector webhook, which Microsoft has retired`,
		`{name: a, type: teams, webhook_url: "https://contoso.webhook.office.com/webhookb2/0d7e-SeCrEt@tenant/IncomingWebhook/abc/def"}`:                               "which Microsoft has retired: in Teams open the channel's ⋯ → Workflows",
		`{name: a, type: teams, webhook_url: "https://prod-11.westus.logic.azure.com:443/workflows/1/triggers/manual/paths/invoke?api-version=2016-06-01"}`:            `has no sig= parameter`,
		`{name: a, type: teams, webhook_url: "https://prod-11.westus.logic.azure.com/workflows/1/triggers/manual/paths/invoke?api-version=2016-06-01&amp;sig=SeCrEt"}`: "contains &amp;",
		`{name: a, type: teams, webhook_url: "ftp://x/SeCrEt"}`:                                                                                                        "notify.channels[0].webhook_url",
	} {
		_, err := config.Parse(strings.NewReader("host: nas1\nstate_dir: /tmp/zw\nnotify:\n  channels:\n    - "+yaml+"\n"), catalog.Config())
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "SeCrEt") {
			t.Errorf("%s:\n  got  %v\n  want %q", yaml, err, want)
		}
	}
	ok := "{name: a, type: teams, webhook_url: \"https://prod-11.westus.logic.azure.com:443/workflows/1/triggers/manual/paths/invoke?" + query + "\"}"
	if _, err := config.Parse(strings.NewReader("host: nas1\nstate_dir: /tmp/zw\nnotify:\n  channels:\n    - "+ok+"\n"), catalog.Config()); err != nil {
		t.Errorf("a workflow URL is refused: %v", err)
	}
}
