package notifiers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// pager is a channel type that exists only in this file: what a new
// folder under notifiers/ would hold. It posts the summary as JSON to a
// gateway with a bearer token.
var pager = channel.Define[pagerConfig]("pager")

type pagerConfig struct {
	URL   string        `yaml:"url"`
	Token config.Secret `yaml:"token"`
}

var _ channel.Settings = pagerConfig{}

func (c pagerConfig) Validate(p string, errs *config.Errors) {
	channel.RequiredURL(errs, p+".url", c.URL, "the pager gateway")
	channel.Need(errs, p+".token", c.Token.IsSet(), "empty: set the gateway token")
}

func (c pagerConfig) HasLiteralSecret() bool { return c.Token.Literal }

// URLForm lets the channel be written as one URL, pager://TOKEN@host/path,
// plain http with ?plain=yes.
func (pagerConfig) URLForm() channel.URLForm[pagerConfig] {
	return channel.URLForm[pagerConfig]{
		Schemes: []string{"pager"},
		Decode: func(u *channel.URL) (pagerConfig, error) {
			token, _, ok := u.User()
			if !ok || token == "" {
				return pagerConfig{}, channel.Errorf("user", "no token: write pager://TOKEN@host/path")
			}
			plain, _, err := u.Bool("plain")
			scheme := "https"
			if plain {
				scheme = "http"
			}
			return pagerConfig{URL: scheme + "://" + u.HostPort() + u.EscapedPath(), Token: u.Secret(token)}, err
		},
	}
}

func (c pagerConfig) NewSender(env channel.Env) (channel.Sender, error) {
	return &pagerSender{url: c.URL, token: c.Token.Value, client: env.HTTP}, nil
}

type pagerSender struct {
	url, token string
	client     *http.Client
}

var _ channel.Sender = (*pagerSender)(nil)

func (s *pagerSender) Send(ctx context.Context, m channel.Message) error {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+s.token)
	return channel.Do(ctx, s.client, channel.Request{
		Service: "pager", URL: s.url, Header: h, ContentType: "application/json",
		Payload: map[string]any{"id": m.ID, "summary": m.Summary, "severity": m.Severity, "resolved": m.Resolved},
		Secrets: []string{s.token},
	})
}

// TestNewChannelTypeNeedsOnlyItsFolder proves the seam: a channel type
// defined entirely here, added to zwatch's own, is checked by config.Parse
// like any other and delivered by the real outbox, with nothing else
// changed.
func TestNewChannelTypeNeedsOnlyItsFolder(t *testing.T) {
	var cat config.Catalog
	for _, s := range notifiers.Services() {
		cat.Channels = append(cat.Channels, s)
	}
	cat.Channels = append(cat.Channels, pager)
	parse := func(channels string) (*config.Loaded, error) {
		return config.Parse(strings.NewReader("host: nas1\nstate_dir: /tmp/zw\nnotify:\n  console: false\n  channels:\n"+channels), cat)
	}

	// Its keys are checked as every type's are.
	for yaml, want := range map[string]string{
		"    - {name: oncall, type: pager, url: \"https://pg.example\", tokn: x}\n":            `notify.channels[0].tokn: unknown key (line 6): did you mean "token"?`,
		"    - {name: oncall, type: pager, url: \"https://pg.example\"}\n":                     "notify.channels[0].token: empty: set the gateway token",
		"    - {name: oncall, type: pager, url: \"https://pg.example\", token: t, topic: x}\n": "notify.channels[0].topic: not used by type pager (its keys: url, token)",
		"    - {name: oncall, type: pagr}\n":                                                   "must be one of email, pushover, telegram, ntfy, gotify, discord, slack, mattermost, teams, matrix, webhook, exec, mqtt, signal, pagerduty, opsgenie, pager",
	} {
		if _, err := parse(yaml); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s  got  %v\n  want %q", yaml, err, want)
		}
	}

	gw := notifytest.StartHTTP(t, `{"ok":true}`)
	l, err := parse(fmt.Sprintf("    - {name: oncall, type: pager, url: %q, token: pg-secret-123, min_severity: critical}\n", gw.URL+"/page"))
	if err != nil {
		t.Fatal(err)
	}
	masked, err := l.Config.Masked()
	if err != nil {
		t.Fatal(err)
	}
	if s := string(masked); strings.Contains(s, "pg-secret-123") || !strings.Contains(s, "token: '******'") || !strings.Contains(s, "url: "+gw.URL) {
		t.Errorf("Masked():\n%s", s)
	}

	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	stop := notifytest.RunNotifiers(t, b, l.Config.Notify, delivery.Options{})
	defer stop()
	notifytest.Publish(t, b, notifytest.Firing("nas1", "page-1"))
	select {
	case h := <-gw.Got:
		j := h.JSON(t)
		if h.Path != "/page" || h.Header.Get("Authorization") != "Bearer pg-secret-123" || j["id"] != "page-1" ||
			j["summary"] != notifytest.WantSummary || j["severity"] != "critical" {
			t.Errorf("gateway got %s %v %v", h.Path, h.Header, j)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the outbox did not deliver to the pager channel")
	}

	// Its URL form is its folder's too: decoded, masked and delivered the same.
	gwURL := strings.TrimPrefix(gw.URL, "http://")
	if _, err := parse("    - url: pager://" + gwURL + "/page\n"); err == nil || !strings.Contains(err.Error(), "notify.channels[0].url = \"pager://"+gwURL+"/…\": user: no token") {
		t.Errorf("pager URL without token: %v", err)
	}
	lu, err := parse("    - url: \"pager://pg-url-secret-456@" + gwURL + "/page?plain=yes\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if masked, _ := lu.Config.Masked(); strings.Contains(string(masked), "pg-url-secret-456") || !strings.Contains(string(masked), "# from url: pager://***@"+gwURL+"/page?plain=yes") {
		t.Errorf("Masked():\n%s", masked)
	}
	stopURL := notifytest.RunNotifiers(t, b, lu.Config.Notify, delivery.Options{})
	defer stopURL()
	select {
	case h := <-gw.Got:
		if h.Header.Get("Authorization") != "Bearer pg-url-secret-456" || h.JSON(t)["id"] != "page-1" {
			t.Errorf("gateway got %v %s", h.Header, h.Body)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the outbox did not deliver to the pager channel written as a URL")
	}

	gw.Answer(func(w http.ResponseWriter, _ notifytest.Hit) { w.WriteHeader(http.StatusUnauthorized) })
	res := notifiers.Test(context.Background(), l.Config.Notify, "oncall", notifiers.SampleNotification("nas1"))
	if len(res) != 1 || res[0].Delivered || res[0].Type != "pager" || !strings.Contains(res[0].Fix, "HTTP 401") ||
		strings.Contains(res[0].Err.Error(), "pg-secret-123") {
		t.Errorf("notify test: %+v", res)
	}
}
