package web_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/zwatch/zwatch/internal/browsertest"
)

// login makes every request of the tab carry the fixture's basic auth.
func login(t *testing.T, ctx context.Context) {
	t.Helper()
	token := base64.StdEncoding.EncodeToString([]byte(loginName + ":" + loginPassword))
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
		Headers: network.Headers{"Authorization": "Basic " + token}}); err != nil {
		t.Fatal(err)
	}
}

// TestPageInChromium loads the page of the recorded degraded pool in a real
// browser: the pool, its offline disk highlighted, plots drawn by uPlot from
// the history, no horizontal scroll at a phone's 390 px, and the status
// readable with JavaScript off.
func TestPageInChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f := newFixture(t, ctx, true)
	f.settled(t, ctx)
	base := serve(t, f, f.history)
	tab := browsertest.Start(t)
	login(t, tab)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, scancel := context.WithTimeout(tab, 30*time.Second)
		defer scancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				browsertest.Screenshot(t, tab, "timeout.png")
			}
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("load the page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`article.pool[data-pool="vault"]`)))
	summary := browsertest.Eval[string](t, tab, `document.getElementById("summary").textContent`)
	if !strings.Contains(summary, "vault DEGRADED: raidz2-0 can lose 1 more disk") {
		t.Errorf("summary %q", summary)
	}
	problem := browsertest.Eval[string](t, tab, `(() => { const r = [...document.querySelectorAll('article.pool[data-pool="vault"] tr.vdev.problem')].find(r => r.textContent.includes("virtio-ZWV0001"));
		return r ? r.textContent + "|" + getComputedStyle(r).backgroundColor : "" })()`)
	if !strings.Contains(problem, "virtio-ZWV0001") || !strings.Contains(problem, "OFFLINE") || strings.HasSuffix(problem, "rgba(0, 0, 0, 0)") {
		t.Errorf("offline disk not highlighted: %q", problem)
	}
	run("draw a plot", chromedp.WaitVisible(chromedp.CSS(`figure.plot[data-drawn="true"] canvas`)))
	size := browsertest.Eval[[]int](t, tab, `(() => { const c = document.querySelector('figure.plot[data-drawn="true"] canvas'); return [c.width, c.height] })()`)
	if len(size) != 2 || size[0] == 0 || size[1] == 0 {
		t.Errorf("plot canvas size %v", size)
	}
	// Every plot ends drawn or with a note saying why not.
	for browsertest.Eval[int](t, tab, `[...document.querySelectorAll('figure.plot')].filter(f => !f.dataset.drawn && !f.querySelector('.plot-note')).length`) > 0 {
		if ctx.Err() != nil {
			t.Fatal("plots still loading")
		}
		time.Sleep(50 * time.Millisecond)
	}
	drawn := browsertest.Eval[int](t, tab, `document.querySelectorAll('figure.plot[data-drawn="true"]').length`)
	// Both pools' capacity, and the ATA, SSD and NVMe disks' temperature,
	// counters and power-on hours (the SAS disk reports no counters).
	if drawn < 2+3*3 {
		t.Errorf("%d plots drawn, want at least %d", drawn, 2+3*3)
	}
	failed := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll('figure.plot .plot-note')].map(n => n.textContent).filter(t => t !== "No history yet.")`)
	if len(failed) > 0 {
		t.Errorf("plots failed: %q", failed)
	}
	t.Logf("plots drawn: %d", drawn)
	browsertest.Screenshot(t, tab, "status-page-desktop.png")

	run("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`figure.plot[data-drawn="true"] canvas`)))
	widths := browsertest.Eval[[]int](t, tab, `[document.documentElement.scrollWidth, window.innerWidth]`)
	if len(widths) != 2 || widths[0] > widths[1] {
		t.Errorf("horizontal scroll at 390 px: scrollWidth %v > innerWidth", widths)
	}
	browsertest.Screenshot(t, tab, "status-page-phone.png")
	top, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	browsertest.WriteOut(t, "status-page-phone-top.png", top)
	vault, err := chromedp.Run(tab, chromedp.Screenshot(chromedp.CSS(`article.pool[data-pool="vault"]`)))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.WriteOut(t, "status-page-phone-vault.png", vault)

	light := browsertest.Eval[string](t, tab, `getComputedStyle(document.body).backgroundColor`)
	if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	if dark := browsertest.Eval[string](t, tab, `getComputedStyle(document.body).backgroundColor`); dark == light || dark != "rgb(20, 20, 20)" {
		t.Errorf("dark mode: background %s (light %s), want rgb(20, 20, 20)", dark, light)
	}
	darkTop, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	browsertest.WriteOut(t, "status-page-phone-dark.png", darkTop)

	if _, err := chromedp.Call(tab, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	run("load without JavaScript", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`#summary`)))
	text, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(`main`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"vault DEGRADED: raidz2-0 can lose 1 more disk", "virtio-ZWV0001", "WD-WCC7K0000001", "How to fix it"} {
		if !strings.Contains(text, want) {
			t.Errorf("without JavaScript the page lacks %q", want)
		}
	}
	if n := browsertest.Eval[int](t, tab, `document.querySelectorAll('figure.plot canvas').length`); n != 0 {
		t.Errorf("%d plots drawn with JavaScript off?", n)
	}
	browsertest.Screenshot(t, tab, "status-page-no-js.png")
}
