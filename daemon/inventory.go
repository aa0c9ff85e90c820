package daemon

import (
	"context"
	"log/slog"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/clock"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/views/statusview"
)

// inventoryEvery is how often the hosts' pools and disks are read for the
// channels that show them; a pool or disk appears within this long.
const inventoryEvery = 30 * time.Second

// inventoryComponent reads every host's pools and disks the way the status
// page does and hands them to feed, which passes on only changes. It reads
// nothing while no channel wants them (no sender implements
// channel.InventoryReceiver).
func inventoryComponent(cfg *config.Config, b *bus.Bus, feed *notifiers.InventoryFeed, log *slog.Logger) Component {
	view := statusview.New(b, cfg)
	return Component{Name: "inventory", Run: func(ctx context.Context) error {
		for {
			if feed.Wanted() {
				rctx, cancel := context.WithTimeout(ctx, inventoryEvery)
				at := time.Now()
				hosts, err := view.Inventory(rctx)
				cancel()
				switch {
				case err != nil && ctx.Err() == nil:
					log.Warn("cannot read the hosts' pools and disks for the channels that show them", "err", err)
				case err == nil:
					feed.Set(inventoryOf(cfg.Host, at, hosts))
				}
			}
			wait := inventoryEvery
			if !feed.Wanted() {
				wait = time.Second // the notifiers start after this component
			}
			if clock.Sleep(ctx, wait) != nil {
				return nil
			}
		}
	}}
}

// inventoryOf is what channels learn of hosts: names, states, disk
// identities and firing alerts, without SMART readings or vdev trees.
func inventoryOf(self string, at time.Time, hosts []statusview.Host) channel.Inventory {
	inv := channel.Inventory{Self: self, At: at}
	for _, h := range hosts {
		hi := channel.HostInventory{Host: h.Host, Version: h.Version}
		for _, p := range h.Pools {
			hi.Pools = append(hi.Pools, channel.InventoryPool{Name: p.Name, State: p.State})
		}
		for _, d := range h.Disks {
			if d.Serial == "" {
				continue // alerts name a disk by its serial; one without is not addressable
			}
			hi.Disks = append(hi.Disks, channel.InventoryDisk{Serial: d.Serial, ByID: d.ByID, Model: d.Model,
				Pool: d.Pool, Vdev: d.Vdev, Health: d.Health})
		}
		for _, a := range h.Alerts {
			if a.State == alert.Firing {
				hi.Firing = append(hi.Firing, a)
			}
		}
		inv.Hosts = append(inv.Hosts, hi)
	}
	return inv
}
