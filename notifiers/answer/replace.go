package answer

import (
	"strings"

	"github.com/zwatch/zwatch/model/alert"
)

// ReplaceVerb reports whether v is one of the replacement's verbs, which
// the replacement answers (tools/replace/remote), not the incident.
func ReplaceVerb(v string) bool { return v == Replace || v == Confirm || v == Cancel }

// ReplaceOffered names the disk a page of n may offer to replace from the
// phone (actions.replace), or "" when it offers none: not a page, no
// disk of this host's pool named, the pool suspended, or the disk still
// serving data in a vdev with no margin left. Asking (tools/replace/remote)
// reads the pool again and checks more.
func ReplaceOffered(n alert.Notification, host string) string {
	if n.Test || n.Status != alert.Firing {
		return ""
	}
	for _, a := range n.Alerts {
		r := a.Replacement
		if a.State != alert.Firing || r == nil || (r.VdevGUID == "" && r.VdevPath == "") || a.Labels["host"] != host {
			continue
		}
		serving := r.VdevState == "ONLINE" || r.VdevState == "DEGRADED"
		if r.PoolState == "SUSPENDED" || (serving && r.Margin != nil && *r.Margin <= 0) {
			return ""
		}
		switch {
		case r.Disk != nil && r.Disk.Serial != "":
			return r.Disk.Serial
		case r.VdevPath != "":
			return strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(r.VdevPath, "/dev/disk/by-id/"), "/dev/"), "-part1")
		}
		return r.VdevGUID
	}
	return ""
}
