package channel

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/model/alert"
)

// Incident services (PagerDuty, Opsgenie) open one incident per alert and
// close it by the key it was opened with: these are what they share.

// IncidentKey names one alert's incident across its page and its resolved
// notice: the notification's group, the alert's name and fingerprint, kept
// to the characters safe in a URL path and cut to max by hashing the group.
// Test notifications have keys of their own, so a test never resolves a
// real incident about the same disk.
func IncidentKey(n alert.Notification, a alert.Alert, max int) string {
	prefix := "zwatch"
	if n.Test {
		prefix = "zwatch-test"
	}
	fp := strutil.FirstNonEmpty(a.Fingerprint, alert.Fingerprint(a.Labels))
	group := strutil.FirstNonEmpty(n.GroupKey, "host="+n.Host)
	k := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:=-", r) {
			return r
		}
		return '_'
	}, prefix+":"+group+":"+a.Name+":"+fp)
	if len(k) <= max {
		return k
	}
	h := sha256.Sum256([]byte(group + "\x00" + a.Name))
	return prefix + ":" + hex.EncodeToString(h[:16]) + ":" + fp
}

// IncidentLine is one alert's title: "[STATE] host: summary", with
// "[TEST] " before a test's. An alert without a summary is named with its
// labels.
func IncidentLine(n alert.Notification, a alert.Alert, state string) string {
	s := strings.TrimSpace(a.Summary)
	if s == "" {
		s = a.Name
		for _, k := range []string{"pool", "vdev", "serial", "device"} {
			if v := a.Labels[k]; v != "" {
				s += " " + k + "=" + v
			}
		}
	}
	line := "[" + state + "] " + n.Host + ": " + OneLine(s)
	if n.Test {
		line = "[TEST] " + line
	}
	return line
}

// IncidentSubject is what an alert is about: its pool, else its disk or
// device.
func IncidentSubject(a alert.Alert) string {
	if p := a.Labels["pool"]; p != "" {
		return p
	}
	if a.Replacement != nil && a.Replacement.Pool != "" {
		return a.Replacement.Pool
	}
	if s := a.Labels["serial"]; s != "" {
		return "disk " + s
	}
	return a.Labels["device"]
}
