package zfs

import (
	"bytes"
	"regexp"
	"strings"
)

// Unpaste undoes what pasting a tool's output into a log, a chat or a
// markdown page does to it, so that `zwatch status --input` and `rules
// eval` read it as if saved straight from the tool:
//
//   - a byte-order mark, CRLF line endings and no-break spaces (web pages
//     and chat clients indent with U+00A0) are made plain;
//   - of markdown with ``` or ~~~ fences, only the fenced lines are kept;
//   - a prefix before every line is removed: a syslog or journalctl header
//     ("Dec  1 12:00:01 host zed[123]: "), an ISO-8601 timestamp (docker,
//     kubectl, rsyslog), a "[12:00:01]" chat stamp, then whatever literal
//     text all lines still share ("<alice> ", "> ", "svc-1  | "); rsyslog's
//     "#011" escape is turned back into the tab it was;
//   - a `zpool status` fragment that starts at `config:` or at the
//     "NAME STATE READ WRITE CKSUM" header gets the "pool:" line it lacks,
//     named after the first row of its table (see PastedPoolNote).
//
// Output saved straight from zpool, smartctl or zpool list comes back
// unchanged: the prefix rules need every line to carry one, and real
// `zpool status` output always has lines starting in column 0.
func Unpaste(data []byte) []byte {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !needsUnpaste(data) || bytes.Count(data, []byte("\n")) > maxPasteLines {
		return data
	}
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\u00a0", " ")
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	// Fences first (prose around them has no prefix), then again for
	// fences that carried the prefix themselves.
	lines = keepFenced(lines)
	// A prefix can wrap another (docker compose around a timestamped log).
	for range 4 {
		if !stripLinePrefixes(lines) {
			break
		}
	}
	lines = keepFenced(lines)
	lines = dropPrompts(lines)
	if !looksJSON(lines) {
		lines = completeFragment(lines)
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// maxPasteLines bounds what Unpaste looks at: a line costs it a string
// header (16 bytes) whatever its length, so a 64 MiB file of newlines would
// cost a GiB. A pasted `zpool status -v` is a few thousand lines; longer
// input is left as it is.
const maxPasteLines = 1 << 20

// PastedPoolNote is the note a pool read from a pasted fragment carries:
// its name was taken from the config table, as the "pool:" line was missing.
const PastedPoolNote = "note: " + pastedPoolNote

const pastedPoolNote = "pasted fragment without a pool: line; the name is the first row of the config table"

// needsUnpaste is a cheap test that keeps tool output (the common case, and
// every poll of the live collector if it ever came this way) from being
// copied: a prefix needs every line to start with something other than the
// column-0 or indented words zpool prints, so one line is enough to say no.
func needsUnpaste(data []byte) bool {
	if bytes.Contains(data, []byte("\r")) || bytes.Contains(data, []byte("\u00a0")) ||
		bytes.Contains(data, []byte("```")) || bytes.Contains(data, []byte("~~~")) {
		return true
	}
	// A fragment (no "pool:" before its table) or a prefixed line.
	first := bytes.TrimLeft(data, " \t\n")
	return !bytes.HasPrefix(first, []byte("pool:")) && !bytes.HasPrefix(first, []byte("{"))
}

func looksJSON(lines []string) bool {
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			return t[0] == '{' || t[0] == '['
		}
	}
	return false
}

// Prefixes that vary from line to line, tried in order; each must match
// every non-blank line for it to be removed. They end at the one blank that
// separates them from the message, or at the end of a line (a blank line of
// the output, logged with its header only).
var linePrefixes = []*regexp.Regexp{
	// syslog (RFC 3164, optionally with <PRI>) and journalctl -o short /
	// short-precise: "Dec  1 12:00:01 host zed[123]: ".
	regexp.MustCompile(`^(?:<\d{1,3}>)?[A-Z][a-z]{2} [ 0-9]\d \d{2}:\d{2}:\d{2}(?:\.\d+)? \S+ [^\s:]+(?:\[\d+\])?:(?: |$)`),
	// rsyslog RFC 3339 and journalctl -o short-iso[-precise]:
	// "2024-12-01T12:00:01.123+01:00 host zed[123]: ".
	regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})? \S+ [^\s:]+(?:\[\d+\])?:(?: |$)`),
	// A bare ISO-8601 timestamp: docker logs -t, kubectl logs --timestamps,
	// `ts '%FT%T'`, "2024-12-01 12:00:01,123 ".
	regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?(?: |$)`),
	// A bracketed stamp holding a time, from chat and IRC logs and `ts`:
	// "[12:00:01] ", "[12:00 PM] ", "[2024-12-01 12:00:01] ".
	regexp.MustCompile(`^\[[^\]\n]{0,30}\d{1,2}:\d{2}[^\]\n]{0,30}\](?: |$)`),
}

