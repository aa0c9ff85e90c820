package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pluginOutput is a plugin's output read back by the grammar of the
// Monitoring Plugins Development Guidelines
// (https://www.monitoring-plugins.org/doc/guidelines.html), the way Nagios
// and Icinga split it: the status line up to the first "|", its
// performance data after it, then the long output, whose own "|" would
// start a second part of performance data.
type pluginOutput struct {
	Service, State, Text string
	Perf                 []perfValue
	Long                 []string
}

// perfValue is one 'label'=value[UOM];[warn];[crit];[min];[max], its
// fields as written.
type perfValue struct {
	Label, UOM           string
	Value                float64
	Warn, Crit, Min, Max string
}

var (
	statusLine = regexp.MustCompile(`^(\S+) (OK|WARNING|CRITICAL|UNKNOWN) - (\S.*)$`)
	// value, min and max are in the class [-0-9.]
	perfNum = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	// a range: [@][start:]end, start may be ~ (negative infinity), end may be
	// left out after the colon (positive infinity)
	perfRange  = regexp.MustCompile(`^@?((~|-?[0-9.]+)?:)?(-?[0-9.]+)?$`)
	perfValue1 = regexp.MustCompile(`^(-?[0-9.]+)([a-zA-Z%]*)$`)
)

// validUOM are the units the guidelines name.
func validUOM(u string) bool {
	switch u {
	case "", "s", "ms", "us", "%", "B", "KB", "MB", "GB", "TB", "c":
		return true
	}
	return false
}

