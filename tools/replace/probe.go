package replace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/disk"
)

// Runner runs one command with an explicit argv, never through a shell.
// *execx.Runner implements it.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) (execx.Result, error)
}

// Probe tells what is on a disk. Live, ExecProbe asks lsblk, blkid and
// wipefs; tests use a fixture.
type Probe interface {
	Usage(ctx context.Context, d disk.Identity) (Usage, error)
}

// Usage is what a disk holds that makes it unsafe to hand to zpool.
type Usage struct {
	// Type is lsblk's TYPE of the device itself: "disk" for a whole disk.
	Type string
	// Partitions are the kernel names of its partitions.
	Partitions []string
	// Signatures are filesystem, RAID, ZFS or partition-table signatures on
	// the disk or its partitions.
	Signatures []Signature
	// Mounts are mount points of the disk or its partitions.
	Mounts []string
	// Holders are devices built on top of it (md, dm, LVM, crypt).
	Holders []string
}

// Signature is one signature found on a device.
type Signature struct {
	Device string // kernel name or path where it was found
	Type   string // zfs_member, ext4, gpt, linux_raid_member, ...
}

// ExecProbe is the live Probe.
type ExecProbe struct {
	Runner Runner
}

// Usage runs `lsblk -J -b -o NAME,TYPE,FSTYPE,SIZE,PKNAME,MOUNTPOINT DEV`,
// `blkid -p -o export DEV` and `wipefs -n DEV`. lsblk sees partitions,
// holders and mounts (FSTYPE from udev's cache); blkid -p and wipefs read
// the disk itself, so a signature udev never saw is found too.
func (p ExecProbe) Usage(ctx context.Context, d disk.Identity) (Usage, error) {
	dev := probeDevice(d)
	if dev == "" {
		return Usage{}, errors.New("the disk has neither a kernel name nor a by-id name")
	}
	res, err := p.Runner.Run(ctx, "lsblk", "-J", "-b", "-o", "NAME,TYPE,FSTYPE,SIZE,PKNAME,MOUNTPOINT", "--", dev)
	if err != nil {
		return Usage{}, err
	}
	u, err := ParseLsblk(res.Stdout)
	if err != nil {
		return Usage{}, err
	}
	res, err = p.Runner.Run(ctx, "blkid", "-p", "-o", "export", "--", dev)
	if err != nil && !(execx.KindOf(err) == execx.KindFailed && res.ExitCode == 2) {
		return Usage{}, err // exit 2 is blkid's "nothing found"
	}
	u.Signatures = mergeSignatures(u.Signatures, ParseBlkid(res.Stdout, dev))
	res, err = p.Runner.Run(ctx, "wipefs", "-n", "--", dev)
	if err != nil {
		return Usage{}, err
	}
	u.Signatures = mergeSignatures(u.Signatures, ParseWipefs(res.Stdout, dev))
	return u, nil
}

// probeDevice is the node the probe tools are pointed at.
func probeDevice(d disk.Identity) string {
	if d.Kernel != "" {
		return "/dev/" + d.Kernel
	}
	return d.ByID
}

// lsblkDev is one node of `lsblk -J`. SIZE is a number in new util-linux
// and a string in old, so it is kept raw.
type lsblkDev struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	FSType     *string         `json:"fstype"`
	Size       json.RawMessage `json:"size"`
	Mountpoint *string         `json:"mountpoint"`
	Children   []lsblkDev      `json:"children"`
}

// ParseLsblk reads `lsblk -J` output for one disk.
func ParseLsblk(b []byte) (Usage, error) {
	var doc struct {
		Blockdevices []lsblkDev `json:"blockdevices"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return Usage{}, fmt.Errorf("lsblk output: %w", err)
	}
	if len(doc.Blockdevices) == 0 {
		return Usage{}, errors.New("lsblk listed no device")
	}
	top := doc.Blockdevices[0]
	u := Usage{Type: top.Type}
	walkLsblk(top, true, &u)
	return u, nil
}

// walkLsblk records fstypes and mounts of every node and sorts children
// into partitions and holders.
func walkLsblk(d lsblkDev, top bool, u *Usage) {
	if d.FSType != nil && *d.FSType != "" {
		u.Signatures = append(u.Signatures, Signature{Device: d.Name, Type: *d.FSType})
	}
	if d.Mountpoint != nil && *d.Mountpoint != "" {
		u.Mounts = append(u.Mounts, *d.Mountpoint)
	}
	if !top {
		if d.Type == "part" {
			u.Partitions = append(u.Partitions, d.Name)
		} else {
			u.Holders = append(u.Holders, d.Name+" ("+d.Type+")")
		}
	}
	for _, c := range d.Children {
		walkLsblk(c, false, u)
	}
}

// ParseBlkid reads `blkid -p -o export` (KEY=value lines).
func ParseBlkid(b []byte, dev string) []Signature {
	var out []Signature
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && (k == "TYPE" || k == "PTTYPE") && v != "" {
			out = append(out, Signature{Device: dev, Type: v})
		}
	}
	return out
}

// ParseWipefs reads `wipefs -n` in either of its layouts: the table of
// util-linux ≥ 2.29 (DEVICE OFFSET TYPE UUID LABEL) or the older
// "offset type" list. Only the type is kept.
func ParseWipefs(b []byte, dev string) []Signature {
	var out []Signature
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && strings.HasPrefix(f[1], "0x"):
			out = append(out, Signature{Device: f[0], Type: f[2]})
		case len(f) >= 2 && strings.HasPrefix(f[0], "0x"):
			out = append(out, Signature{Device: dev, Type: f[1]})
		}
	}
	return out
}

// mergeSignatures appends the types of b not already in a.
func mergeSignatures(a, b []Signature) []Signature {
	seen := map[string]bool{}
	for _, s := range a {
		seen[s.Type] = true
	}
	for _, s := range b {
		if !seen[s.Type] {
			seen[s.Type] = true
			a = append(a, s)
		}
	}
	return a
}
