package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zwatch/zwatch/internal/browsertest"
	"github.com/zwatch/zwatch/notifiers/answer"
)

// replaceDo stands in for the daemon's replacement (tools/replace/remote,
// tested on its own): Replace asks with one disk, Confirm starts and
// records who confirmed.
type replaceDo struct {
	mu        sync.Mutex
	asked     int
	confirmed []string
}

const replaceQuestion = "Replace virtio-ZWV0001 in pool vault (raidz2-0)?\n\nWith /dev/disk/by-id/wwn-0x5000c500a0000003 (1.0 GiB, ST4000NM0035, serial ZWS0003): this erases everything on it. zwatch runs:\nzpool replace vault 10435598765337925746 /dev/disk/by-id/wwn-0x5000c500a0000003"

func (d *replaceDo) do(_ context.Context, act answer.Action, by, source string) (answer.Outcome, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch act.Verb {
	case answer.Replace:
		d.asked++
		return answer.Outcome{Text: replaceQuestion, Ask: []answer.Option{
			{Label: "⚠️ Erase ZWS0003 and replace", Action: answer.Action{Verb: answer.Confirm, Incident: "0a1b2c3d"}, Word: "ZWS0003"},
			{Label: "Cancel", Action: answer.Action{Verb: answer.Cancel, Incident: "0a1b2c3d"}}}}, nil
	case answer.Confirm:
		d.confirmed = append(d.confirmed, act.Incident+" "+by+" "+source)
		p := make(chan string)
		close(p)
		return answer.Outcome{Text: "Started by " + by + ": zpool replace vault 10435598765337925746 /dev/disk/by-id/wwn-0x5000c500a0000003", Progress: p}, nil
	}
	return answer.Outcome{}, answer.ErrGone
}

func (d *replaceDo) counts() (int, []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asked, append([]string(nil), d.confirmed...)
}

var replaceFormRE = regexp.MustCompile(`name="offer" value="([^"]+)">\s*<input type="hidden" name="word" value="([^"]+)">\s*<input type="hidden" name="form" value="([^"]+)">`)

// The replacement from the status page, at a phone's width: the OFFLINE
// disk's card offers Replace; opening the link asks nothing of the box;
// Check the disks shows the question, the command and a form asking for
// the new disk's serial; typed, it starts the replacement, once, for the
// logged-in user. A wrong serial, a swapped offer and a second use of the
// link start nothing.
func TestReplaceDialogInChromium(t *testing.T) {
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
	d := &replaceDo{}
	base := serveAnswersWith(t, f, d.do, "nas1")

	// Over HTTP first: the refusals.
	c := client{t: t, base: base, user: loginName, pass: loginPassword}
	tok := linkToken(t, answer.Replace, id, time.Now())
	if r := c.get("/answer?t=" + url.QueryEscape(tok)); r.code != http.StatusOK || !strings.Contains(r.body, "Check the disks") {
		t.Fatalf("the link: %d\n%s", r.code, r.body)
	}
	if asked, _ := d.counts(); asked != 0 {
		t.Fatal("opening the link asked the box")
	}
	m := formTokenRE.FindStringSubmatch(c.get("/answer?t=" + url.QueryEscape(tok)).body)
	q := c.post("/answer", url.Values{"t": {tok}, "form": {m[1]}}, nil)
	fm := replaceFormRE.FindStringSubmatch(q.body)
	if q.code != http.StatusOK || fm == nil || !strings.Contains(q.body, "zpool replace vault 10435598765337925746") {
		t.Fatalf("the question: %d\n%s", q.code, q.body)
	}
	form := func(offer, word, typed string) url.Values {
		return url.Values{"t": {tok}, "offer": {offer}, "word": {word}, "form": {fm[3]}, "confirm": {typed}}
	}
	for what, try := range map[string]struct {
		form url.Values
		code int
	}{
		"a wrong serial":  {form(fm[1], fm[2], "ZWS0004"), http.StatusBadRequest},
		"no serial":       {form(fm[1], fm[2], ""), http.StatusBadRequest},
		"a swapped offer": {form("0badc0de", fm[2], fm[2]), http.StatusForbidden},
		"a swapped word":  {form(fm[1], "ZWS0004", "ZWS0004"), http.StatusForbidden},
	} {
		if r := c.post("/answer", try.form, nil); r.code != try.code {
			t.Errorf("%s: %d, want %d\n%s", what, r.code, try.code, r.body)
		}
	}
	if _, confirmed := d.counts(); len(confirmed) != 0 {
		t.Fatalf("started: %q", confirmed)
	}

	// Then as a person does it.
	tab := browsertest.Start(t)
	login(t, tab)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, scancel := context.WithTimeout(tab, 30*time.Second)
		defer scancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			browsertest.Screenshot(t, tab, "replace.png")
			t.Fatalf("%s: %v", what, err)
		}
	}
	card := `article.incident[data-incident="` + id + `"]`
	run("load the page", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(card)))
	labels := browsertest.Eval[string](t, tab, `[...document.querySelectorAll('`+card+` p.answer a.button')].map(a => a.textContent).join(",")`)
	if !strings.Contains(labels, ",Replace ") {
		t.Fatalf("the card's buttons %q offer no Replace", labels)
	}
	run("tap Replace", chromedp.Click(chromedp.CSS(card+` p.answer a.button:last-child`)), chromedp.WaitVisible(chromedp.CSS(`#answer-confirm`)))
	run("check the disks", chromedp.Click(chromedp.CSS(`#answer-confirm`)), chromedp.WaitVisible(chromedp.CSS(`#replace-question`)))
	if wide := browsertest.Eval[bool](t, tab, `document.documentElement.scrollWidth > window.innerWidth`); wide {
		t.Error("the question scrolls sideways at a phone's width")
	}
	run("type the serial and confirm", chromedp.SendKeys(chromedp.CSS(`form.replace input[name="confirm"]`), "ZWS0003"),
		chromedp.Click(chromedp.CSS(`button.replace-confirm`)), chromedp.WaitVisible(chromedp.CSS(`#answer-done`)))
	if done := browsertest.Eval[string](t, tab, `document.getElementById("answer-done").textContent`); !strings.HasPrefix(done, "Started by admin: zpool replace vault") {
		t.Errorf("after the confirmation: %q", done)
	}
	if _, confirmed := d.counts(); len(confirmed) != 1 || confirmed[0] != "0a1b2c3d admin page:admin" {
		t.Errorf("confirmed: %q", confirmed)
	}
	// A link starts one replacement: its question's form, sent again,
	// starts nothing.
	if r := c.post("/answer", form(fm[1], fm[2], fm[2]), nil); r.code != http.StatusOK {
		t.Errorf("first use over HTTP: %d\n%s", r.code, r.body)
	}
	if r := c.post("/answer", form(fm[1], fm[2], fm[2]), nil); r.code != http.StatusGone || !strings.Contains(r.body, "used already") {
		t.Errorf("second use: %d\n%s", r.code, r.body)
	}
	if _, confirmed := d.counts(); len(confirmed) != 2 {
		t.Errorf("confirmed %d times, want 2 (one per link): %q", len(confirmed), confirmed)
	}
}