func parsePluginOutput(out string) (pluginOutput, error) {
	var po pluginOutput
	if !strings.HasSuffix(out, "\n") {
		return po, fmt.Errorf("output does not end with a newline: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	text, perf, hasPerf := strings.Cut(lines[0], "|")
	if hasPerf {
		if !strings.HasSuffix(text, " ") {
			return po, fmt.Errorf("no space before the |: %q", lines[0])
		}
		text = strings.TrimSuffix(text, " ")
	}
	m := statusLine.FindStringSubmatch(text)
	if m == nil {
		return po, fmt.Errorf("status line %q is not SERVICE STATUS - text", text)
	}
	po.Service, po.State, po.Text = m[1], m[2], m[3]
	if hasPerf {
		var err error
		if po.Perf, err = parsePerf(perf); err != nil {
			return po, err
		}
	}
	for _, l := range lines[1:] {
		if strings.Contains(l, "|") {
			return po, fmt.Errorf("long output line %q holds a |, which starts performance data", l)
		}
		po.Long = append(po.Long, l)
	}
	return po, nil
}

// parsePerf reads a space-separated list of performance data.
func parsePerf(s string) ([]perfValue, error) {
	var out []perfValue
	s = strings.TrimLeft(s, " ")
	if s == "" {
		return nil, fmt.Errorf("a | with no performance data after it")
	}
	for s != "" {
		var label string
		if strings.HasPrefix(s, "'") {
			// Quoted: '' is a quote; the label ends at a lone quote.
			var b strings.Builder
			i := 1
			for {
				j := strings.IndexByte(s[i:], '\'')
				if j < 0 {
					return nil, fmt.Errorf("unterminated quoted label in %q", s)
				}
				b.WriteString(s[i : i+j])
				i += j + 1
				if i < len(s) && s[i] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				break
			}
			label, s = b.String(), s[i:]
			if !strings.HasPrefix(s, "=") {
				return nil, fmt.Errorf("no = after label %q", label)
			}
			s = s[1:]
		} else {
			eq := strings.IndexByte(s, '=')
			if eq <= 0 {
				return nil, fmt.Errorf("no label=value in %q", s)
			}
			label, s = s[:eq], s[eq+1:]
			if strings.ContainsAny(label, " '") {
				return nil, fmt.Errorf("label %q holds a space or quote and is not quoted", label)
			}
		}
		field, rest, _ := strings.Cut(s, " ")
		s = strings.TrimLeft(rest, " ")
		parts := strings.Split(field, ";")
		if len(parts) > 5 {
			return nil, fmt.Errorf("%s: more than value;warn;crit;min;max: %q", label, field)
		}
		for len(parts) < 5 {
			parts = append(parts, "")
		}
		vm := perfValue1.FindStringSubmatch(parts[0])
		if vm == nil || !perfNum.MatchString(vm[1]) {
			return nil, fmt.Errorf("%s: value %q is not a number in [-0-9.] with a unit", label, parts[0])
		}
		if !validUOM(vm[2]) {
			return nil, fmt.Errorf("%s: unit %q is not one of the guidelines'", label, vm[2])
		}
		v, err := strconv.ParseFloat(vm[1], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
		for i, r := range parts[1:3] {
			if !perfRange.MatchString(r) {
				return nil, fmt.Errorf("%s: threshold %d %q is not a range", label, i+1, r)
			}
		}
		for _, n := range parts[3:5] {
			if n != "" && !perfNum.MatchString(n) {
				return nil, fmt.Errorf("%s: min/max %q is not a number in [-0-9.]", label, n)
			}
		}
		out = append(out, perfValue{Label: label, Value: v, UOM: vm[2], Warn: parts[1], Crit: parts[2], Min: parts[3], Max: parts[4]})
	}
	return out, nil
}

// perfByLabel finds a measurement.
func (po pluginOutput) perf(label string) (perfValue, bool) {
	for _, p := range po.Perf {
		if p.Label == label {
			return p, true
		}
	}
	return perfValue{}, false
}

func TestPluginOutputFollowsTheGuidelines(t *testing.T) {
	r := pluginResult{State: stateCritical, Text: "pool a|b is\tFAULTED\nnow",
		Long: []string{"run `zfs list | head`"},
		Perf: []perfDatum{
			{Label: "tank_capacity", Value: 93.25, UOM: "%", Warn: num(80), Crit: num(90), Min: num(0), Max: num(100)},
			{Label: "it's a = b", Value: 1e21, UOM: "c"},
			{Label: "plain", Value: 0.0004},
			{Label: "gap", Value: 3, Crit: num(2)},
		}}
	var b bytes.Buffer
	if err := r.write(&b); err != nil {
		t.Fatal(err)
	}
	want := "ZWATCH CRITICAL - pool a¦b is FAULTED now | tank_capacity=93.25%;80;90;0;100 'it''s a = b'=1000000000000000000000c plain=0 gap=3;;2\n" +
		"run `zfs list ¦ head`\n"
	if b.String() != want {
		t.Fatalf("output\n%q\nwant\n%q", b.String(), want)
	}
	po, err := parsePluginOutput(b.String())
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := po.perf("it's a = b"); !ok || p.UOM != "c" {
		t.Errorf("the quoted label does not read back: %+v", po.Perf)
	}
	if p, _ := po.perf("gap"); p.Warn != "" || p.Crit != "2" || p.Min != "" {
		t.Errorf("empty fields between set ones: %+v", p)
	}
}

// The parser refuses what the guidelines do not allow, so the tests that
// use it would notice such output.
func TestPerfParserRefusesBadPerfdata(t *testing.T) {
	for _, bad := range []string{
		"a b=1",         // unquoted space
		"a=1e3",         // exponent
		"a=1;2;3;4;5;6", // too many fields
		"a=1x",          // unknown unit
		"a=1;abc",       // not a range
		"'a=1",          // unterminated quote
		"a=1;;;z",       // min not a number
		"=1",            // no label
	} {
		if _, err := parsePerf(bad); err == nil {
			t.Errorf("%q read as valid", bad)
		}
	}
	for _, good := range []string{"a=1", "'a b'=1.5s;10;20", "a=5;@10:20;~:30", "a=1%;80;90;0;100", "a=3c;5:;10"} {
		if _, err := parsePerf(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}

func TestPerfLabelKeepsSafeCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"vault":                    "vault_capacity",
		"my pool's=1":              "my_pool_s_1_capacity",
		"tank/ata-WDC_X-part1":     "tank/ata-WDC_X-part1_capacity",
		"dpool/draid1:2d:4c:1s-0":  "dpool/draid1:2d:4c:1s-0_capacity",
		"tank/disk|x;y\ttab\u00e9": "tank/disk_x_y_tab__capacity",
	} {
		if got := perfLabel(in, "capacity"); got != want {
			t.Errorf("perfLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
