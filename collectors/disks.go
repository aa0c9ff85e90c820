package collectors

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/disk"
)

// Disks lists the disks present (sysfs and /dev/disk/by-id, nothing
// opened or spun up), so a disk that leaves outside a pool is noticed:
// every disks.interval, and at once when the kernel log says one left.
type Disks struct {
	// Root is the filesystem root ("/" live, a fixture tree in tests).
	Root string
}

// Name implements Collector.
func (c *Disks) Name() string { return "disks" }

// Collect implements Collector.
func (c *Disks) Collect(ctx context.Context, pub Publisher) error {
	return PublishRead(ctx, pub, facts.Disks, c.Name(), c.Read)
}

// Read lists the disks once.
func (c *Disks) Read(context.Context) (facts.DisksData, error) {
	root := c.Root
	if root == "" {
		root = "/"
	}
	ids, err := disk.Discover(root)
	if errors.Is(err, fs.ErrNotExist) {
		return facts.DisksData{}, fmt.Errorf("list disks: no %s/sys/block: %w", root, ErrNotAvailable)
	}
	if err != nil {
		return facts.DisksData{}, err
	}
	return facts.DisksData{Disks: ids}, nil
}
