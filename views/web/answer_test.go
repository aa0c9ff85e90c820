package web_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/incident"
	"github.com/zwatch/zwatch/internal/browsertest"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/views/statusview"
	"github.com/zwatch/zwatch/views/web"
)

var answerKey = answer.Key([]byte("0123456789abcdef0123456789abcdef"))

// serveAnswers is serve with the answer page on, acting through the
// fixture's bus as the daemon does (incident.Answer, incident.UseLink).
func serveAnswers(t *testing.T, f *fixture) string {
	t.Helper()
	do := func(ctx context.Context, act answer.Action, by, source string) (answer.Outcome, error) {
		res, err := incident.Answer(ctx, f.bus, facts.IncidentActionData{Incident: act.Incident, Action: act.Verb, By: by, Source: source}, answer.SnoozeFor)
		if errors.Is(err, incident.ErrNotFiring) {
			return answer.Outcome{}, answer.ErrGone
		}
		out := answer.Outcome{Host: res.Host}
		if res.Silence != nil {
			out.Until = res.Silence.EndsAt
		}
		return out, err
	}
	return serveAnswersWith(t, f, do, "")
}

// serveAnswersWith is serve with the answer page acting through do, links
// recorded in the fixture's bus, and replacements offered for replaceHost.
func serveAnswersWith(t *testing.T, f *fixture, do answer.Func, replaceHost string) string {
	t.Helper()
	h, err := web.NewHandler(web.Options{Config: f.cfg.HTTP, View: f.view, Version: "test", Answers: &web.AnswerOptions{
		Key: answerKey, Do: do, ErrUsed: incident.ErrLinkUsed, ReplaceHost: replaceHost,
		Use: func(ctx context.Context, nonce string, exp time.Time) error {
			return incident.UseLink(ctx, f.bus, nonce, exp)
		},
		Used: func(ctx context.Context, nonce string) (bool, error) { return incident.LinkUsed(ctx, f.bus, nonce) },
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func linkToken(t *testing.T, verb, incidentID string, now time.Time) string {
	t.Helper()
	l, err := answer.NewLink(answer.Action{Verb: verb, Incident: incidentID}, "nas1", now)
	if err != nil {
		t.Fatal(err)
	}
	return answerKey.SignLink(l)
}

func (c client) post(path string, form url.Values, header http.Header) response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		c.t.Fatal(err)
	}
	return response{code: resp.StatusCode, header: resp.Header, body: string(body)}
}

var formTokenRE = regexp.MustCompile(`name="form" value="([^"]+)"`)

func acked(h statusview.Host, id string) *alert.Ack {
	for _, a := range h.Alerts {
		if a.Incident == id && a.Ack != nil {
			return a.Ack
		}
	}
	return nil
}

// An answer link from a notification: the GET (a link preview makes one)
// shows the incident and a button and changes nothing; the POST needs the
// login, this page's form token and the same origin; it acknowledges the
// incident once, for the logged-in user; a second use, an expired link and
// a forged one are refused without acting.
func TestAnswerLink(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f := newFixture(t, ctx, false)
	h := f.settled(t, ctx)
	id := h.Alerts[0].Incident
	base := serveAnswers(t, f)
	c := client{t: t, base: base, user: loginName, pass: loginPassword}
	tok := linkToken(t, answer.Ack, id, time.Now())

	if r := (client{t: t, base: base}).get("/answer?t=" + tok); r.code != http.StatusUnauthorized {
		t.Fatalf("without a login: %d", r.code)
	}
	page := c.get("/answer?t=" + url.QueryEscape(tok))
	if page.code != http.StatusOK || !strings.Contains(page.body, "Acknowledge this incident?") || !strings.Contains(page.body, id) ||
		!strings.Contains(page.body, `method="post"`) || page.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("confirmation page: %d %v\n%s", page.code, page.header, page.body)
	}
	m := formTokenRE.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no form token in\n%s", page.body)
	}
	time.Sleep(300 * time.Millisecond)
	if a := acked(f.waitFor(t, ctx, "the view", func(statusview.Host) bool { return true }), id); a != nil {
		t.Fatalf("the GET acknowledged: %+v", a)
	}

	good := url.Values{"t": {tok}, "form": {m[1]}}
	for what, try := range map[string]struct {
		form   url.Values
		header http.Header
		code   int
	}{
		"no form token":     {url.Values{"t": {tok}}, nil, http.StatusForbidden},
		"another's token":   {url.Values{"t": {tok}, "form": {answerKey.FormToken(tok + "x")}}, nil, http.StatusForbidden},
		"from another site": {good, http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
		"another origin":    {good, http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
	} {
		if r := c.post("/answer", try.form, try.header); r.code != try.code {
			t.Errorf("%s: %d, want %d\n%s", what, r.code, try.code, r.body)
		}
	}
	if r := (client{t: t, base: base}).post("/answer", good, nil); r.code != http.StatusUnauthorized {
		t.Errorf("POST without a login: %d", r.code)
	}

	r := c.post("/answer", good, http.Header{"Sec-Fetch-Site": {"same-origin"}})
	if r.code != http.StatusOK || !strings.Contains(r.body, "acknowledged by admin") {
		t.Fatalf("the POST: %d\n%s", r.code, r.body)
	}
	h = f.waitFor(t, ctx, "the acknowledgement", func(h statusview.Host) bool { return acked(h, id) != nil })
	if a := acked(h, id); a.By != "admin" || a.Source != "page:admin" {
		t.Errorf("ack %+v, want by admin from page:admin", a)
	}
	if r := c.post("/answer", good, nil); r.code != http.StatusGone || !strings.Contains(r.body, "used already") {
		t.Errorf("second use: %d\n%s", r.code, r.body)
	}
	if r := c.get("/answer?t=" + tok); r.code != http.StatusGone || strings.Contains(r.body, `method="post"`) {
		t.Errorf("opening a used link: %d\n%s", r.code, r.body)
	}

	old := linkToken(t, answer.Snooze, id, time.Now().Add(-answer.LinkFor-time.Minute))
	if r := c.get("/answer?t=" + old); r.code != http.StatusGone || !strings.Contains(r.body, "expired") {
		t.Errorf("expired link: %d\n%s", r.code, r.body)
	}
	forged := answer.Key([]byte("fedcba9876543210fedcba9876543210"))
	l, _ := answer.NewLink(answer.Action{Verb: answer.Ack, Incident: id}, "nas1", time.Now())
	if r := c.get("/answer?t=" + forged.SignLink(l)); r.code != http.StatusBadRequest || strings.Contains(r.body, id) {
		t.Errorf("forged link: %d\n%s", r.code, r.body)
	}
	if r := c.do(http.MethodPut, "/answer"); r.code != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d", r.code)
	}

	// Without http.users the page has no /answer: a link alone never acts.
	open := f.cfg.HTTP
	open.Users = nil
	hh, err := web.NewHandler(web.Options{Config: open, View: f.view, Answers: &web.AnswerOptions{Key: answerKey}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(hh)
	defer srv.Close()
	anon := client{t: t, base: srv.URL}
	if r := anon.get("/answer?t=" + tok); r.code != http.StatusNotFound {
		t.Errorf("GET /answer without users: %d", r.code)
	}
	if r := anon.post("/answer", good, nil); r.code != http.StatusMethodNotAllowed {
		t.Errorf("POST /answer without users: %d", r.code)
	}
}

// The same in Chromium: opening the link (what a link preview or a tap in
// a mail app does) shows the button and acts on nothing; the tap on it
// snoozes the incident.
func TestAnswerLinkInChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f := newFixture(t, ctx, false)
	h := f.settled(t, ctx)
	id := h.Alerts[0].Incident
	base := serveAnswers(t, f)
	tab := browsertest.Start(t)
	login(t, tab)
	tok := linkToken(t, answer.Snooze, id, time.Now())
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, scancel := context.WithTimeout(tab, 30*time.Second)
		defer scancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			browsertest.Screenshot(t, tab, "answer.png")
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("open the link", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(base+"/answer?t="+tok),
		chromedp.WaitVisible(chromedp.CSS(`#answer-confirm`)))
	if got := browsertest.Eval[string](t, tab, `document.getElementById("answer-confirm").textContent`); got != "Snooze for 24 h" {
		t.Errorf("button %q", got)
	}
	time.Sleep(300 * time.Millisecond)
	cur := f.waitFor(t, ctx, "the view", func(statusview.Host) bool { return true })
	if len(cur.Silences) != 0 {
		t.Fatalf("opening the link snoozed: %+v", cur.Silences)
	}
	run("tap the button", chromedp.Click(chromedp.CSS(`#answer-confirm`)), chromedp.WaitVisible(chromedp.CSS(`#answer-done`)))
	if done := browsertest.Eval[string](t, tab, `document.getElementById("answer-done").textContent`); !strings.Contains(done, "snoozed until") {
		t.Errorf("after the tap: %q", done)
	}
	f.waitFor(t, ctx, "the snooze's silence", func(h statusview.Host) bool { return len(h.Silences) == 1 && h.Silences[0].CreatedBy == "admin" })
	if wide := browsertest.Eval[bool](t, tab, `document.documentElement.scrollWidth > window.innerWidth`); wide {
		t.Error("the answer page scrolls sideways at a phone's width")
	}
}

// The page at a phone's width: the pool's OFFLINE disk is one incident
// card (its PoolState, RedundancyMargin and VdevState inside, the guide
// once) with buttons; Acknowledge leads to the confirmation, its tap
// acknowledges, and the card says so and offers only Snooze after it.
func TestIncidentCardsInChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f := newFixture(t, ctx, false)
	h := f.settled(t, ctx)
	var id string
	for _, a := range h.Alerts {
		if a.Name == "VdevState" {
			id = a.Incident
		}
	}
	base := serveAnswers(t, f)
	tab := browsertest.Start(t)
	login(t, tab)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, scancel := context.WithTimeout(tab, 30*time.Second)
		defer scancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			browsertest.Screenshot(t, tab, "incidents.png")
			t.Fatalf("%s: %v", what, err)
		}
	}
	card := `article.incident[data-incident="` + id + `"]`
	run("load the page", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(card)))
	first := browsertest.Eval[string](t, tab, `document.querySelector("article.incident").dataset.incident`)
	if first != id {
		t.Errorf("first card is incident %q, want the OFFLINE disk's %s", first, id)
	}
	members := browsertest.Eval[string](t, tab, `[...document.querySelectorAll('`+card+` li.member')].map(li => li.dataset.alert).sort().join(",")`)
	for _, name := range []string{"PoolState", "RedundancyMargin", "VdevState"} {
		if !strings.Contains(members, name) {
			t.Errorf("the card holds %s, not %s", members, name)
		}
	}
	if n := browsertest.Eval[int](t, tab, `document.querySelectorAll('`+card+` details.guide').length`); n != 1 {
		t.Errorf("%d guides on the card, want 1", n)
	}
	if n := browsertest.Eval[int](t, tab, `document.querySelectorAll('article.incident details.guide').length`); n != 1 {
		t.Errorf("%d guides on the page, want 1", n)
	}
	if wide := browsertest.Eval[bool](t, tab, `document.documentElement.scrollWidth > window.innerWidth`); wide {
		t.Error("the page scrolls sideways at a phone's width")
	}
	run("tap Acknowledge", chromedp.Click(chromedp.CSS(card+` p.answer a.button`)), chromedp.WaitVisible(chromedp.CSS(`#answer-confirm`)))
	run("confirm", chromedp.Click(chromedp.CSS(`#answer-confirm`)), chromedp.WaitVisible(chromedp.CSS(`#answer-done`)))
	f.waitFor(t, ctx, "the acknowledgement", func(h statusview.Host) bool { return acked(h, id) != nil })
	run("back to the page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(card+` p.acked`)))
	if labels := browsertest.Eval[string](t, tab, `[...document.querySelectorAll('`+card+` p.answer a.button')].map(a => a.textContent).join(",")`); labels != "Snooze 24 h" {
		t.Errorf("buttons after the acknowledgement: %q, want only Snooze 24 h", labels)
	}
}
