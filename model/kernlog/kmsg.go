package kernlog

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseKmsg reads one /dev/kmsg record (one read(2)):
// "PRI,SEQ,USEC,FLAGS[,..];MESSAGE\n" followed by " KEY=VALUE" dictionary
// lines (DEVICE=, SUBSYSTEM=). PRI = facility<<3|level. Escapes \xNN in
// MESSAGE and in dictionary values are decoded. The error names what is
// wrong.
func ParseKmsg(b []byte) (Record, error) {
	header, rest, found := bytes.Cut(b, []byte{';'})
	if !found {
		return Record{}, fmt.Errorf("kmsg record: no ';' between the header and the message in %q", clip(b))
	}
	rec, err := parseKmsgHeader(header)
	if err != nil {
		return Record{}, err
	}
	msg, dict, _ := bytes.Cut(rest, []byte{'\n'})
	rec.Message = unescapeKmsg(msg)
	for len(dict) > 0 {
		var line []byte
		line, dict, _ = bytes.Cut(dict, []byte{'\n'})
		// Dictionary lines start with one space; anything else is not the
		// kernel's and is ignored rather than failing the whole record.
		key, value, ok := bytes.Cut(bytes.TrimPrefix(line, []byte{' '}), []byte{'='})
		if !ok || len(line) == 0 || line[0] != ' ' {
			continue
		}
		if string(key) == "DEVICE" {
			rec.Device = unescapeKmsg(value)
		}
	}
	return rec, nil
}

// parseKmsgHeader reads "PRI,SEQ,USEC,FLAGS[,more]". Fields after FLAGS
// (caller=T123 on newer kernels) are allowed and ignored.
func parseKmsgHeader(h []byte) (Record, error) {
	fields := strings.SplitN(string(h), ",", 5)
	if len(fields) < 3 {
		return Record{}, fmt.Errorf("kmsg record: header %q has %d fields, want PRI,SEQ,USEC,FLAGS", clip(h), len(fields))
	}
	pri, err := strconv.ParseUint(fields[0], 10, 31)
	if err != nil {
		return Record{}, fmt.Errorf("kmsg record: priority %q is not a number", clip([]byte(fields[0])))
	}
	seq, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return Record{}, fmt.Errorf("kmsg record: sequence %q is not a number", clip([]byte(fields[1])))
	}
	usec, err := strconv.ParseUint(fields[2], 10, 63)
	if err != nil || usec > uint64(maxMonoMicros) {
		return Record{}, fmt.Errorf("kmsg record: timestamp %q is not a number of microseconds", clip([]byte(fields[2])))
	}
	return Record{
		Priority: int(pri & 7),
		Facility: int(pri >> 3),
		Seq:      seq,
		Mono:     time.Duration(usec) * time.Microsecond,
	}, nil
}

// maxMonoMicros keeps the conversion to a time.Duration from overflowing.
const maxMonoMicros = int64(^uint64(0)>>1) / int64(time.Microsecond)

// unescapeKmsg decodes the kernel's \xNN escapes (it escapes control
// characters, non-ASCII bytes and the backslash itself).
func unescapeKmsg(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+3 < len(b) && b[i+1] == 'x' {
			hi, okHi := hexValue(b[i+2])
			lo, okLo := hexValue(b[i+3])
			if okHi && okLo {
				out = append(out, hi<<4|lo)
				i += 3
				continue
			}
		}
		out = append(out, b[i])
	}
	return string(out)
}

func hexValue(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// clip keeps error messages short when the input is long.
func clip(b []byte) string {
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
