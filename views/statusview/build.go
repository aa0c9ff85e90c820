package statusview

import (
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/views/history"
)

// knownDisk is one disk as the inventory and SMART tell it.
type knownDisk struct {
	id     disk.Identity
	device string // the path smartctl read it by
	rep    *smart.Report
	at     time.Time
	inPool string
	inVdev string
}

// disks joins the inventory with the SMART reports by serial.
func (lf *lastFacts) disks() []*knownDisk {
	var out []*knownDisk
	bySerial := map[string]*knownDisk{}
	if lf.inventory != nil {
		for _, id := range lf.inventory.Disks {
			d := &knownDisk{id: id}
			out = append(out, d)
			if id.Serial != "" {
				bySerial[id.Serial] = d
			}
		}
	}
	for i := range lf.smart {
		s := &lf.smart[i]
		d := bySerial[s.r.Serial]
		if d == nil || s.r.Serial == "" {
			d = &knownDisk{id: rules.IdentityOfReport(&s.r)}
			out = append(out, d)
			if s.r.Serial != "" {
				bySerial[s.r.Serial] = d
			}
		}
		d.rep, d.at, d.device = &s.r, s.at, s.r.Device
		if d.id.ByID == "" {
			d.id.ByID = s.r.ByID
		}
		if d.id.Kernel == "" {
			d.id.Kernel = s.r.Kernel
		}
	}
	return out
}

// diskOf finds the disk a leaf vdev names: as the rules join them, or by
// the by-id path smartctl read it by (scsi-3<naa>, which carries no serial)
// with the vdev's partition suffix taken off.
func diskOf(disks []*knownDisk, l *zfs.Vdev) *knownDisk {
	for _, p := range []string{l.Path, l.Name, l.Was} {
		if p == "" {
			continue
		}
		whole := partSuffix.ReplaceAllString(p, "")
		for _, d := range disks {
			if rules.MatchesDisk(p, d.id, d.device) || (strings.HasPrefix(d.device, "/dev/disk/by-id/") && whole == d.device) {
				return d
			}
		}
	}
	return nil
}

var partSuffix = regexp.MustCompile(`-part\d+$`)

