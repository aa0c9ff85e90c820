package zfs

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DefaultListColumns are the columns of `zpool list -H` without -o.
var DefaultListColumns = []string{
	"name", "size", "alloc", "free", "ckpoint", "expandsz", "frag", "cap", "dedup", "health", "altroot",
}

// ParseList parses `zpool list -Hp` with the default columns.
func ParseList(r io.Reader) ([]PoolList, error) {
	return ParseListColumns(r, DefaultListColumns)
}

// ParseListColumns parses `zpool list -H [-p] -o cols` output; cols names the
// columns in order, as given to -o (e.g. name,health,capacity). Unknown
// columns are skipped. Sizes may be exact (-p) or abbreviated; "-" is none.
func ParseListColumns(r io.Reader, cols []string) ([]PoolList, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("zfs: zpool list: no columns given")
	}
	lr := newLineReader(r)
	var out []PoolList
	for n := 1; ; n++ {
		line, ok := lr.next()
		if !ok {
			break
		}
		if strings.TrimSpace(line) == "" || line[0] == '\t' || line[0] == ' ' {
			continue // blank, or a vdev row of `zpool list -v` (indented)
		}
		pl, err := parseListLine(line, cols)
		if err != nil {
			return out, fmt.Errorf("zfs: zpool list line %d: %w", n, err)
		}
		out = append(out, pl)
	}
	if err := lr.readErr(); err != nil {
		return out, fmt.Errorf("zfs: reading zpool list: %w", err)
	}
	return out, nil
}

// parseListLine reads one tab-separated line. -H separates with tabs; a
// line without tabs is split on blanks, as in a copy of the table.
func parseListLine(line string, cols []string) (PoolList, error) {
	fields := strings.Split(line, "\t")
	if len(fields) == 1 {
		fields = strings.Fields(line)
	}
	if len(fields) != len(cols) {
		return PoolList{}, fmt.Errorf("%d fields, want %d (%s)", len(fields), len(cols), strings.Join(cols, ","))
	}
	var pl PoolList
	for i, c := range cols {
		if err := setListField(&pl, strings.ToLower(strings.TrimSpace(c)), strings.TrimSpace(fields[i])); err != nil {
			return PoolList{}, fmt.Errorf("column %s: %w", c, err)
		}
	}
	if pl.Name == "" {
		return PoolList{}, fmt.Errorf("no pool name")
	}
	return pl, nil
}

// setListField stores one column value.
func setListField(pl *PoolList, col, val string) error {
	var err error
	switch col {
	case "name":
		pl.Name = val
	case "health":
		pl.Health = val
	case "size":
		pl.SizeBytes, err = sizeOrNone(val)
	case "alloc", "allocated":
		pl.AllocBytes, err = sizeOrNone(val)
	case "free":
		pl.FreeBytes, err = sizeOrNone(val)
	case "cap", "capacity":
		pl.CapacityPct, err = percent(val)
	case "frag", "fragmentation":
		if val != "-" {
			var f float64
			f, err = percent(val)
			pl.FragmentPct = &f
		}
	case "readonly":
		pl.ReadOnly = val == "on"
	}
	return err
}

// sizeOrNone reads a byte count; "-" (none) is zero.
func sizeOrNone(v string) (uint64, error) {
	if v == "-" || v == "" {
		return 0, nil
	}
	n, _, err := parseNiceNum(v)
	return n, err
}

// percent reads "37%", "37" (-p) or "-".
func percent(v string) (float64, error) {
	v = strings.TrimSuffix(v, "%")
	if v == "-" || v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("bad percentage %q", v)
	}
	return f, nil
}

// DatasetColumns are the columns ParseDatasets expects, as given to
// `zfs list -Hp -o`.
var DatasetColumns = []string{"name", "used", "avail", "quota", "refquota"}

// ParseDatasets parses `zfs list -Hp -o name,used,avail,quota,refquota`.
// A quota of 0, "-" or "none" means no quota.
func ParseDatasets(r io.Reader) ([]Dataset, error) {
	lr := newLineReader(r)
	var out []Dataset
	for n := 1; ; n++ {
		line, ok := lr.next()
		if !ok {
			break
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		d, err := parseDatasetLine(line)
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

func parseDatasetLine(line string) (Dataset, error) {
	f := strings.Split(line, "\t")
	if len(f) == 1 {
		f = strings.Fields(line)
	}
	if len(f) != len(DatasetColumns) {
		return Dataset{}, fmt.Errorf("%d fields, want %d", len(f), len(DatasetColumns))
	}
	d := Dataset{Name: strings.TrimSpace(f[0])}
	var err error
	for i, dst := range []*uint64{&d.UsedBytes, &d.AvailBytes, &d.QuotaBytes, &d.RefquotaBytes} {
		v := strings.TrimSpace(f[i+1])
		if v == "none" {
			continue
		}
		if *dst, err = sizeOrNone(v); err != nil {
			return Dataset{}, fmt.Errorf("column %s: %w", DatasetColumns[i+1], err)
		}
	}
	return d, nil
}
