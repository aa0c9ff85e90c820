package rules

import (
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
)

// The join ties a vdev (as zpool names it) to a SMART report (as smartctl
// names the disk) so that facts about one physical disk meet. zpool shows
// whatever path the pool was built with; three kinds cover nearly all pools:
//
//   - by-id names ending in the serial: ata-WDC_WD40EFRX-68N32N0_WD-WX32D7088AF1,
//     nvme-Samsung_SSD_970_EVO_500GB_S466NX0K123456_1, scsi-SATA_..._<serial>,
//     usb-..._<serial>-0:0 — matched on the serial as the last token;
//   - wwn- names (wwn-0x5000cca26bd9f3a8) — matched on the report's WWN;
//   - kernel names (/dev/sdc1, sdc, ada2p1, nvme0n1p1, da3) — matched on the
//     report's device path, the partition suffix stripped.
//
// Labels (gpt/usb2, /dev/disk/by-partlabel/...) carry no identity and do not join.

var (
	kernelPart    = regexp.MustCompile(`^(sd[a-z]+|vd[a-z]+|xvd[a-z]+|hd[a-z]+)\d+$`)
	bsdOrNVMePart = regexp.MustCompile(`^((?:nvme\d+n\d+|nvd\d+|ada\d+|da\d+|mmcblk\d+))(?:p\d+|s\d+[a-h]?)?$`)
)

// trimIDNoise removes what follows the identity at the end of a by-id name:
// a partition (-part1), a USB LUN (-0:0) or a one-digit instance (_1), as
// the regexp (-part\d+|-\d+:\d+|_\d)$ would (join_test.go checks they
// agree). By hand: it runs for every leaf and known disk of every zpool
// status judged in full, and the regexp was a sixth of a rule engine's CPU
// while it drained a fleet's backlog.
func trimIDNoise(s string) string {
	n := len(s)
	if n >= 2 && s[n-2] == '_' && isDigit(s[n-1]) {
		return s[:n-2]
	}
	i := n
	for i > 0 && isDigit(s[i-1]) {
		i--
	}
	if i == n {
		return s
	}
	if head, ok := strings.CutSuffix(s[:i], "-part"); ok {
		return head
	}
	if i == 0 || s[i-1] != ':' {
		return s
	}
	j := i - 1
	for j > 0 && isDigit(s[j-1]) {
		j--
	}
	if j == i-1 || j == 0 || s[j-1] != '-' {
		return s
	}
	return s[:j-1]
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// wholeDisk reduces a kernel device name to its whole disk: sdc1 → sdc,
// nvme0n1p1 → nvme0n1, ada2p1 → ada2. Other names are returned as they are.
func wholeDisk(name string) string {
	if m := kernelPart.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	if m := bsdOrNVMePart.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return name
}

// normWWN makes 0x5000CCA26BD9F3A8, wwn-0x5000cca26bd9f3a8 and
// 5000cca26bd9f3a8 compare equal.
func normWWN(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "wwn-")
	s = strings.TrimPrefix(s, "0x")
	s = strings.TrimPrefix(s, "naa.")
	return s
}

// matchesDisk reports whether vdev path p names the disk id/device.
func matchesDisk(p string, id disk.Identity, device string) bool {
	if p == "" {
		return false
	}
	base := path.Base(p)
	switch {
	case strings.HasPrefix(base, "wwn-"):
		w := normWWN(trimIDNoise(base))
		return id.WWN != "" && w == normWWN(id.WWN)
	case strings.HasPrefix(base, "ata-"), strings.HasPrefix(base, "nvme-"), strings.HasPrefix(base, "scsi-"),
		strings.HasPrefix(base, "usb-"), strings.HasPrefix(base, "virtio-"), strings.HasPrefix(base, "mmc-"):
		if id.Serial == "" {
			return false
		}
		n := base
		for {
			m := trimIDNoise(n)
			if m == n {
				break
			}
			n = m
		}
		if !strings.HasSuffix(n, id.Serial) {
			// by-id names replace spaces with underscores.
			s := strings.ReplaceAll(strings.TrimSpace(id.Serial), " ", "_")
			if !strings.HasSuffix(n, s) {
				return false
			}
			n = n[:len(n)-len(s)]
		} else {
			n = n[:len(n)-len(id.Serial)]
		}
		// The serial must be a whole token, not the tail of another one.
		return strings.HasSuffix(n, "_") || strings.HasSuffix(n, "-")
	}
	if device == "" {
		return false
	}
	if p == device {
		return true
	}
	dbase := path.Base(device)
	if strings.HasPrefix(device, "/dev/disk/") {
		return false // a by-path or by-id device: only an exact path matches
	}
	return wholeDisk(base) == wholeDisk(dbase)
}

