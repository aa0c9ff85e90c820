package signal_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/signal"
)

// The signal-cli REST API's send endpoint, as documented in its Swagger UI
// (https://bbernhard.github.io/signal-cli-rest-api/#/Messages/post_v2_send)
// and README (https://github.com/bbernhard/signal-cli-rest-api#readme):
// POST /v2/send, JSON {"message", "number", "recipients": [...],
// "text_mode": "normal"|"styled"}, 201 {"timestamp": "..."} on success,
// 400 {"error": "..."} on a refusal, 429 with challenge_tokens when Signal
// rate-limits the account. One request takes either phone numbers or one
// group (group.…), never both (SendV2 in src/client/client.go).

// sendRequest is the documented body.
type sendRequest struct {
	Message    string   `json:"message"`
	Number     string   `json:"number"`
	Recipients []string `json:"recipients"`
	TextMode   *string  `json:"text_mode"`
}

// restAPI stands in for the REST API: it refuses what the real one refuses
// and answers 201 otherwise.
func restAPI(t *testing.T) *notifytest.HTTPSink {
	s := notifytest.StartHTTP(t, "")
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		s.Record(h)
		w.Header().Set("Content-Type", "application/json")
		refuse := func(msg string) {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
		}
		var req sendRequest
		switch {
		case h.Method != http.MethodPost || h.Path != "/v2/send":
			w.WriteHeader(http.StatusNotFound)
			return
		case !strings.HasPrefix(h.Header.Get("Content-Type"), "application/json"):
			refuse("Couldn't process request - invalid request")
			return
		case json.Unmarshal(h.Body, &req) != nil:
			refuse("Couldn't process request - invalid request")
			return
		case len(req.Recipients) == 0:
			refuse("Couldn't process request - please provide at least one recipient")
			return
		case req.Number == "":
			refuse("Couldn't process request - please provide a valid number")
			return
		case req.TextMode != nil && *req.TextMode != "normal" && *req.TextMode != "styled":
			refuse("Couldn't process request - invalid text mode")
			return
		}
		groups := 0
		for _, r := range req.Recipients {
			if strings.HasPrefix(r, "group.") {
				groups++
			}
		}
		switch {
		case groups > 0 && groups < len(req.Recipients):
			refuse("Signal Messenger Groups and phone numbers cannot be specified together in one request! Please split them up into multiple REST API calls.")
			return
		case groups > 1:
			refuse("A signal message cannot be sent to more than one group at once! Please use multiple REST API calls for that.")
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"timestamp":"1700000000000"}`))
	})
	return s
}

// groupID is an id as GET /v1/groups lists it: group. and the base64 of
// the base64 of 32 bytes.
func groupID(b byte) string {
	raw := make([]byte, 32)
	for i := range raw {
		raw[i] = b
	}
	return "group." + base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString(raw)))
}

func channelTo(url string, recipients ...string) config.ChannelConfig {
	return config.ChannelConfig{Name: "signal", Type: "signal",
		Settings: signal.Config{URL: url, Number: "+4915112345678", Recipients: recipients}}
}

func decode(t *testing.T, h notifytest.Hit) sendRequest {
	t.Helper()
	var r sendRequest
	if err := json.Unmarshal(h.Body, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSignalRequestSplitsNumbersAndGroups(t *testing.T) {
	s := restAPI(t)
	g1, g2 := groupID(1), groupID(2)
	cc := channelTo(s.URL+"/", "+4917612345678", g1, "+14155550123", g2)
	if err := notifytest.Send(t, cc, notifytest.Firing("nas1", "s-1")); err != nil {
		t.Fatal(err)
	}
	hits := s.All()
	if len(hits) != 3 {
		t.Fatalf("%d requests, want 3 (the numbers, then each group)", len(hits))
	}
	want := [][]string{{"+4917612345678", "+14155550123"}, {g1}, {g2}}
	for i, h := range hits {
		r := decode(t, h)
		if !slices.Equal(r.Recipients, want[i]) || r.Number != "+4915112345678" {
			t.Errorf("request %d: number %q recipients %v, want %v", i, r.Number, r.Recipients, want[i])
		}
		if r.TextMode == nil || *r.TextMode != "normal" {
			t.Errorf("request %d: text_mode %v, want normal sent explicitly", i, r.TextMode)
		}
		if first, _, _ := strings.Cut(r.Message, "\n"); first != notifytest.WantSummary {
			t.Errorf("request %d: first line %q", i, first)
		}
		if !strings.Contains(r.Message, notifytest.GuideText) {
			t.Errorf("request %d: the replacement guide is missing", i)
		}
	}
}

func TestSignalLongTextIsCutAt64KiB(t *testing.T) {
	s := restAPI(t)
	n := notifytest.Firing("nas1", "s-2")
	n.Alerts[0].Description = strings.Repeat("ä", 70<<10)
	if err := notifytest.Send(t, channelTo(s.URL, "+4917612345678"), n); err != nil {
		t.Fatal(err)
	}
	r := decode(t, notifytest.Only(t, s))
	if len(r.Message) > 64<<10 || !strings.HasSuffix(r.Message, "…") || !strings.HasPrefix(r.Message, notifytest.WantSummary+"\n") {
		t.Errorf("message of %d bytes, want at most 65536 ending in …, the summary first", len(r.Message))
	}
}

func TestSignalStyledBoldsTheSummaryAndEscapesTheRest(t *testing.T) {
	m := notifiers.Render(notifytest.Firing("nas1", "s-3"))
	m.Text = "[CRITICAL] a*b\nsnapshots tank/* ~1h `x` a||b"
	got := signal.Text(m, "styled")
	want := "**[CRITICAL] a\\*b**\nsnapshots tank/\\* \\~1h \\`x\\` a\\|\\|b"
	if got != want {
		t.Errorf("styled:\n got %q\nwant %q", got, want)
	}
	m.Text = `share \\nas1\`
	if got := signal.Text(m, "styled"); got != `**share \\nas1\ **` {
		t.Errorf("a summary ending in a backslash: %q", got)
	}
	if plain := signal.Text(m, "normal"); plain != m.Text {
		t.Errorf("normal mode changed the text: %q", plain)
	}

	s := restAPI(t)
	cc := channelTo(s.URL, "+4917612345678")
	cc.Settings = signal.Config{URL: s.URL, Number: "+4915112345678", Recipients: []string{"+4917612345678"}, TextMode: "styled"}
	if err := notifytest.Send(t, cc, notifytest.Firing("nas1", "s-4")); err != nil {
		t.Fatal(err)
	}
	r := decode(t, notifytest.Only(t, s))
	if r.TextMode == nil || *r.TextMode != "styled" || !strings.HasPrefix(r.Message, "**[CRITICAL] vault DEGRADED") {
		t.Errorf("styled request: %v %q", r.TextMode, r.Message[:40])
	}
}

// TestSignalRetryRepeatsOnlyWhatFailed: a group the account does not know
// fails after the numbers got the message; the retry goes to the group only.
func TestSignalRetryRepeatsOnlyWhatFailed(t *testing.T) {
	s := restAPI(t)
	g := groupID(3)
	ch := notifytest.BuildOne(t, channelTo(s.URL, "+4917612345678", g))
	var fail atomic.Bool
	fail.Store(true)
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		s.Record(h)
		if fail.Load() && strings.Contains(string(h.Body), "group.") {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"Failed to send message: Group not found: ` + g + `"}`))
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"timestamp":"1"}`))
	})
	m := notifiers.Render(notifytest.Firing("nas1", "s-5"))
	err := ch.Send(context.Background(), m)
	if err == nil || !strings.Contains(err.Error(), "Group not found") {
		t.Fatalf("err %v", err)
	}
	if fix := ch.Fix(err); !strings.Contains(fix, "GET /v1/groups/+4915112345678") {
		t.Errorf("fix %q", fix)
	}
	fail.Store(false)
	if err := ch.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	hits := s.All()
	if len(hits) != 3 {
		t.Fatalf("%d requests, want numbers, group (failed), group", len(hits))
	}
	if r := decode(t, hits[2]); !slices.Equal(r.Recipients, []string{g}) {
		t.Errorf("retry went to %v, want the group only", r.Recipients)
	}
}

// TestSignalHints: the REST API's typical refusals, in signal-cli's words.
func TestSignalHints(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		want   string
	}{
		{400, `{"error":"User +4915112345678 is not registered."}`, "link it (GET /v1/qrcodelink"},
		{400, `{"error":"Failed to send message due to untrusted identities"}`, "PUT /v1/identities/+4915112345678/trust/"},
		{400, `{"error":"Failed to send message: Unregistered user \"+4917612345678\""}`, "has no Signal account"},
		{429, `{"error":"Failed to send message due to rate limiting. Use the attached challenge tokens to lift the rate limit restrictions via the '/v1/accounts/{number}/rate-limit-challenge' endpoint.","challenge_tokens":["abc"],"account":"+4915112345678"}`, "POST /v1/accounts/+4915112345678/rate-limit-challenge"},
		{400, `{"error":"Cannot send message to group - please first update your profile."}`, "PUT /v1/profiles/+4915112345678"},
		{404, `404 page not found`, "no /v2/send at url"},
	} {
		s := notifytest.StartHTTP(t, "")
		s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
			w.WriteHeader(c.status)
			_, _ = w.Write([]byte(c.body))
		})
		ch := notifytest.BuildOne(t, channelTo(s.URL, "+4917612345678"))
		err := ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "h")))
		if err == nil {
			t.Fatalf("%d %s: no error", c.status, c.body)
		}
		if fix := ch.Fix(err); !strings.Contains(fix, c.want) {
			t.Errorf("%d %s:\n fix %q\nwant %q", c.status, c.body, fix, c.want)
		}
	}
}

// TestSignalSlowRESTAPIHint: signal-cli in MODE=normal starts Java for
// every message; a send that outlives its deadline says so.
func TestSignalSlowRESTAPIHint(t *testing.T) {
	s := notifytest.StartHTTP(t, "")
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) { time.Sleep(500 * time.Millisecond) })
	ch := notifytest.BuildOne(t, channelTo(s.URL, "+4917612345678"))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := ch.Send(ctx, notifiers.Render(notifytest.Firing("nas1", "slow")))
	if err == nil || !strings.Contains(ch.Fix(err), "MODE=json-rpc") {
		t.Errorf("err %v fix %q", err, ch.Fix(err))
	}
}

func TestSignalConfigErrors(t *testing.T) {
	parse := func(entry string) error {
		_, err := config.Parse(strings.NewReader("host: nas1\nstate_dir: /tmp/zw\nnotify:\n  console: false\n  channels:\n    - "+entry+"\n"), config.Catalog{Channels: []config.ChannelType{signal.Service}})
		return err
	}
	ok := `{name: sig, type: signal, url: "http://127.0.0.1:8080", number: "+4915112345678", recipients: ["+4917612345678", "` + groupID(7) + `"], text_mode: styled}`
	if err := parse(ok); err != nil {
		t.Fatalf("valid config refused: %v", err)
	}
	for entry, want := range map[string]string{
		`{name: sig, type: signal, number: "+4915112345678", recipients: ["+4917612345678"]}`:                                         "notify.channels[0].url: empty: set the signal-cli REST API",
		`{name: sig, type: signal, url: "http://u:pw@h:8080", number: "+4915112345678", recipients: ["+4917612345678"]}`:              "notify.channels[0].url: holds a user name or password",
		`{name: sig, type: signal, url: "http://h:8080", recipients: ["+4917612345678"]}`:                                             "notify.channels[0].number: empty: set the Signal account that sends",
		`{name: sig, type: signal, url: "http://h:8080", number: "0151 12345678", recipients: ["+4917612345678"]}`:                    `notify.channels[0].number = "0151 12345678": a national number: write it in E.164 form`,
		`{name: sig, type: signal, url: "http://h:8080", number: "+49 151 1234-5678", recipients: ["+4917612345678"]}`:                "write it without spaces, dashes or brackets: +4915112345678",
		`{name: sig, type: signal, url: "http://h:8080", number: "+4915112345678", recipients: ["0049 176 12345678"]}`:                `notify.channels[0].recipients[0] = "0049 176 12345678": not in E.164 form: write the leading 00 as +: +4917612345678`,
		`{name: sig, type: signal, url: "http://h:8080", number: "+4915112345678"}`:                                                   "notify.channels[0].recipients: empty: add at least one phone number",
		`{name: sig, type: signal, url: "http://h:8080", number: "+4915112345678", recipients: ["group.abc"]}`:                        "notify.channels[0].recipients[0] = \"group.abc\": not a Signal group id: copy the id (group.…) from GET /v1/groups/+4915112345678",
		`{name: sig, type: signal, url: "http://h:8080", number: "+4915112345678", recipients: ["+4917612345678", "+4917612345678"]}`: "notify.channels[0].recipients[1] = \"+4917612345678\": listed twice",
		`{name: sig, type: signal, url: "http://h:8080", number: "+4915112345678", recipients: ["@jane"]}`:                            "not an E.164 phone number",
		`{name: sig, type: signal, url: "http://h:8080", number: "+4915112345678", recipients: ["+4917612345678"], text_mode: bold}`:  `notify.channels[0].text_mode = "bold": must be one of normal, styled`,
	} {
		if err := parse(entry); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\n  got  %v\n  want %q", entry, err, want)
		}
	}
}
