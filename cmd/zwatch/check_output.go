package main

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The output of `zwatch check` follows the Monitoring Plugins Development
// Guidelines (https://www.monitoring-plugins.org/doc/guidelines.html), which
// Nagios, Icinga, Naemon, Zabbix (through a UserParameter) and Checkmk (MRPE)
// read:
//
//   - the exit status is the state: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN
//     (bad arguments, or a failure that kept the plugin from checking at all,
//     such as a command that did not answer in time);
//   - the first line is "SERVICE STATUS - text | perfdata"; further lines
//     are the long output, which Nagios 3 and later keep beside it
//     ($LONGSERVICEOUTPUT$). Everything after a "|" is performance data,
//     so the text never contains one;
//   - performance data is a space-separated list of
//     'label'=value[UOM];[warn];[crit];[min];[max]: quotes around the label
//     are required when it holds a space, = or ', and a ' in it is written
//     twice; value, min and max are in [-0-9.] (never an exponent); UOM is
//     none (a number of things), s, %, B or c (a continuous counter);
//     warn and crit are ranges, where a bare N means "alert when the value
//     is above N"; trailing empty fields are dropped.

// pluginState is a plugin's exit status.
type pluginState int

const (
	stateOK       pluginState = 0
	stateWarning  pluginState = 1
	stateCritical pluginState = 2
	stateUnknown  pluginState = 3
)

func (s pluginState) String() string {
	switch s {
	case stateOK:
		return "OK"
	case stateWarning:
		return "WARNING"
	case stateCritical:
		return "CRITICAL"
	}
	return "UNKNOWN"
}

// checkService is the SERVICE of the status line.
const checkService = "ZWATCH"

// pluginResult is one run of the check.
type pluginResult struct {
	State pluginState
	// Text is what the status line says after "ZWATCH STATE - ".
	Text string
	// Long are the lines under the status line.
	Long []string
	Perf []perfDatum
}

// unknown is the result of a check that could not check.
func unknown(format string, args ...any) pluginResult {
	return pluginResult{State: stateUnknown, Text: fmt.Sprintf(format, args...)}
}

// write prints the result in the guidelines' form.
func (r pluginResult) write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s - %s", checkService, r.State, outputText(r.Text))
	if len(r.Perf) > 0 {
		b.WriteString(" |")
		for _, p := range r.Perf {
			b.WriteByte(' ')
			b.WriteString(p.String())
		}
	}
	b.WriteByte('\n')
	for _, l := range r.Long {
		b.WriteString(outputText(l))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// outputText makes s one line of plugin output: a "|" would start the
// performance data, so it becomes "¦"; line breaks and tabs become spaces,
// and bytes that are not UTF-8 (a garbage pool name) "�".
func outputText(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "�"), "|", "¦")
	return strings.Join(strings.Fields(s), " ")
}

// perfDatum is one 'label'=value[UOM];[warn];[crit];[min];[max].
type perfDatum struct {
	Label string
	Value float64
	// UOM is "", "%", "s", "B" or "c".
	UOM                  string
	Warn, Crit, Min, Max *float64
}

func (p perfDatum) String() string {
	fields := []string{quoteLabel(p.Label) + "=" + perfNumber(p.Value) + p.UOM, optNumber(p.Warn), optNumber(p.Crit), optNumber(p.Min), optNumber(p.Max)}
	for len(fields) > 1 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1] // trailing unfilled semicolons can be dropped
	}
	return strings.Join(fields, ";")
}

// quoteLabel quotes a label as the guidelines require: when it holds a
// space, = or ', with a ' in it doubled.
func quoteLabel(l string) string {
	if !strings.ContainsAny(l, " ='") {
		return l
	}
	return "'" + strings.ReplaceAll(l, "'", "''") + "'"
}

// perfNumber writes v in [-0-9.]: no exponent, at most 3 decimals.
func perfNumber(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

func optNumber(v *float64) string {
	if v == nil {
		return ""
	}
	return perfNumber(*v)
}

// unsafeLabel is what a label part may not hold. Icinga 2 and the
// time-series writers behind it (Graphite, InfluxDB) choke on quotes, =
// and spaces even where the guidelines allow them quoted, so pool, vdev
// and disk names keep letters, digits and _ . : / @ + - only.
var unsafeLabel = regexp.MustCompile(`[^A-Za-z0-9_.:/@+-]`)

// perfLabel joins a thing's name and what is measured: vault_capacity.
func perfLabel(name, what string) string {
	return unsafeLabel.ReplaceAllString(name, "_") + "_" + what
}

func num(v float64) *float64 { return &v }
