// Package input reads what a person hands zwatch on the command line — a
// saved `zpool status` or `smartctl -j` output, a plan — from a file or
// stdin, never more than a limit far above any real one: a wrong path (a
// log, a disk, /dev/zero) must give a clear error, not exhaust memory or
// block.
package input

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// MaxToolOutput bounds a saved tool output: a `zpool status -v` of a
// thousand disks is a few MiB, a smartctl report tens of KiB.
const MaxToolOutput = 64 << 20

// Read reads the file at path, or stdin for "-", refusing directories and
// devices and anything larger than limit bytes. It names the input in its
// errors and says what would be right.
func Read(path string, limit int64) ([]byte, error) {
	if path == "-" {
		return From("stdin", os.Stdin, limit)
	}
	return readFile(path, limit, false)
}

// Name is how errors name an input given as path: the path, or "stdin"
// for "-".
func Name(path string) string {
	if path == "-" {
		return "stdin"
	}
	return path
}

// ReadRegular reads the file at path, up to limit bytes, refusing anything
// but a regular file: for what zwatch reads unattended at start-up (a secret
// file), where a pipe or a device would block it or never end.
func ReadRegular(path string, limit int64) ([]byte, error) {
	return readFile(path, limit, true)
}

func readFile(path string, limit int64, regularOnly bool) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	switch m := st.Mode(); {
	case regularOnly && !m.IsRegular():
		return nil, fmt.Errorf("read %s: not a regular file: name the file itself", path)
	case m.IsDir():
		return nil, fmt.Errorf("read %s: is a directory: name the file that holds the saved output", path)
	case m&(os.ModeDevice|os.ModeCharDevice) != 0:
		return nil, fmt.Errorf("read %s: is a device, not a saved output: save the output to a file first (e.g. zpool status > FILE)", path)
	case m.IsRegular() && st.Size() > limit:
		return nil, tooLarge(path, limit)
	}
	// Pipes (--input <(zpool status)) are read as they come, bounded too.
	return From(path, f, limit)
}

// chunkSize is the piece From reads at a time.
const chunkSize = 1 << 20

// From reads r (named name in errors) up to limit bytes; more is an error.
// It reads in pieces and joins them once at the end, so that what it holds
// is the input plus at most one copy, never the slack of a buffer that
// doubles (endless input would cost twice the limit before being refused).
func From(name string, r io.Reader, limit int64) ([]byte, error) {
	var chunks [][]byte
	var n int64
	lr := io.LimitReader(r, limit+1)
	for {
		c := make([]byte, min(chunkSize, limit+1-n))
		m, err := io.ReadFull(lr, c)
		if m > 0 {
			chunks = append(chunks, c[:m])
			n += int64(m)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		if n > limit {
			return nil, tooLarge(name, limit)
		}
	}
	if n > limit {
		return nil, tooLarge(name, limit)
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	return bytes.Join(chunks, nil), nil
}

func tooLarge(name string, limit int64) error {
	return fmt.Errorf("read %s: larger than %s, far more than any real output: is it the right file?", name, size(limit))
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
