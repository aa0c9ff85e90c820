package zfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxLineBytes bounds one input line so that garbage without newlines cannot
// make a parser buffer the whole stream as a single line.
const maxLineBytes = 1 << 20

// lineReader yields lines without their end-of-line bytes (LF or CRLF).
// Lines longer than maxLineBytes are cut; the rest of such a line is dropped.
type lineReader struct {
	br  *bufio.Reader
	err error
	// buf is nextBytes' line, reused from line to line.
	buf []byte
}

// lineReaderSize is the read buffer for a stream (a pipe): lines longer
// than it are still read whole, in pieces.
const lineReaderSize = 64 << 10

// newLineReader reads r by lines. Collectors hand a parser the tool's
// captured output (a bytes.Reader): its buffer is then that output's size,
// not 64 KiB for a 1 KB `zpool list` several times a minute, which was the
// largest share of an idle daemon's garbage (docs/benchmarks.md).
func newLineReader(r io.Reader) *lineReader {
	size := lineReaderSize
	if sized, ok := r.(interface{ Len() int }); ok {
		size = min(max(sized.Len(), 16), lineReaderSize) // bufio's own floor is 16
	}
	return &lineReader{br: bufio.NewReaderSize(r, size)}
}

// next returns the next line and false at end of input or on a read error
// (kept in lr.err; io.EOF is not an error).
func (lr *lineReader) next() (string, bool) {
	if lr.err != nil {
		return "", false
	}
	var sb strings.Builder
	for {
		chunk, isPrefix, err := lr.br.ReadLine()
		if err != nil {
			if err != io.EOF {
				lr.err = err
			} else {
				lr.err = io.EOF
			}
			if sb.Len() > 0 {
				return sb.String(), true
			}
			return "", false
		}
		if sb.Len()+len(chunk) <= maxLineBytes {
			sb.Write(chunk)
		}
		if !isPrefix {
			return strings.TrimRight(sb.String(), "\r"), true
		}
	}
}

// nextBytes is next without an allocation per line: the line it returns
// is valid until the following call. For readers of many lines that keep
// little of each (a snapshot listing).
func (lr *lineReader) nextBytes() ([]byte, bool) {
	if lr.err != nil {
		return nil, false
	}
	lr.buf = lr.buf[:0]
	for {
		chunk, isPrefix, err := lr.br.ReadLine()
		if err != nil {
			lr.err = err
			return lr.buf, len(lr.buf) > 0
		}
		if len(lr.buf)+len(chunk) <= maxLineBytes {
			lr.buf = append(lr.buf, chunk...)
		}
		if !isPrefix {
			return bytes.TrimRight(lr.buf, "\r"), true
		}
	}
}

// readErr is the read error that stopped the reader, if any.
func (lr *lineReader) readErr() error {
	if lr.err == io.EOF {
		return nil
	}
	return lr.err
}

// parseNiceNum reads a number as zfs_nicenum/zfs_nicebytes print it: "0",
// "512", "0B", "1.2K", "37M", "1,50T" (some locales use a decimal comma).
// exact is false when a unit suffix means the value was rounded for display.
func parseNiceNum(s string) (v uint64, exact bool, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false, fmt.Errorf("empty number")
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err == nil {
		return n, true, nil
	}
	if errors.Is(err, strconv.ErrRange) {
		return math.MaxUint64, false, nil // saturated: huge, never 0
	}
	unit := s[len(s)-1]
	num := s[:len(s)-1]
	if unit == 'B' {
		// "512B" is exact; "1.2KB" does not occur, but tolerate it.
		if n, err := strconv.ParseUint(num, 10, 64); err == nil {
			return n, true, nil
		}
		if num == "" {
			return 0, false, fmt.Errorf("bad number %q", s)
		}
		unit = num[len(num)-1]
		num = num[:len(num)-1]
	}
	shift, ok := unitShift(unit)
	if !ok || num == "" {
		return 0, false, fmt.Errorf("bad number %q", s)
	}
	f, err := strconv.ParseFloat(strings.Replace(num, ",", ".", 1), 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false, fmt.Errorf("bad number %q", s)
	}
	f *= math.Exp2(float64(shift))
	if f >= math.MaxUint64 {
		return math.MaxUint64, false, nil
	}
	return uint64(f), false, nil
}

