package config

import (
	"strings"
	"testing"
	"time"
)

func parseEscalation(t *testing.T, console bool, steps string) (*Loaded, error) {
	t.Helper()
	text := "host: nas1\nnotify:\n  console: " + map[bool]string{true: "true", false: "false"}[console] + "\n  channels:\n" +
		"    - {name: me, type: pigeon, address: a}\n    - {name: partner, type: pigeon, address: b}\n    - {name: loud, type: drum, address: c}\n" +
		"  escalation:\n" + steps
	return Parse(strings.NewReader(text), notifyCatalog)
}

// A household of two: me gets the page, partner after 30 min without an
// acknowledgement, the loud channel after 2 h.
func TestEscalationSteps(t *testing.T) {
	l, err := parseEscalation(t, false, "    - {after: 30m, channels: [partner]}\n    - {after: 2h, channels: [loud]}\n")
	if err != nil {
		t.Fatal(err)
	}
	n := &l.Config.Notify
	if got := n.EscalationAfters(); len(got) != 2 || got[0] != 30*time.Minute || got[1] != 2*time.Hour {
		t.Errorf("afters %v", got)
	}
	for name, want := range map[string]int{"me": 0, "partner": 1, "loud": 2} {
		if got := n.EscalationStepOf(name); got != want {
			t.Errorf("%s: step %d, want %d", name, got, want)
		}
	}
}

func TestEscalationProblems(t *testing.T) {
	for _, c := range []struct {
		console     bool
		steps, want string
	}{
		{false, "    - {after: 30m, channels: [parnter]}\n", `notify.escalation[0].channels = "parnter": no channel of notify.channels has this name`},
		{false, "    - {after: 2h, channels: [partner]}\n    - {after: 30m, channels: [loud]}\n", "notify.escalation[1].after = \"30m\": must be later than the step before (2h)"},
		{false, "    - {after: 10s, channels: [partner]}\n", "must be at least 1m"},
		{false, "    - {after: 30m, channels: [partner]}\n    - {after: 1h, channels: [partner]}\n", "already in notify.escalation[0]"},
		{false, "    - {after: 30m, channels: []}\n", "empty: name at least one channel"},
		{false, "    - {after: 30m, channels: [me, partner, loud]}\n", "nothing gets the first page"},
		{false, "    - {after: 30m, channel: [partner]}\n", "notify.escalation[0].channel: unknown key"},
	} {
		_, err := parseEscalation(t, c.console, c.steps)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s  got  %v\n  want %q", c.steps, err, c.want)
		}
	}
	// With the console on, every channel may be an escalation channel.
	if _, err := parseEscalation(t, true, "    - {after: 30m, channels: [me, partner, loud]}\n"); err != nil {
		t.Errorf("console on: %v", err)
	}
}
