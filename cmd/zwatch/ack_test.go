package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules"
)

// lastAction reads the newest incident.action fact of host.
func lastAction(t *testing.T, ctx context.Context, b *bus.Bus, host string) (bus.Envelope, facts.IncidentActionData) {
	t.Helper()
	s, err := b.JS.Stream(ctx, bus.StreamFacts)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetLastMsgForSubject(ctx, bus.Subject(host, facts.IncidentAction.Name()))
	if err != nil {
		t.Fatalf("no incident.action fact for %s: %v", host, err)
	}
	env, err := bus.Decode(m.Data, facts.IncidentAction.Name(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var d facts.IncidentActionData
	if err := json.Unmarshal(env.Data, &d); err != nil {
		t.Fatal(err)
	}
	return env, d
}

// `zwatch ack`, `unack` and `snooze` answer an incident of the real
// offline capture through the daemon's bus: the fact names the incident,
// who and how, and the engine that reads it stops the repeats; the snooze
// is a silence of that incident only, listed with who made it.
func TestIncidentCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	state := t.TempDir()
	cfgPath := writeConfig(t, fmt.Sprintf("host: nas1\nstate_dir: %s\nnotify:\n  console: false\n", state))
	b := openDaemonBus(t, ctx, cfgPath)
	defer b.Close()
	firing := fireOffline(t, ctx, b)
	var id string
	for _, a := range firing {
		if a.State == alert.Firing && a.Labels["pool"] == "vault" {
			id = a.Incident
		}
	}
	if id == "" {
		t.Fatalf("no incident on the firing alerts: %+v", firing)
	}
	out, _, _ := run(t, "-c", cfgPath, "alerts", "--all-hosts")
	if !strings.Contains(out, "INCIDENT") || !strings.Contains(out, id) {
		t.Errorf("zwatch alerts does not show the incident %s:\n%s", id, out)
	}

	out, errOut, code := run(t, "-c", cfgPath, "ack", id, "--comment", "new disk ordered")
	if code != exitOK || !strings.Contains(out, "Incident "+id+" on nas1 acknowledged by") {
		t.Fatalf("ack exits %d: %q %q", code, out, errOut)
	}
	env, d := lastAction(t, ctx, b, "nas1")
	if d.Incident != id || d.Action != facts.ActionAck || d.Source != "cli" || d.By == "" || d.Comment != "new disk ordered" {
		t.Fatalf("fact %+v", d)
	}
	// The engine that reads the fact: acknowledged, no repeat.
	cfg := config.DefaultRules()
	e := rules.NewEngine(cfg, nil)
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Load(ctx, kv); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := e.Observe(env, now); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	for _, a := range e.Alerts("nas1") {
		if a.Incident == id && a.State == alert.Firing {
			if a.Ack == nil || a.Ack.Comment != "new disk ordered" {
				t.Errorf("%s not acknowledged: %+v", a.Name, a.Ack)
			}
			acked[a.Fingerprint] = true
		}
	}
	// Two days: no repeat of what was acknowledged (alerts that start to
	// fire later, ScrubNever after its hold, page as new ones).
	for at := now; at.Before(now.Add(49 * time.Hour)); at = at.Add(10 * time.Minute) {
		for _, n := range e.Tick(at) {
			for _, a := range n.Alerts {
				if acked[a.Fingerprint] && a.State == alert.Firing {
					t.Fatalf("%s repeated after the acknowledgement", a.Name)
				}
			}
		}
	}

	if out, errOut, code := run(t, "-c", cfgPath, "unack", id); code != exitOK || !strings.Contains(out, "no longer acknowledged") {
		t.Fatalf("unack exits %d: %q %q", code, out, errOut)
	}
	if _, d := lastAction(t, ctx, b, "nas1"); d.Action != facts.ActionUnack {
		t.Errorf("unack fact %+v", d)
	}

	out, errOut, code = run(t, "-c", cfgPath, "snooze", id, "24h")
	if code != exitOK || !strings.Contains(out, "snoozed until") {
		t.Fatalf("snooze exits %d: %q %q", code, out, errOut)
	}
	if _, d := lastAction(t, ctx, b, "nas1"); d.Action != facts.ActionSnooze || d.Silence == "" || d.Until == nil {
		t.Errorf("snooze fact %+v", d)
	}
	l := listJSON(t, "-c", cfgPath)
	if len(l.Silences) != 1 || !strings.Contains(l.Silences[0].Matchers.String(), `incident="`+id+`"`) ||
		!strings.HasPrefix(l.Silences[0].Comment, "snoozed by ") || len(l.Silences[0].Matching) == 0 {
		t.Fatalf("the snooze's silence: %+v", l)
	}
	for _, m := range l.Silences[0].Matching {
		if !m.Silenced {
			t.Errorf("%s %s not muted by the snooze", m.Severity, m.Name)
		}
	}
}

// Bad answers: a text that is no incident ID, an incident that does not
// fire, a duration that is none. Each says what to do.
func TestIncidentCommandsRefuseBadInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	state := t.TempDir()
	cfgPath := writeConfig(t, fmt.Sprintf("host: nas1\nstate_dir: %s\nnotify:\n  console: false\n", state))
	b := openDaemonBus(t, ctx, cfgPath)
	defer b.Close()
	fireOffline(t, ctx, b)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ack", "vault"}, exitUsage, "is not an incident ID"},
		{[]string{"ack", "0badcafe"}, exitNoData, "no incident 0badcafe fires now"},
		{[]string{"snooze", "0badcafe", "forever"}, exitUsage, "want a duration"},
		{[]string{"snooze", "0badcafe"}, exitUsage, ""},
	} {
		_, errOut, code := run(t, append([]string{"-c", cfgPath}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q, want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
}
