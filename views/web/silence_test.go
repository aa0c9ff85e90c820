package web_test

import (
	"context"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/silence"
	"github.com/zwatch/zwatch/views/statusview"
)

// A silence stored in the bus's state bucket (as `zwatch silence add`
// stores it) shows on the page and in the JSON API: each alert it
// silences says until when, by whom and why, and the page and
// /api/host list the silences in force.
func TestSilencesOnThePageAndAPI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newFixture(t, ctx, false)
	f.settled(t, ctx)
	ms, err := silence.ParseMatchers([]string{"pool=vault"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := silence.NewID()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	s := silence.Silence{ID: id, Matchers: ms, StartsAt: now, EndsAt: now.Add(7 * 24 * time.Hour), CreatedBy: "alice",
		Comment: "waiting for the <new> disk", MaxSeverity: alert.Critical, UpdatedAt: now}
	kv, err := f.bus.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := silence.Create(ctx, kv, &s); err != nil {
		t.Fatal(err)
	}
	c := client{t: t, base: serve(t, f, nil), user: loginName, pass: loginPassword}

	var h statusview.Host
	decode(t, c.get("/api/host?host=nas1"), &h)
	silenced := 0
	for _, a := range h.Alerts {
		if a.Labels["pool"] == "vault" {
			if a.Silenced == nil || a.Silenced.ID != id || a.Silenced.CreatedBy != "alice" || !a.Silenced.EndsAt.Equal(s.EndsAt) {
				t.Errorf("%s of vault: silenced %+v", a.Name, a.Silenced)
			}
			silenced++
		}
	}
	if silenced == 0 || len(h.Silences) != 1 || h.Silences[0].ID != id || h.Silences[0].State != silence.Active || h.Silences[0].Silencing != silenced {
		t.Fatalf("/api/host: %d silenced alerts, silences %+v", silenced, h.Silences)
	}
	var hosts []statusview.HostSummary
	decode(t, c.get("/api/hosts"), &hosts)
	if len(hosts) != 1 || hosts[0].Silenced != silenced {
		t.Errorf("/api/hosts: %+v, want %d silenced", hosts, silenced)
	}

	page := c.get("/?host=nas1")
	body := html.UnescapeString(page.body)
	for _, want := range []string{
		`<section id="silences">`, `data-silence="` + id + `"`, id[:8] + `</strong> active: pool="vault", up to critical`,
		"Silenced until " + s.EndsAt.Format("2006-01-02 15:04 UTC") + " by alice: waiting for the <new> disk",
		"(silenced)",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page.body, "<new>") {
		t.Error("the comment is not escaped")
	}
}
