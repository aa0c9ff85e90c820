package zfs

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Headline forms of the `scan:` section (and of Solaris' `scrub:`), as
// print_scan_status() and its predecessors print them.
var (
	reScanFinishedScrub = regexp.MustCompile(`^scrub repaired (\S+) in (.+?) with (\d+) errors on (.+)$`)
	reScanFinishedResil = regexp.MustCompile(`^resilvered (\S+) in (.+?) with (\d+) errors on (.+)$`)
	reScanCanceled      = regexp.MustCompile(`^(scrub|resilver) canceled on (.+)$`)
	reScanInProgress    = regexp.MustCompile(`^(scrub|resilver)(?: \([^)]*\))? in progress since (.+)$`)
	reScanPaused        = regexp.MustCompile(`^(scrub|resilver) paused since (.+)$`)
	reScanOldDone       = regexp.MustCompile(`^(scrub|resilver) completed after (\S+) with (\d+) errors on (.+)$`)
	reScanOldStopped    = regexp.MustCompile(`^(scrub|resilver) stopped after (\S+) with (\d+) errors on (.+)$`)
	reScanOldProgress   = regexp.MustCompile(`^(scrub|resilver) in progress for (\S+), ([\d.]+)% done, (\S+) to go`)
	reErrScrubDone      = regexp.MustCompile(`^scrubbed (\d+) error blocks in (.+?) on (.+)$`)
	reErrScrubCanceled  = regexp.MustCompile(`^error scrub canceled on (.+)$`)
	reErrScrubProgress  = regexp.MustCompile(`^error scrub in progress since (.+)$`)
	reErrScrubPaused    = regexp.MustCompile(`^error scrub paused since (.+)$`)
)

// Comma-separated progress fragments of the lines that follow the headline.
var (
	reProgSlashScanned = regexp.MustCompile(`^(\S+) / (\S+) scanned(?: at (\S+)/s)?$`)
	reProgSlashIssued  = regexp.MustCompile(`^(\S+) / (\S+) issued(?: at (\S+)/s)?$`)
	reProgScanned      = regexp.MustCompile(`^(\S+) scanned(?: at (\S+)/s)?$`)
	reProgIssued       = regexp.MustCompile(`^(\S+) issued(?: at)? (\S+)/s$`)
	reProgTotal        = regexp.MustCompile(`^(\S+) total$`)
	reProgScannedOutOf = regexp.MustCompile(`^(\S+) scanned out of (\S+)(?: at (\S+)/s)?$`)
	reProgRepaired     = regexp.MustCompile(`^(\S+) (?:repaired|resilvered)$`)
	reProgPercent      = regexp.MustCompile(`^([\d.]+)% done$`)
	reProgToGo         = regexp.MustCompile(`^(.+) to go$`)
	reProgStarted      = regexp.MustCompile(`^(?:scrub|resilver|error scrub) started on (.+)$`)
	reProgErrBlocks    = regexp.MustCompile(`^(\d+) error blocks examined$`)
)

// parseScanText reads the lines of a `scan:` section (first line is the
// text after the label). Unknown wording leaves the scan as "none" with the
// text kept, so a new OpenZFS phrase never fails the pool.
func parseScanText(lines []string, loc *time.Location) Scan {
	s := Scan{Function: ScanNone, State: ScanStateNone}
	var trimmed []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			trimmed = append(trimmed, t)
		}
	}
	if len(trimmed) == 0 {
		return s
	}
	s.Text = strings.Join(trimmed, "\n")
	sp := &scanParser{s: &s, loc: loc}
	sp.headline(trimmed[0])
	for _, l := range trimmed[1:] {
		sp.progressLine(l)
	}
	return s
}

type scanParser struct {
	s   *Scan
	loc *time.Location
}

// headline interprets the first line of the section.
func (p *scanParser) headline(h string) {
	s := p.s
	if m := reScanFinishedScrub.FindStringSubmatch(h); m != nil {
		p.finished(ScanScrub, m[1], m[2], m[3], m[4])
		return
	}
	if m := reScanFinishedResil.FindStringSubmatch(h); m != nil {
		p.finished(ScanResilver, m[1], m[2], m[3], m[4])
		return
	}
	if m := reScanOldDone.FindStringSubmatch(h); m != nil {
		p.finished(m[1], "", m[2], m[3], m[4])
		return
	}
	if m := reScanOldStopped.FindStringSubmatch(h); m != nil {
		s.Function, s.State = m[1], ScanStateCanceled
		s.Errors = parseUintOr0(m[3])
		s.End = p.date(m[4])
		return
	}
	if m := reScanCanceled.FindStringSubmatch(h); m != nil {
		s.Function, s.State = m[1], ScanStateCanceled
		s.End = p.date(m[2])
		return
	}
	if m := reScanInProgress.FindStringSubmatch(h); m != nil {
		s.Function, s.State = m[1], ScanStateScanning
		s.Start = p.date(m[2])
		return
	}
	if m := reScanPaused.FindStringSubmatch(h); m != nil {
		s.Function, s.State = m[1], ScanStatePaused
		s.PausedSince = p.date(m[2])
		return
	}
	if m := reScanOldProgress.FindStringSubmatch(h); m != nil {
		s.Function, s.State = m[1], ScanStateScanning
		s.PercentDone = parseFloatOr0(m[3])
		if d, ok := parseDurationText(m[4]); ok {
			s.ETASeconds = int64(d / time.Second)
		}
		return
	}
	p.errorScrubHeadline(h)
}