// stripLinePrefixes removes a varying prefix (linePrefixes), then a literal
// one, when every non-blank line that is not a fence carries it; it reports
// whether it removed any.
func stripLinePrefixes(lines []string) bool {
	stripped := false
	for _, re := range linePrefixes {
		if everyLine(lines, re.MatchString) {
			stripped = true
			for i, l := range lines {
				lines[i] = strings.TrimRight(l[len(re.FindString(l)):], " \t")
			}
			if re == linePrefixes[0] || re == linePrefixes[1] {
				// rsyslog escapes control characters: a tab arrives as "#011".
				for i, l := range lines {
					lines[i] = strings.ReplaceAll(l, "#011", "\t")
				}
			}
			break
		}
	}
	if p := commonPrefix(lines); p != "" {
		stripped = true
		for i, l := range lines {
			if isFence(l) && !strings.HasPrefix(l, p) {
				continue
			}
			if len(l) <= len(p) {
				lines[i] = ""
			} else {
				lines[i] = l[len(p):]
			}
		}
	}
	return stripped
}

// everyLine reports whether match holds for every non-blank line but fences,
// and for at least one line.
func everyLine(lines []string, match func(string) bool) bool {
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" || isFence(l) {
			continue
		}
		if !match(l) {
			return false
		}
		n++
	}
	return n > 0
}

// commonPrefix is the literal text every non-blank line (fences aside)
// starts with, cut back to end at a blank so that it never takes part of a
// word. On fewer than three lines only a known shape counts (reKnownPrefix),
// so that a one-line message ("all pools are healthy") is never cut. A line
// that holds only the prefix (a blank line of the output, logged) counts as
// having it.
func commonPrefix(lines []string) string {
	var p string
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" || isFence(l) {
			continue
		}
		l += " " // "zed[1]:" is the prefix of "zed[1]: config:" plus its blank
		if n == 0 {
			p = l
		} else {
			p = p[:sharedLen(p, l)]
		}
		n++
		if p == "" {
			return ""
		}
	}
	// A tab after text ends a column of tab-separated data (zfs get -H's
	// names), which is not a prefix: the prefix ends before it.
	if k := len(p) - len(strings.TrimLeft(p, " \t")); k < len(p) {
		if j := strings.IndexByte(p[k:], '\t'); j >= 0 {
			p = p[:k+j]
		}
	}
	i := strings.LastIndexAny(p, " \t")
	if i < 0 {
		return ""
	}
	p = p[:i+1]
	if n < 3 && strings.TrimSpace(p) != "" {
		return reKnownPrefix.FindString(p)
	}
	return p
}

// reKnownPrefix are literal prefixes recognised even on one or two lines:
// an IRC nick, a markdown quote, a docker compose service.
var reKnownPrefix = regexp.MustCompile(`^(?:<[^<>\s]{1,32}> |> |[\w.-]{1,64} +\| )`)

func sharedLen(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func isFence(l string) bool {
	t := strings.TrimLeft(l, " \t")
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// keepFenced keeps the lines inside markdown fences, dropping the prose
// around them (it would otherwise run on as part of the last section). A
// paste that has only a closing fence, or fences around nothing, just loses
// the fence lines.
func keepFenced(lines []string) []string {
	var inside, rest []string
	in, fenced := false, false
	for _, l := range lines {
		if isFence(l) {
			in, fenced = !in, true
			continue
		}
		rest = append(rest, l)
		if in {
			inside = append(inside, l)
		}
	}
	if !fenced {
		return lines
	}
	for _, l := range inside {
		if strings.TrimSpace(l) != "" {
			return inside
		}
	}
	return rest
}

// completeFragment gives a fragment that starts at `config:` or at the
// NAME/STATE header the "pool:" (and "config:") lines it lacks, naming the
// pool after the first row of the table, its root vdev.
func completeFragment(lines []string) []string {
	cfg, hdr := -1, -1
	for i, l := range lines {
		label, _, ok := sectionHeader(l)
		if ok && label == "pool" {
			return lines // the fragment's table, if any, belongs to this pool
		}
		if ok && label == "config" && cfg < 0 {
			cfg = i
		}
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "NAME" && f[1] == "STATE" {
			hdr = i
			break
		}
	}
	if hdr < 0 {
		return lines
	}
	name := ""
	for _, l := range lines[hdr+1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if v, ok := parseVdevLine(strings.TrimLeft(l, " \t"), configLayout{counters: 3}); ok {
			name = v.Name
		}
		break
	}
	if name == "" {
		return lines
	}
	head := []string{"  pool: " + name, "  note: " + pastedPoolNote}
	at := cfg
	if at < 0 {
		head = append(head, "config:", "")
		at = hdr
	}
	out := make([]string, 0, len(lines)+len(head))
	out = append(out, lines[:at]...)
	out = append(out, head...)
	return append(out, lines[at:]...)
}

// rePrompt is a shell prompt line, with or without its command: "$",
// "# zpool status", "root@nas:~# zpool status tank", "[nico@box ~]$ ".
// zpool prints nothing but section labels in column 0, so such a line is
// the paste's, and left in it would run on as part of the last section (a
// "file" with a data error).
var rePrompt = regexp.MustCompile(`^(?:\[[^\]]+\] ?|\S+@[^\s$#%]+ ?)?[$#%](?: .*)?$`)

func dropPrompts(lines []string) []string {
	out := lines[:0]
	for _, l := range lines {
		if !rePrompt.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}
