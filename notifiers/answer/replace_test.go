package answer

import (
	"testing"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
)

func TestReplaceOffered(t *testing.T) {
	one, none := 1, 0
	page := func(r alert.Replacement, host string) alert.Notification {
		return alert.Notification{Status: alert.Firing, Alerts: []alert.Alert{{State: alert.Firing, Labels: map[string]string{"host": host}, Replacement: &r}}}
	}
	removed := alert.Replacement{Pool: "vault", VdevGUID: "3518067281308411962", VdevPath: "/dev/disk/by-id/scsi-35000c500a0000001-part1", VdevState: "REMOVED", Margin: &one}
	for _, c := range []struct {
		name string
		n    alert.Notification
		want string
	}{
		{"removed, by path", page(removed, "nas1"), "scsi-35000c500a0000001"},
		{"by serial", page(func() alert.Replacement { r := removed; r.Disk = &disk.Identity{Serial: "ZWS0001"}; return r }(), "nas1"), "ZWS0001"},
		{"another host", page(removed, "nas2"), ""},
		{"suspended", page(func() alert.Replacement { r := removed; r.PoolState = "SUSPENDED"; return r }(), "nas1"), ""},
		{"serving, no margin", page(func() alert.Replacement { r := removed; r.VdevState, r.Margin = "ONLINE", &none; return r }(), "nas1"), ""},
		{"gone, no margin", page(func() alert.Replacement { r := removed; r.Margin = &none; return r }(), "nas1"), "scsi-35000c500a0000001"},
		{"no GUID or path", page(alert.Replacement{Pool: "vault"}, "nas1"), ""},
		{"resolved", func() alert.Notification { n := page(removed, "nas1"); n.Status = alert.Resolved; return n }(), ""},
	} {
		if got := ReplaceOffered(c.n, "nas1"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
