package channel

import (
	"context"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// InventoryReceiver is implemented by senders that show every pool and disk
// of the hosts zwatch watches, healthy ones too, not only those a
// notification names (the MQTT channel's Home Assistant entities). The
// daemon's channel worker calls SetInventory with the first inventory and
// again whenever it changes; a sender built for `zwatch notify test` or for
// direct delivery never gets one. An error is retried with backoff.
type InventoryReceiver interface {
	SetInventory(ctx context.Context, inv Inventory) error
}

// Inventory is what the daemon knows of the hosts it watches, read the way
// the status page reads it (statusview).
type Inventory struct {
	// Self is the host this zwatch runs as (config host).
	Self string
	// At is when the daemon began reading it: a notification delivered
	// after At is newer than what the inventory says of its alerts.
	At    time.Time
	Hosts []HostInventory
}

// HostInventory is one host's pools and disks.
type HostInventory struct {
	Host string
	// Version is the zwatch version the host's heartbeat reports ("" when
	// none arrived yet).
	Version string
	Pools   []InventoryPool
	Disks   []InventoryDisk
	// Firing are the host's firing alerts this channel takes (its
	// min_severity and route applied), so that a sender started after they
	// were sent knows them.
	Firing []alert.Alert
}

// InventoryPool is one pool of a host.
type InventoryPool struct {
	Name  string
	State string // ONLINE, DEGRADED, ...
}

// InventoryDisk is one physical disk of a host.
type InventoryDisk struct {
	// Serial is how alerts name the disk (their disk label).
	Serial string
	ByID   string // the /dev/disk/by-id name, "" when unknown
	Model  string
	// Pool and Vdev place the disk ("" when it is in no pool).
	Pool string
	Vdev string
	// Health is SMART's verdict: passed, failing, standby or unknown.
	Health string
}