func buildPools(lf lastFacts, alerts []alert.Alert) []Pool {
	out := []Pool{}
	disks := lf.disks()
	byName := map[string]int{}
	if lf.status != nil {
		for _, zp := range lf.status.Pools {
			at := lf.statusAt
			p := Pool{Name: zp.Name, State: zp.State, GUID: zp.GUID, Status: zp.Status, Action: zp.Action,
				Scan: zp.Scan, DataErrors: zp.DataErrors.Count, ErrorsUnknown: zp.ErrorsUnknown, StatusAt: &at, Vdevs: []Vdev{}}
			if left, text, ok := rules.PoolMargin(zp); ok {
				p.Margin, p.MarginText = &left, text
			}
			if zp.Scan.Function == zfs.ScanScrub && zp.Scan.State == zfs.ScanStateFinished && zp.Scan.End != nil {
				p.LastScrub = zp.Scan.End
			}
			for _, cv := range zp.AllVdevs() {
				p.Vdevs = appendVdev(p.Vdevs, cv.Vdev, cv.Class, 0, disks, alerts)
			}
			byName[p.Name] = len(out)
			out = append(out, p)
		}
	}
	if lf.capacity != nil {
		at := lf.capacityAt
		for _, pl := range lf.capacity.Pools {
			i, ok := byName[pl.Name]
			if !ok {
				out = append(out, Pool{Name: pl.Name, State: pl.Health, Vdevs: []Vdev{}})
				i = len(out) - 1
				byName[pl.Name] = i
			}
			p := &out[i]
			p.SizeBytes, p.AllocBytes, p.FreeBytes = pl.SizeBytes, pl.AllocBytes, pl.FreeBytes
			p.CapacityPct, p.FragmentPct, p.ReadOnly, p.CapacityAt = pl.CapacityPct, pl.FragmentPct, pl.ReadOnly, &at
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func appendVdev(rows []Vdev, v *zfs.Vdev, class string, depth int, disks []*knownDisk, alerts []alert.Alert) []Vdev {
	row := Vdev{Name: v.Name, Type: v.Type, State: v.State, Class: class, Depth: depth,
		ReadErrors: v.ReadErrors, WriteErrors: v.WriteErrors, ChecksumErrors: v.ChecksumErrors, SlowIOs: v.SlowIOs,
		GUID: v.GUID, Path: v.Path, Was: v.Was, Notes: v.Notes}
	row.Problem = vdevTrouble(v)
	if v.IsLeaf() {
		if d := diskOf(disks, v); d != nil {
			row.Serial, row.ByID, row.Bay = d.id.Serial, d.id.ByID, d.id.Port
			if len(diskAlerts(alerts, d.id.Serial)) > 0 {
				row.Problem = true
			}
		}
	}
	rows = append(rows, row)
	for _, c := range v.Children {
		rows = appendVdev(rows, c, class, depth+1, disks, alerts)
	}
	return rows
}

// vdevTrouble: a state other than healthy, or errors counted.
func vdevTrouble(v *zfs.Vdev) bool {
	switch v.State {
	case zfs.StateOnline, zfs.StateAvail, zfs.StateInUse, "":
	default:
		return true
	}
	return v.ReadErrors+v.WriteErrors+v.ChecksumErrors > 0
}

// diskAlerts names the firing alerts about the disk with serial s.
func diskAlerts(alerts []alert.Alert, serial string) []string {
	if serial == "" {
		return nil
	}
	var out []string
	for _, a := range alerts {
		if a.State != alert.Firing {
			continue
		}
		if a.Labels["disk"] == serial || a.Labels["serial"] == serial || a.Evidence["serial"] == serial ||
			(a.Replacement != nil && a.Replacement.Disk != nil && a.Replacement.Disk.Serial == serial) {
			out = append(out, a.Name)
		}
	}
	return out
}

// buildDisks lists the host's disks, those in pools first, by pool and serial.
func buildDisks(lf lastFacts, alerts []alert.Alert) []Disk {
	known := lf.disks()
	if lf.status != nil {
		for _, zp := range lf.status.Pools {
			for _, cv := range zp.AllVdevs() {
				for _, l := range cv.Vdev.Leaves() {
					if d := diskOf(known, l); d != nil && d.inPool == "" {
						d.inPool, d.inVdev = zp.Name, l.Name
					}
				}
			}
		}
	}
	out := make([]Disk, 0, len(known))
	for _, k := range known {
		d := Disk{Serial: k.id.Serial, Model: k.id.Model, ByID: k.id.ByID, Kernel: k.id.Kernel, Transport: k.id.Transport,
			Bay: k.id.Port, SizeBytes: k.id.SizeBytes, Pool: k.inPool, Vdev: k.inVdev, Health: "unknown", Firmware: k.id.Firmware}
		if r := k.rep; r != nil {
			at := k.at
			d.SmartAt, d.SmartType, d.SMART = &at, r.SmartType, r
			if d.Model == "" {
				d.Model = r.Model
			}
			if d.Firmware == "" {
				d.Firmware = r.Firmware
			}
			switch {
			case r.InStandby:
				d.Health = "standby"
			case r.SmartPassed == nil:
			case *r.SmartPassed:
				d.Health = "passed"
			default:
				d.Health = "failing"
			}
			d.TemperatureC, d.PowerOnHours = r.TemperatureC, r.PowerOnHours
			d.Attributes = attributesOf(r)
		}
		d.Alerts = diskAlerts(alerts, d.Serial)
		d.Problem = d.Health == "failing" || len(d.Alerts) > 0
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.Pool == "") != (b.Pool == "") {
			return a.Pool != ""
		}
		if a.Pool != b.Pool {
			return a.Pool < b.Pool
		}
		return a.Serial < b.Serial
	})
	return out
}

// ataSeries are the ATA attributes the rules watch, by id.
var ataSeries = map[int]string{
	5: history.SeriesReallocated, 187: history.SeriesReportedUncorrect, 188: history.SeriesCommandTimeout,
	197: history.SeriesPending, 198: history.SeriesOfflineUncorrectable, 199: history.SeriesUDMACRCErrors,
}

// attributesOf is the counters the rules watch, as the history names them.
func attributesOf(r *smart.Report) map[string]uint64 {
	out := map[string]uint64{}
	for _, a := range r.Attributes {
		if name, ok := ataSeries[a.ID]; ok {
			out[name] = a.Raw
		}
	}
	if n := r.NVMe; n != nil {
		out[history.SeriesMediaErrors] = n.MediaErrors
		out[history.SeriesAvailableSpare] = n.AvailableSpare
		out[history.SeriesPercentageUsed] = n.PercentageUsed
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
