package zfs

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// DatasetPropColumns is the datasets collector's -o list, in order.
var DatasetPropColumns = []string{"name", "type", "used", "avail", "usedbysnapshots", "quota",
	"refquota", "mounted", "canmount", "mountpoint", "encryption", "encryptionroot", "keystatus",
	"keylocation", "keyformat", "readonly", "receive_resume_token"}

// ParseDatasetProps parses `zfs list -Hp -t filesystem,volume -o COLS`,
// where cols is the -o list given, in order (DatasetPropColumns, possibly
// without the properties the release lacks). Columns it does not know are
// skipped. Sizes read "-" and "none" as 0; encryptionroot, keystatus,
// keylocation, keyformat and receive_resume_token read them as "".
// Mounted, canmount and mountpoint are kept as printed ("-" for a volume).
func ParseDatasetProps(r io.Reader, cols []string) ([]DatasetProps, error) {
	cols, err := normaliseColumns(cols)
	if err != nil {
		return nil, err
	}
	lr := newLineReader(r)
	var out []DatasetProps
	for n := 1; ; n++ {
		line, ok := lr.next()
		if !ok {
			break
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		d, err := parseDatasetPropsLine(line, cols)
		if err != nil {
			return out, fmt.Errorf("zfs: zfs list line %d: %w", n, err)
		}
		out = append(out, d)
	}
	if err := lr.readErr(); err != nil {
		return out, fmt.Errorf("zfs: reading zfs list: %w", err)
	}
	return out, nil
}

// normaliseColumns lower-cases the -o list and insists on a name column:
// without it no line can be told from another.
func normaliseColumns(cols []string) ([]string, error) {
	out := make([]string, len(cols))
	named := false
	for i, c := range cols {
		out[i] = strings.ToLower(strings.TrimSpace(c))
		named = named || out[i] == "name"
	}
	if !named {
		return nil, fmt.Errorf("zfs: zfs list: the column list %q has no name column", strings.Join(cols, ","))
	}
	return out, nil
}

// splitListFields splits one line of `zfs list -H`. -H separates with tabs,
// and names and mountpoints may hold spaces, so a line with a tab is split
// on tabs only; a line without one (a copy of the table, or a single
// column) is split on blanks.
func splitListFields(line string, want int) []string {
	if strings.Contains(line, "\t") || want == 1 {
		return strings.Split(line, "\t")
	}
	return strings.Fields(line)
}

// fieldCountError explains a line whose field count does not match -o.
func fieldCountError(line string, got int, cols []string) error {
	hint := "a tab inside a dataset name or mountpoint, or output of another -o list"
	if got < len(cols) {
		hint = "a truncated line, or output of another -o list"
	}
	return fmt.Errorf("%d fields, want %d (%s): %s; line %q",
		got, len(cols), strings.Join(cols, ","), hint, clipLine(line))
}

// clipLine shortens a line quoted in an error message.
func clipLine(s string) string {
	const max = 160
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

func parseDatasetPropsLine(line string, cols []string) (DatasetProps, error) {
	fields := splitListFields(line, len(cols))
	if len(fields) != len(cols) {
		return DatasetProps{}, fieldCountError(line, len(fields), cols)
	}
	var d DatasetProps
	for i, c := range cols {
		if err := setDatasetProp(&d, c, fields[i]); err != nil {
			return DatasetProps{}, fmt.Errorf("column %s: %w", c, err)
		}
	}
	if d.Name == "" {
		return DatasetProps{}, fmt.Errorf("no dataset name in line %q", clipLine(line))
	}
	return d, nil
}

// setDatasetProp stores one column value. Names and mountpoints keep their
// blanks; other values are trimmed.
func setDatasetProp(d *DatasetProps, col, val string) error {
	var err error
	switch col {
	case "name":
		d.Name = val
	case "mountpoint":
		d.Mountpoint = val
	case "type":
		d.Type = strings.TrimSpace(val)
	case "used":
		d.UsedBytes, err = sizeOrNoneWord(val)
	case "avail", "available":
		d.AvailBytes, err = sizeOrNoneWord(val)
	case "usedbysnapshots", "usedsnap":
		d.UsedBySnapshotsBytes, err = sizeOrNoneWord(val)
	case "quota":
		d.QuotaBytes, err = sizeOrNoneWord(val)
	case "refquota":
		d.RefquotaBytes, err = sizeOrNoneWord(val)
	case "mounted":
		d.Mounted = strings.TrimSpace(val)
	case "canmount":
		d.CanMount = strings.TrimSpace(val)
	case "encryption":
		d.Encryption = strings.TrimSpace(val)
	case "encryptionroot":
		d.EncryptionRoot = noneEmpty(val)
	case "keystatus":
		d.KeyStatus = noneEmpty(val)
	case "keylocation":
		d.KeyLocation = noneEmpty(val)
	case "keyformat":
		d.KeyFormat = noneEmpty(val)
	case "readonly", "rdonly":
		d.ReadOnly = strings.TrimSpace(val) == "on"
	case "receive_resume_token":
		d.ReceiveResumeToken = noneEmpty(val)
	}
	return err
}

// sizeOrNoneWord reads a size where "none" (a quota not set) is also 0.
func sizeOrNoneWord(v string) (uint64, error) {
	v = strings.TrimSpace(v)
	if v == "none" {
		return 0, nil
	}
	return sizeOrNone(v)
}

// noneEmpty reads zfs's "no value" words ("-", "none") as "".
func noneEmpty(v string) string {
	v = strings.TrimSpace(v)
	if v == "-" || v == "none" {
		return ""
	}
	return v
}

// UnknownProperty reads the property zfs names in its stderr when -o holds
// one it does not know: libzfs prints "bad property list: invalid property
// 'keystatus'" and then the usage text. ok is false for any other error.
func UnknownProperty(stderr []byte) (prop string, ok bool) {
	const marker = "invalid property "
	for _, line := range bytes.Split(stderr, []byte("\n")) {
		l := strings.TrimSpace(string(line))
		if !strings.HasPrefix(l, "bad property list:") {
			continue
		}
		_, rest, found := strings.Cut(l, marker)
		if !found {
			continue
		}
		rest = strings.TrimSpace(rest)
		if q, ok := strings.CutPrefix(rest, "'"); ok {
			if name, _, closed := strings.Cut(q, "'"); closed {
				rest = name
			}
		} else if f := strings.Fields(rest); len(f) > 0 {
			rest = f[0]
		}
		if validPropName(rest) {
			return rest, true
		}
	}
	return "", false
}

// validPropName accepts what a zfs property or user property can be called,
// so that a mangled message never makes the collector drop a real column.
func validPropName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == ':' || c == '.' || c == '-' || c == '@' || c == '#'
		if !ok {
			return false
		}
	}
	return true
}