// unitShift maps a zfs_nicenum unit to its power of two.
func unitShift(u byte) (uint, bool) {
	switch u {
	case 'K', 'k':
		return 10, true
	case 'M':
		return 20, true
	case 'G':
		return 30, true
	case 'T':
		return 40, true
	case 'P':
		return 50, true
	case 'E':
		return 60, true
	}
	return 0, false
}

// parseDurationText reads the durations zpool prints for scans: "00:00:13",
// "1 days 14:05:30", "0h46m", "123h32m", "14h57m".
func parseDurationText(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	var days int64
	if i := strings.Index(s, " day"); i > 0 {
		d, err := strconv.ParseInt(strings.TrimSpace(s[:i]), 10, 64)
		if err != nil || d < 0 {
			return 0, false
		}
		days = d
		rest := s[i+len(" day"):]
		rest = strings.TrimPrefix(rest, "s")
		s = strings.TrimSpace(rest)
	}
	var secs int64
	switch {
	case strings.Count(s, ":") == 2:
		parts := strings.Split(s, ":")
		for _, p := range parts {
			n, err := strconv.ParseInt(p, 10, 64)
			if err != nil || n < 0 {
				return 0, false
			}
			secs = secs*60 + n
		}
	case strings.HasSuffix(s, "m") && strings.Contains(s, "h"):
		h, m, ok := strings.Cut(strings.TrimSuffix(s, "m"), "h")
		hn, err1 := strconv.ParseInt(h, 10, 64)
		mn, err2 := strconv.ParseInt(m, 10, 64)
		if !ok || err1 != nil || err2 != nil || hn < 0 || mn < 0 {
			return 0, false
		}
		secs = hn*3600 + mn*60
	case s == "" && days > 0:
	default:
		return 0, false
	}
	total := days*86400 + secs
	if total < 0 || total > math.MaxInt64/int64(time.Second) {
		return 0, false
	}
	return time.Duration(total) * time.Second, true
}

// dateLayouts are the date formats zpool prints: ctime(3) ("%a %b %e %T %Y")
// in the text output, and date(1)-like strings in `-j` without --json-int.
// Callers collapse runs of spaces first, so "%e" padding does not matter.
var dateLayouts = []string{
	"Mon Jan 2 15:04:05 2006",
	"Mon Jan 2 03:04:05 PM MST 2006",
	"Mon Jan 2 15:04:05 MST 2006",
	"Mon 02 Jan 2006 03:04:05 PM MST",
	"Mon 02 Jan 2006 15:04:05 MST",
}

// parseZpoolDate reads a date printed by zpool in loc. Trailing text after a
// ctime date (as in "... 2025, 0h0m to go") is ignored.
func parseZpoolDate(s string, loc *time.Location) (time.Time, bool) {
	f := strings.Fields(s)
	if len(f) >= 5 {
		if t, err := time.ParseInLocation(dateLayouts[0], strings.Join(f[:5], " "), loc); err == nil {
			return t, true
		}
	}
	joined := strings.Join(f, " ")
	for _, l := range dateLayouts[1:] {
		if t, err := time.ParseInLocation(l, joined, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// collapseSpace joins the words of s with single spaces; zpool wraps status
// and action text with newlines and tabs that carry no meaning.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// expandIndent returns the display column of the first non-blank byte of
// line, with tabs at 8-column stops, and that byte's index.
func expandIndent(line string) (col, idx int) {
	for idx < len(line) {
		switch line[idx] {
		case ' ':
			col++
		case '\t':
			col = (col/8 + 1) * 8
		default:
			return col, idx
		}
		idx++
	}
	return col, idx
}

func timePtr(t time.Time) *time.Time { return &t }
