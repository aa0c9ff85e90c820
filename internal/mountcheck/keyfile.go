// Package mountcheck looks at what zfs will meet on this machine's own
// filesystem: the key file a file:// keylocation names, and the directory
// below a dataset that should be mounted but is not. Every look is bounded
// (bytes read, entries visited), follows no symbolic link in the walk and
// never crosses into another mounted filesystem.
package mountcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/zwatch/zwatch/facts"
)

// wrappingKeyLen is OpenZFS's WRAPPING_KEY_LEN: a raw key is exactly this
// many bytes, a hex key twice as many hex digits.
const wrappingKeyLen = 32

// keyReadBound is the most KeyFile reads. libzfs reads 33 bytes of a raw
// key and the first line of the others; a hex key's line is 64 digits and
// a passphrase at most 512 bytes (MAX_PASSPHRASE_LEN).
const keyReadBound = 4096

// KeyFile checks the key file at path the way the next boot's
// `zfs load-key` will read it (lib/libzfs/libzfs_crypto.c,
// get_key_material_stream and validate_key): keyformat=raw reads up to 33
// bytes and needs exactly 32, newlines included; hex and passphrase read the
// first line with its trailing newline trimmed, and hex needs exactly 64 hex
// digits on it (later lines are ignored). zfs follows a symbolic link to the
// file, so the check does too. A file group or others may read is exposed.
func KeyFile(path, keyformat string) facts.KeyFileCheck {
	c := facts.KeyFileCheck{Path: path}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return problem(c, facts.KeyFileMissing, "no such file: the next zfs load-key fails")
	case err != nil:
		return problem(c, facts.KeyFileUnreadable, "cannot stat it: "+plainError(err))
	}
	c.Mode = fmt.Sprintf("%04o", fi.Mode().Perm())
	c.SizeBytes = fi.Size()
	if why := notAFile(fi.Mode()); why != "" {
		return problem(c, facts.KeyFileUnreadable, why)
	}
	data, err := readBounded(path)
	if err != nil {
		return problem(c, facts.KeyFileUnreadable, "cannot read it: "+plainError(err))
	}
	if fi.Mode().IsRegular() && len(data) == 0 {
		return exposedToo(problem(c, facts.KeyFileEmpty, "the file is empty (0 bytes)"), fi.Mode())
	}
	if kind, why := judgeKey(data, fi.Size(), keyformat); kind != "" {
		return exposedToo(problem(c, kind, why), fi.Mode())
	}
	if fi.Mode().Perm()&0o044 != 0 {
		return problem(c, facts.KeyFileExposed, fmt.Sprintf("mode %s: group or others can read the key; chmod 600 %s", c.Mode, path))
	}
	return c
}

// judgeKey says what is wrong with the key material for keyformat, as
// validate_key does; "" when zfs accepts it. size is the file's size.
func judgeKey(data []byte, size int64, keyformat string) (kind, why string) {
	switch keyformat {
	case "raw":
		switch {
		case len(data) == 0:
			return facts.KeyFileEmpty, "the file is empty"
		case len(data) != wrappingKeyLen:
			return facts.KeyFileWrongSize, fmt.Sprintf("is %d bytes; keyformat=raw needs exactly %d (a trailing newline counts)", max(size, int64(len(data))), wrappingKeyLen)
		}
	case "hex":
		line := firstLine(data)
		switch {
		case len(line) == 0:
			return facts.KeyFileEmpty, "its first line is empty"
		case len(line) != 2*wrappingKeyLen:
			why := fmt.Sprintf("its first line is %d characters; keyformat=hex needs exactly %d hex digits", len(line), 2*wrappingKeyLen)
			if bytes.HasSuffix(line, []byte("\r")) {
				why += " (it ends in a carriage return: a Windows line ending)"
			}
			return facts.KeyFileWrongSize, why
		}
		for i, b := range line {
			if !isHexDigit(b) {
				return facts.KeyFileWrongSize, fmt.Sprintf("character %d of its first line is %q, not a hex digit", i+1, b)
			}
		}
	case "passphrase":
		// Loading checks no length (do_verify is false); only an empty
		// first line is certain to fail.
		if len(firstLine(data)) == 0 {
			return facts.KeyFileEmpty, "its first line is empty: no passphrase"
		}
	}
	return "", ""
}

// firstLine is what getline reads, its newline trimmed.
func firstLine(data []byte) []byte {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	return line
}

func isHexDigit(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}

// notAFile says why zfs cannot read a key from a file of this mode; "" for
// a regular file or a device, which fopen reads.
func notAFile(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "is a directory, not a file"
	case m&fs.ModeNamedPipe != 0:
		return "is a named pipe, not a file: zfs load-key would wait on it"
	case m&fs.ModeSocket != 0:
		return "is a socket, not a file"
	}
	return ""
}

// readBounded reads at most keyReadBound bytes; O_NONBLOCK so that a pipe
// put in the file's place after the stat cannot block the collector.
func readBounded(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, keyReadBound))
}

func problem(c facts.KeyFileCheck, kind, detail string) facts.KeyFileCheck {
	c.Problem, c.Detail = kind, detail
	return c
}

// exposedToo adds the file's exposure to another problem's detail: there is
// one Problem, the one that fails the boot, but both need fixing.
func exposedToo(c facts.KeyFileCheck, m fs.FileMode) facts.KeyFileCheck {
	if m.Perm()&0o044 != 0 {
		c.Detail += fmt.Sprintf("; also, mode %s lets group or others read it", c.Mode)
	}
	return c
}

// plainError drops the path an *fs.PathError repeats.
func plainError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
