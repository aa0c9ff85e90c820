package smart

import (
	"fmt"
	"strings"
)

// Transports as Report.Transport gives them; the same strings as disk's.
const (
	transportSATA = "sata"
	transportSAS  = "sas"
	transportNVMe = "nvme"
	transportUSB  = "usb"
	transportSCSI = "scsi"
)

// transportOf maps smartctl's device type and protocol to a transport.
// smartctl names USB bridges by type (usbjmicron, usbcypress, usbprolific,
// usbsunplus, usbasm1352r; sntasmedia, sntjmicron, sntrealtek for USB-NVMe)
// and says "[USB …]" in info_name. A USB disk that smartctl drives as plain
// "sat" cannot be told apart here; the collector corrects that from sysfs.
func transportOf(d *rawDevice, scsiProto *rawNamed) string {
	if d == nil {
		return ""
	}
	typ := strings.ToLower(d.Type)
	proto := strings.ToLower(d.Protocol)
	switch {
	case isUSBType(typ) || strings.Contains(strings.ToLower(d.InfoName), "[usb"):
		return transportUSB
	case typ == "nvme" || strings.HasPrefix(typ, "nvme,") || proto == "nvme":
		return transportNVMe
	case typ == "ata" || strings.HasPrefix(typ, "sat") || proto == "ata":
		return transportSATA
	case proto == "scsi" || typ == "scsi":
		if scsiProto != nil && strings.Contains(strings.ToLower(scsiProto.Name), "sas") {
			return transportSAS
		}
		return transportSCSI
	}
	return ""
}

func isUSBType(typ string) bool {
	return strings.HasPrefix(typ, "usb") || strings.HasPrefix(typ, "snt")
}

// wwnOf gives the disk's world wide name in the form Linux uses in
// /dev/disk/by-id: ATA's NAA-5 triple as 0x5000c500…, a SCSI logical unit
// id as printed, and an NVMe namespace's EUI-64 as eui.<16 hex digits>
// (like nvme-eui.0025385691b60a37).
func wwnOf(raw *rawOutput) string {
	if s := naaWWN(raw.WWN); s != "" {
		return s
	}
	if id := strings.ToLower(strings.TrimSpace(raw.LogicalUnitID)); strings.HasPrefix(id, "0x") {
		return id
	}
	return nvmeEUI(raw.NVMeNamespace)
}

// naaWWN packs NAA (4 bits), OUI (24 bits) and vendor id (36 bits) into 64
// bits, as smartctl's "LU WWN Device Id: 5 000cca 264ef26d7" does.
func naaWWN(w *rawWWN) string {
	if w == nil || w.NAA == nil || w.OUI == nil || w.ID == nil {
		return ""
	}
	naa, oui, id := *w.NAA, *w.OUI, *w.ID
	if naa > 0xf || oui > 0xffffff || id > 0xfffffffff {
		return "" // not an NAA 5 triple; refuse to print a wrong WWN
	}
	return fmt.Sprintf("0x%016x", naa<<60|oui<<36|id)
}

func nvmeEUI(ns []rawNVMeNS) string {
	if len(ns) == 0 || ns[0].EUI64 == nil {
		return ""
	}
	e := ns[0].EUI64
	if e.OUI == nil || e.ExtID == nil || *e.OUI > 0xffffff || *e.ExtID > 0xffffffffff {
		return ""
	}
	return fmt.Sprintf("eui.%016x", *e.OUI<<40|*e.ExtID)
}

func joinNonEmpty(a, b string) string {
	return strings.TrimSpace(strings.TrimSpace(a) + " " + strings.TrimSpace(b))
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func derefU64(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func intPtr(v int) *int { return &v }
