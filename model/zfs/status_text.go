package zfs

import (
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"time"
)

// ErrNotStatus is returned when input does not look like `zpool status`.
var ErrNotStatus = errors.New("zfs: input is not zpool status output")

// ParseStatusText parses `zpool status [-v] [-p] [-P] [-s]` text as printed
// by ZoL 0.6+, OpenZFS 2.x (Linux, FreeBSD) and illumos/Solaris. Dates are
// read in the local time zone, as zpool prints them with ctime(3).
// "no pools available", "all pools are healthy" and empty output give zero
// pools; other text that holds no pool, or only "pool:" lines with neither
// a state nor a config table, is ErrNotStatus. Pasted text (log prefixes,
// markdown, a fragment) is read after Unpaste.
func ParseStatusText(r io.Reader) ([]*Pool, error) {
	return ParseStatusTextIn(r, time.Local)
}

// ParseStatusTextIn is ParseStatusText with dates read in loc, for output
// captured on a host in another time zone.
func ParseStatusTextIn(r io.Reader, loc *time.Location) ([]*Pool, error) {
	if loc == nil {
		loc = time.Local
	}
	lr := newLineReader(r)
	blocks, pre := splitPoolBlocks(lr)
	if err := lr.readErr(); err != nil {
		return nil, fmt.Errorf("zfs: reading zpool status: %w", err)
	}
	if len(blocks) == 0 {
		// `zpool status -x` can print nothing at all (seen with OpenZFS
		// 2.3.2 and an offlined disk), so empty output means no pools.
		if pre.noPools || pre.blank {
			return nil, nil
		}
		return nil, ErrNotStatus
	}
	pools := make([]*Pool, 0, len(blocks))
	described := false
	for _, b := range blocks {
		p := parsePoolBlock(b, loc)
		described = described || p.State != "" || p.Root != nil
		pools = append(pools, p)
	}
	if !described {
		// "pool: x" lines without a state or a config table anywhere: a log
		// or a message that mentions a pool, not a status.
		return nil, ErrNotStatus
	}
	return pools, nil
}

// noPoolsMessage recognises the lines that legitimately list no pool.
func noPoolsMessage(l string) bool {
	t := strings.TrimSpace(l)
	return t == "no pools available" || t == "all pools are healthy" ||
		strings.HasPrefix(t, "pool '") && strings.HasSuffix(t, "' is healthy")
}

// Bounds on what a pool block keeps, so that a huge input (a wrong file, up
// to the 64 MiB the commands read) costs memory in proportion to these, not
// to its length. Real sections are a few lines; a `zpool status -v` file
// list can be long, so errors lines beyond the bound are counted, not kept.
const (
	maxSectionLines = 1 << 14
	maxErrorFiles   = 1 << 16
)

// section is one labelled part of a pool's status: "label: first line" and
// the continuation lines after it.
type section struct {
	label string
	lines []string
	// dropped counts the lines past maxSectionLines (maxErrorFiles for
	// errors:), counted rather than kept.
	dropped int
}

// add keeps line l in s, or counts it once s is full.
func (s *section) add(l string) {
	limit := maxSectionLines
	if s.label == "errors" {
		limit = maxErrorFiles
	}
	if len(s.lines) >= limit {
		s.dropped++
		return
	}
	s.lines = append(s.lines, l)
}

// preamble is what matters of the lines before the first pool: whether
// they are blank or say that there is no pool. They are not kept.
type preamble struct {
	blank, noPools bool
	// noImport is a line zpool import prints when it finds nothing.
	noImport bool
}

// sectionHeader recognises "  label: text". zpool right-aligns labels in an
// 8-column field ("  pool:", "   see:", "checkpoint:"), so a header has
// fewer than 8 leading spaces and no tab, unlike continuation lines.
func sectionHeader(line string) (label, rest string, ok bool) {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i >= 8 || i >= len(line) {
		return "", "", false
	}
	j := i
	for j < len(line) && (line[j] >= 'a' && line[j] <= 'z' || line[j] == '_') {
		j++
	}
	if j == i || j-i > 16 || j >= len(line) || line[j] != ':' {
		return "", "", false
	}
	if j+1 < len(line) && line[j+1] != ' ' && line[j+1] != '\t' {
		return "", "", false
	}
	return line[i:j], strings.TrimSpace(line[j+1:]), true
}

// splitPoolBlocks cuts the output at each "pool:" header. Lines before the
// first pool (timestamps, "no pools available") are summed up in pre.
func splitPoolBlocks(lr *lineReader) (blocks [][]section, pre preamble) {
	var cur []section
	pre.blank = true
	for {
		l, more := lr.next()
		if !more {
			break
		}
		l = strings.TrimRight(l, " \t")
		label, rest, ok := sectionHeader(l)
		if ok && label == "pool" {
			if cur != nil {
				blocks = append(blocks, cur)
			}
			cur = []section{{label: "pool", lines: []string{rest}}}
			continue
		}
		if cur == nil {
			pre.blank = pre.blank && strings.TrimSpace(l) == ""
			pre.noPools = pre.noPools || noPoolsMessage(l)
			pre.noImport = pre.noImport || importFoundNothing(l)
			continue
		}
		if ok {
			if len(cur) >= maxSectionLines {
				cur[len(cur)-1].dropped++ // a flood of "x:" lines
				continue
			}
			cur = append(cur, section{label: label, lines: []string{rest}})
			continue
		}
		cur[len(cur)-1].add(l)
	}
	if cur != nil {
		blocks = append(blocks, cur)
	}
	return blocks, pre
}