// errorScrubHeadline handles the error-scrub forms (OpenZFS 2.2+).
func (p *scanParser) errorScrubHeadline(h string) {
	s := p.s
	switch {
	case reErrScrubDone.MatchString(h):
		m := reErrScrubDone.FindStringSubmatch(h)
		s.Function, s.State = ScanErrorScrub, ScanStateFinished
		s.ExaminedBytes = parseUintOr0(m[1]) // error blocks, not bytes
		s.End = p.date(m[3])
		s.PercentDone = 100
	case reErrScrubCanceled.MatchString(h):
		s.Function, s.State = ScanErrorScrub, ScanStateCanceled
		s.End = p.date(reErrScrubCanceled.FindStringSubmatch(h)[1])
	case reErrScrubProgress.MatchString(h):
		s.Function, s.State = ScanErrorScrub, ScanStateScanning
		s.Start = p.date(reErrScrubProgress.FindStringSubmatch(h)[1])
	case reErrScrubPaused.MatchString(h):
		s.Function, s.State = ScanErrorScrub, ScanStatePaused
		s.PausedSince = p.date(reErrScrubPaused.FindStringSubmatch(h)[1])
	}
}

// finished fills a completed scan. zpool prints only the end and the
// elapsed time; Start is derived from them (it is later than the real start
// by any time the scrub spent paused).
func (p *scanParser) finished(fn, repaired, elapsed, errs, date string) {
	s := p.s
	s.Function, s.State = fn, ScanStateFinished
	if repaired != "" {
		s.RepairedBytes = p.bytes(repaired)
	}
	s.Errors = parseUintOr0(errs)
	s.End = p.date(date)
	s.PercentDone = 100
	if d, ok := parseDurationText(elapsed); ok && s.End != nil {
		s.Start = timePtr(s.End.Add(-d))
	}
}

// progressLine reads one continuation line, fragment by fragment.
func (p *scanParser) progressLine(l string) {
	for _, part := range strings.Split(l, ", ") {
		p.fragment(strings.TrimSpace(part))
	}
}

func (p *scanParser) fragment(f string) {
	s := p.s
	if m := reProgSlashScanned.FindStringSubmatch(f); m != nil {
		s.ExaminedBytes = p.bytes(m[1])
		s.TotalBytes = p.bytes(m[2])
		if m[3] != "" && s.RateBytes == 0 {
			s.RateBytes = p.bytes(m[3])
		}
		return
	}
	if m := reProgSlashIssued.FindStringSubmatch(f); m != nil {
		s.IssuedBytes = p.bytes(m[1])
		if s.TotalBytes == 0 {
			s.TotalBytes = p.bytes(m[2])
		}
		if m[3] != "" {
			s.RateBytes = p.bytes(m[3]) // the issue rate drives the estimate
		}
		return
	}
	if m := reProgScannedOutOf.FindStringSubmatch(f); m != nil {
		s.ExaminedBytes = p.bytes(m[1])
		s.TotalBytes = p.bytes(m[2])
		if m[3] != "" {
			s.RateBytes = p.bytes(m[3])
		}
		return
	}
	if m := reProgScanned.FindStringSubmatch(f); m != nil {
		s.ExaminedBytes = p.bytes(m[1])
		if m[2] != "" && s.RateBytes == 0 {
			s.RateBytes = p.bytes(m[2])
		}
		return
	}
	if m := reProgIssued.FindStringSubmatch(f); m != nil {
		s.IssuedBytes = p.bytes(m[1])
		s.RateBytes = p.bytes(m[2])
		return
	}
	p.tailFragment(f)
}

// tailFragment handles the totals, repaired bytes, percentage and estimate.
func (p *scanParser) tailFragment(f string) {
	s := p.s
	switch {
	case reProgTotal.MatchString(f):
		s.TotalBytes = p.bytes(reProgTotal.FindStringSubmatch(f)[1])
	case reProgRepaired.MatchString(f):
		s.RepairedBytes = p.bytes(reProgRepaired.FindStringSubmatch(f)[1])
	case reProgPercent.MatchString(f):
		s.PercentDone = parseFloatOr0(reProgPercent.FindStringSubmatch(f)[1])
	case reProgStarted.MatchString(f):
		s.Start = p.date(reProgStarted.FindStringSubmatch(f)[1])
	case reProgErrBlocks.MatchString(f):
		s.ExaminedBytes = parseUintOr0(reProgErrBlocks.FindStringSubmatch(f)[1])
	case reProgToGo.MatchString(f):
		if d, ok := parseDurationText(reProgToGo.FindStringSubmatch(f)[1]); ok {
			s.ETASeconds = int64(d / time.Second)
		}
	}
}

// bytes parses a byte count; abbreviated values mark the scan approximate.
func (p *scanParser) bytes(v string) uint64 {
	n, exact, err := parseNiceNum(v)
	if err != nil {
		return 0
	}
	if !exact {
		p.s.Approximate = true
	}
	return n
}

func (p *scanParser) date(v string) *time.Time {
	t, ok := parseZpoolDate(v, p.loc)
	if !ok {
		return nil
	}
	return &t
}

// parseUintOr0 reads a count; one too big for 64 bits is the largest
// count, never 0 (a flood of errors must not read as none).
func parseUintOr0(s string) uint64 {
	n, err := strconv.ParseUint(s, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return math.MaxUint64
	}
	if err != nil {
		return 0
	}
	return n
}

func parseFloatOr0(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return f
}
