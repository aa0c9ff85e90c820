// Package disk describes physical disks: their stable identity (serial, WWN,
// /dev/disk/by-id names) and where they sit now (kernel name, transport).
// It is how a ZFS vdev path and a SMART report are tied to one disk a person
// can pull out of a bay.
package disk

// Transports as zwatch reports them.
const (
	TransportSATA = "sata"
	TransportSAS  = "sas"
	TransportNVMe = "nvme"
	TransportUSB  = "usb"
	TransportSCSI = "scsi"
	TransportVirt = "virtio"
)

// Identity is everything zwatch knows about one physical disk.
type Identity struct {
	Serial   string `json:"serial"`
	WWN      string `json:"wwn,omitempty"`
	Model    string `json:"model,omitempty"`
	Firmware string `json:"firmware,omitempty"`
	// ByID is the serial-bearing /dev/disk/by-id name preferred for people
	// (ata-, nvme-, scsi-, usb-), e.g. /dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WX32D7088AF1.
	ByID string `json:"by_id,omitempty"`
	// ByIDAll lists every by-id name of the whole disk, wwn- names included.
	ByIDAll []string `json:"by_id_all,omitempty"`
	// Kernel is the current kernel name (sdc, nvme0n1): it can change at boot.
	Kernel         string `json:"kernel,omitempty"`
	SizeBytes      uint64 `json:"size_bytes,omitempty"`
	RotationRPM    int    `json:"rotation_rpm,omitempty"` // 0 for SSDs, -1 unknown
	LogicalSector  int    `json:"logical_sector_size,omitempty"`
	PhysicalSector int    `json:"physical_sector_size,omitempty"`
	Transport      string `json:"transport,omitempty"`
	// Port is where it is plugged in now (ata3, usb 2-1.4, nvme0 pci
	// 0000:01:00.0, scsi 2:0:0:0): the bay hint the status page shows.
	Port string `json:"port,omitempty"`
	// SmartType is the smartctl -d type to use, when one is needed (sat, usbjmicron).
	SmartType string `json:"smart_type,omitempty"`
	// Removable is the kernel's removable flag (card readers, some USB disks).
	Removable bool `json:"removable,omitempty"`
	// Absent marks an identity known only from a vdev's by-id name: the disk
	// is not attached now (a GUID-only vdev resolved through its "was" path).
	Absent bool `json:"absent,omitempty"`
}

// Name is the shortest useful handle for a person: the serial, else the kernel name.
func (id Identity) Name() string {
	if id.Serial != "" {
		return id.Serial
	}
	return id.Kernel
}