var reMsgID = regexp.MustCompile(`[A-Z]+-\d{4}-[0-9A-Z]+`)

// parsePoolBlock fills a Pool from its sections.
func parsePoolBlock(secs []section, loc *time.Location) *Pool {
	p := &Pool{
		Scan:       Scan{Function: ScanNone, State: ScanStateNone},
		DataErrors: DataErrors{Files: []string{}},
	}
	var errScrub *Scan
	errorsKnown := false
	for _, s := range secs {
		first := ""
		if len(s.lines) > 0 {
			first = s.lines[0]
		}
		switch s.label {
		case "pool":
			p.Name = first
		case "state":
			p.State = first
		case "status":
			p.Status = collapseSpace(strings.Join(s.lines, " "))
		case "action":
			p.Action = collapseSpace(strings.Join(s.lines, " "))
		case "see":
			p.See = first
			p.MsgID = reMsgID.FindString(first)
		case "scan":
			sc := parseScanText(s.lines, loc)
			if p.Scan.Function != "" && p.Scan.Function != ScanNone {
				// dRAID prints a second "scan:" for its sequential rebuild
				// after the scrub's; zpool status -j reports the first.
				p.Notes = append(p.Notes, "scan: "+joinTrimmed(s.lines))
				break
			}
			p.Scan = sc
		case "scrub":
			// Solaris prints the scan as "scrub:"; OpenZFS 2.2+ uses it for
			// the error scrub, printed after "scan:".
			sc := parseScanText(s.lines, loc)
			errScrub = &sc
		case "remove":
			p.Remove = joinTrimmed(s.lines)
		case "checkpoint":
			p.Checkpoint = joinTrimmed(s.lines)
		case "config":
			parseConfig(p, s.lines)
		case "errors":
			errorsKnown = parseErrorsSection(p, s.lines, s.dropped) || errorsKnown
		default:
			p.Notes = append(p.Notes, s.label+": "+joinTrimmed(s.lines))
		}
	}
	mergeErrorScrub(p, errScrub)
	// No `errors:` line (a fragment, a truncated paste) or one that gives no
	// count ("List of errors unavailable: pool I/O is currently suspended")
	// says nothing about data errors: unknown, never "none".
	p.ErrorsUnknown = !errorsKnown
	if p.State == "" && len(p.Vdevs) == 0 && p.Name == "" {
		p.Notes = append(p.Notes, "empty pool block")
	}
	return p
}

// mergeErrorScrub decides which of "scan:" and "scrub:" becomes Pool.Scan:
// the error scrub wins while it runs or when no other scan is known.
func mergeErrorScrub(p *Pool, es *Scan) {
	if es == nil {
		return
	}
	running := es.State == ScanStateScanning || es.State == ScanStatePaused
	if p.Scan.Function == ScanNone || (running && es.Function == ScanErrorScrub) {
		if p.Scan.Text != "" {
			p.Notes = append(p.Notes, "scan: "+p.Scan.Text)
		}
		p.Scan = *es
		return
	}
	if es.Text != "" {
		p.Notes = append(p.Notes, "scrub: "+es.Text)
	}
}

func joinTrimmed(lines []string) string {
	var out []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

var reDataErrors = regexp.MustCompile(`^(\d+) data errors?, use '-v' for a list`)

// parseErrorsSection reads "errors:" and, with -v, the file list after it;
// it reports whether the section said how many errors there are.
func parseErrorsSection(p *Pool, lines []string, dropped int) bool {
	p.DataErrors.Files = []string{}
	if len(lines) == 0 {
		return false
	}
	head := strings.TrimSpace(lines[0])
	switch {
	case head == "No known data errors":
	case reDataErrors.MatchString(head):
		p.DataErrors.Count = int(min(parseUintOr0(reDataErrors.FindStringSubmatch(head)[1]), math.MaxInt32))
	case strings.HasPrefix(head, "Permanent errors have been detected"):
		for _, l := range lines[1:] {
			if t := strings.TrimSpace(l); t != "" {
				p.DataErrors.Files = append(p.DataErrors.Files, t)
			}
		}
		p.DataErrors.Count = len(p.DataErrors.Files) + dropped
		if dropped > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("errors: %d more files not listed here", dropped))
		}
	default:
		p.Notes = append(p.Notes, "errors: "+joinTrimmed(lines))
		return false
	}
	return true
}
