package kernlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrNotKernelLog says that no line of the input is a kernel log line in a
// format ReadSaved knows.
var ErrNotKernelLog = errors.New("no kernel log line found: expected the output of dmesg, dmesg -T, journalctl -k (short or -o json), /var/log/kern.log or raw /dev/kmsg records")

// MaxLine is the longest line ReadSaved keeps; the rest of a longer line is
// cut (the kernel's own records are at most 1 KiB of text, so only a broken
// or foreign input reaches it).
const MaxLine = 64 << 10

// ReadSaved reads a saved kernel log of any Format (detected line by line,
// so mixed and pasted logs work as far as each line is recognisable),
// calling fn for each record. Lines that are not kernel log lines (a shell
// prompt, a user-space journal entry) are skipped. It returns the format
// most lines had, ErrNotKernelLog when none was a kernel log line, or fn's
// error (which stops the reading).
func ReadSaved(r io.Reader, fn func(Record) error) (Format, error) {
	br := bufio.NewReaderSize(r, 32<<10)
	counts := map[Format]int{}
	var order []Format
	var pending *Record // a kmsg record waits for its dictionary lines
	flush := func() error {
		if pending == nil {
			return nil
		}
		rec := *pending
		pending = nil
		return fn(rec)
	}
	for {
		line, err := readBoundedLine(br)
		if len(line) > 0 || err == nil {
			if pending != nil && applyKmsgDict(pending, line) {
				continue
			}
			if rec, format, ok := parseSavedLine(line); ok {
				if counts[format] == 0 {
					order = append(order, format)
				}
				counts[format]++
				if ferr := flush(); ferr != nil {
					return format, ferr
				}
				if format == FormatKmsg {
					pending = &rec
				} else if ferr := fn(rec); ferr != nil {
					return format, ferr
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return mostSeen(counts, order), fmt.Errorf("reading the kernel log: %w", err)
		}
	}
	if err := flush(); err != nil {
		return mostSeen(counts, order), err
	}
	if len(order) == 0 {
		return "", ErrNotKernelLog
	}
	return mostSeen(counts, order), nil
}

// mostSeen is the format of most lines; on a tie the first one seen.
func mostSeen(counts map[Format]int, order []Format) Format {
	var best Format
	for _, f := range order {
		if counts[f] > counts[best] {
			best = f
		}
	}
	return best
}

// readBoundedLine returns the next line without its line ending, at most
// MaxLine bytes of it; the rest of a longer line is read and dropped.
func readBoundedLine(br *bufio.Reader) (string, error) {
	var sb strings.Builder
	cut := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !cut {
			room := MaxLine - sb.Len()
			if len(chunk) > room {
				sb.Write(chunk[:room])
				cut = true
			} else {
				sb.Write(chunk)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line := strings.TrimRight(sb.String(), "\r\n")
		return line, err
	}
}

// applyKmsgDict attaches a " KEY=VALUE" dictionary line to the kmsg record
// before it; false when the line is not one.
func applyKmsgDict(rec *Record, line string) bool {
	if len(line) < 3 || line[0] != ' ' {
		return false
	}
	key, value, ok := strings.Cut(line[1:], "=")
	if !ok || key == "" || strings.ToUpper(key) != key || strings.ContainsAny(key, " \t") {
		return false
	}
	if key == "DEVICE" {
		rec.Device = unescapeKmsg([]byte(value))
	}
	return true
}
