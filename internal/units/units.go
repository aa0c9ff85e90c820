// Package units prints byte counts and ages for people, one way everywhere.
package units

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Decimal prints a size the way disks are sold: decimal units, three
// significant digits (4000787030016 → "4 TB", 1073741824 → "1.07 GB").
func Decimal(b uint64) string {
	for _, u := range []struct {
		div  float64
		name string
	}{{1e18, "EB"}, {1e15, "PB"}, {1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}} {
		if float64(b) >= u.div {
			return strconv.FormatFloat(float64(b)/u.div, 'g', 3, 64) + " " + u.name
		}
	}
	return fmt.Sprintf("%d B", b)
}

// IEC prints a size in binary units with one decimal, as zpool and zfs
// count space (134127616 → "127.9 MiB").
func IEC(b uint64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := uint64(unit), 0
	for n := b / unit; n >= unit && exp < 5; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}

// Age writes an age or a period for people: 45s, 15m, 3h, 1d2h, 4d15h
// (minutes are dropped once there are days).
func Age(d time.Duration) string {
	if d < time.Minute {
		return d.Truncate(time.Second).String()
	}
	d = d.Truncate(time.Minute)
	days, rest := d/(24*time.Hour), d%(24*time.Hour)
	var s string
	if days > 0 {
		s = fmt.Sprintf("%dd", days)
		rest = rest.Truncate(time.Hour)
	}
	if rest > 0 {
		r := strings.TrimSuffix(rest.String(), "0s")
		s += strings.TrimSuffix(r, "h0m")
		if strings.HasSuffix(r, "h0m") {
			s += "h"
		}
	}
	return s
}
