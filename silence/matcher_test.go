package silence

import (
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

func labels(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(n string) string { return m[n] }
}

// The grammar is Alertmanager's (pkg/labels/parse.go): the four operators,
// quoted or bare values with OpenMetrics escapes, several matchers per
// argument in optional braces, regular expressions anchored at both ends.
func TestParseMatchers(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"alertname=VdevState"}, `alertname="VdevState"`},
		{[]string{"VdevState", "pool=tank"}, `alertname="VdevState", pool="tank"`},
		{[]string{`{pool="tank", vdev=~"sd[a-c]"}`}, `pool="tank", vdev=~"sd[a-c]"`},
		{[]string{` host != nas2 `, `alertname!~"Scrub.*"`, "pool=tank"}, `host!="nas2", alertname!~"Scrub.*", pool="tank"`},
		{[]string{`comment="a, b \"c\" \\ \d"`}, `comment="a, b \"c\" \\ \\d"`},
		{[]string{`pool=tank,`}, `pool="tank"`},
	} {
		ms, err := ParseMatchers(c.args)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if got := ms.String(); got != c.want {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
	}
}

func TestBadMatchersSayWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no matchers"},
		{[]string{"pool"}, ""}, // a bare first word is an alert name: fine
		{[]string{"pool=tank", "vdev"}, `matcher "vdev": a matcher is NAME=VALUE`},
		{[]string{"pool==tank"}, `mistyped operator`},
		{[]string{"1pool=tank"}, `matcher "1pool=tank": a matcher is`},
		{[]string{"pool=~(tank"}, `"(tank" is not an RE2 regular expression`},
		{[]string{`pool="tank`}, "opening quote is not closed"},
		{[]string{`pool=ta"nk`}, "holds a double quote"},
		{[]string{`pool="ta"nk"`}, "text after the closing quote"},
		{[]string{"pool=~.*"}, "would silence everything"},
		{[]string{"pool!=tank"}, "would silence everything"},
		{[]string{"pool=", "vdev=~"}, "would silence everything"},
		{[]string{"pool=" + strings.Repeat("x", 2000)}, "longer than 1024 bytes"},
	} {
		_, err := ParseMatchers(c.args)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v, want one saying %q", c.args, err, c.want)
		}
	}
}

func TestMatchersMatch(t *testing.T) {
	ms, err := ParseMatchers([]string{`alertname=~"Vdev.*"`, "pool=tank", "vdev!~sd[ab]", "severity!=critical", "dataset="})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		l    func(string) string
		want bool
	}{
		{labels("alertname", "VdevState", "pool", "tank", "vdev", "sdc", "severity", "warning"), true},
		{labels("alertname", "VdevErrors", "pool", "tank", "vdev", "sdc"), true},
		{labels("alertname", "xVdevState", "pool", "tank", "vdev", "sdc"), false}, // anchored
		{labels("alertname", "VdevState", "pool", "tank", "vdev", "sda"), false},
		{labels("alertname", "VdevState", "pool", "tank2", "vdev", "sdc"), false},
		{labels("alertname", "VdevState", "pool", "tank", "vdev", "sdc", "severity", "critical"), false},
		{labels("alertname", "VdevState", "pool", "tank", "vdev", "sdc", "dataset", "tank/x"), false},
	} {
		if got := ms.Matches(c.l); got != c.want {
			t.Errorf("%v on case %d = %v", ms, i, got)
		}
	}
}

func TestSilenceStates(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ms, _ := ParseMatchers([]string{"pool=tank"})
	id, err := NewID()
	if err != nil || !validID(id) {
		t.Fatalf("NewID %q %v", id, err)
	}
	s := Silence{ID: id, Matchers: ms, StartsAt: t0, EndsAt: t0.Add(time.Hour), MaxSeverity: alert.Warning, CreatedBy: "bob"}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for at, want := range map[time.Duration]State{-time.Second: Pending, 0: Active, 59 * time.Minute: Active, time.Hour: Expired} {
		if got := s.State(t0.Add(at)); got != want {
			t.Errorf("at %v: %s, want %s", at, got, want)
		}
	}
	tank := labels("pool", "tank")
	switch {
	case !s.Mutes(tank, alert.Warning, t0), !s.Mutes(tank, alert.Info, t0):
		t.Error("does not mute up to warning")
	case s.Mutes(tank, alert.Critical, t0):
		t.Error("mutes a critical above its max severity")
	case s.Mutes(tank, alert.Warning, t0.Add(-time.Second)), s.Mutes(tank, alert.Warning, t0.Add(time.Hour)):
		t.Error("mutes while pending or expired")
	}
	if !s.NoticeDue(t0.Add(time.Hour)) || s.NoticeDue(t0) || s.Stale(t0.Add(time.Hour)) {
		t.Error("notice due only once it ended")
	}
	bad := s
	bad.ID = "../x"
	if err := bad.Validate(); err == nil {
		t.Error("a silence ID that is no UUID was accepted")
	}
	bad = s
	bad.EndsAt = t0.Add(-time.Second)
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "ends") {
		t.Errorf("end before start: %v", err)
	}
	bad = s
	bad.MaxSeverity = "loud"
	if err := bad.Validate(); err == nil {
		t.Error("an unknown max severity was accepted")
	}
}