// indexLeaves records the pool's leaves, joined to the known disks.
func (e *Engine) indexLeaves(h *hostState, p *zfs.Pool) {
	for _, cv := range p.AllVdevs() {
		left, _, ok := margin(cv.Vdev)
		if cv.Class == "cache" || cv.Class == "spares" {
			ok = false
		}
		silvering := p.Scan.Function == zfs.ScanResilver && p.Scan.State == zfs.ScanStateScanning && len(badLeavesOf(cv.Vdev)) > 0
		for _, l := range cv.Vdev.Leaves() {
			if l.Type == zfs.VdevDSpare {
				continue
			}
			ref := leafRef{Pool: p.Name, Top: cv.Vdev.Name, Name: l.Name, Path: l.Path, GUID: l.GUID, Was: l.Was, State: l.State,
				Margin: left, HasMargin: ok, Resilvering: silvering}
			ref.Serial = h.serialOf(l)
			h.Leaves = append(h.Leaves, ref)
		}
	}
	h.dirty = true
}

// serialOf finds the serial of the disk behind leaf l, or "".
func (h *hostState) serialOf(l *zfs.Vdev) string {
	for serial, d := range h.Disks {
		for _, p := range []string{l.Path, l.Name, l.Was} {
			if matchesDisk(p, d.ID, d.Device) {
				return serial
			}
		}
	}
	return ""
}

// indexDisk records a SMART report's identity and joins it to the leaves.
func (e *Engine) indexDisk(h *hostState, r *smart.Report, now time.Time) {
	if r.Serial == "" {
		return
	}
	d := h.Disks[r.Serial]
	if d == nil {
		d = &diskRef{}
		h.Disks[r.Serial] = d
	}
	id := identityOf(r)
	if d.Device == r.Device && d.ID.Serial == id.Serial && d.ID.WWN == id.WWN && d.ID.Model == id.Model && d.ID.Firmware == id.Firmware && now.Sub(d.Seen) < time.Hour {
		return // known, and seen recently enough
	}
	d.ID = id
	d.Device = r.Device
	d.Seen = now
	for i := range h.Leaves {
		l := &h.Leaves[i]
		if l.Serial == "" {
			for _, p := range []string{l.Path, l.Name, l.Was} {
				if matchesDisk(p, d.ID, d.Device) {
					l.Serial = r.Serial
					break
				}
			}
		}
	}
	h.dirty = true
}

// identityOf is the disk.Identity a SMART report tells.
func identityOf(r *smart.Report) disk.Identity {
	id := disk.Identity{Serial: r.Serial, WWN: r.WWN, Model: r.Model, Firmware: r.Firmware,
		SizeBytes: r.SizeBytes, LogicalSector: r.LogicalSector, PhysicalSector: r.PhysicalSector, Transport: r.Transport, RotationRPM: -1}
	if r.RotationRPM != nil {
		id.RotationRPM = *r.RotationRPM
	}
	if strings.HasPrefix(r.Device, "/dev/disk/by-id/") {
		id.ByID = r.Device
	} else if r.Device != "" {
		id.Kernel = path.Base(r.Device)
	}
	return id
}

// leafOfSerial returns the pool leaf holding the disk with serial s.
func (h *hostState) leafOfSerial(s string) *leafRef {
	if s == "" {
		return nil
	}
	for i := range h.Leaves {
		if h.Leaves[i].Serial == s {
			return &h.Leaves[i]
		}
	}
	return nil
}

// topMargin is the margin of a top-level vdev as last seen.
func (h *hostState) topMargin(pool, top string) (int, bool) {
	for i := range h.Leaves {
		if l := &h.Leaves[i]; l.Pool == pool && l.Top == top {
			return l.Margin, l.HasMargin
		}
	}
	return 0, false
}

func (h *hostState) poolOfSerial(s string) string {
	if l := h.leafOfSerial(s); l != nil {
		return l.Pool
	}
	return ""
}

// identity returns the disk identity of a leaf, when a SMART report joined it.
func (h *hostState) identity(serial string) *disk.Identity {
	if d := h.Disks[serial]; d != nil {
		id := d.ID
		return &id
	}
	return nil
}
