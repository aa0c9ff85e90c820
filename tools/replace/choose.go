package replace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/internal/units"
	"github.com/zwatch/zwatch/model/zfs"
)

func (r *run) showFailing(failing []device) {
	if len(failing) == 0 {
		return
	}
	fmt.Fprintln(r.Out, "Failing devices:")
	for i, d := range failing {
		fmt.Fprintf(r.Out, "  [%d] pool %s, %s: %s — %s\n", i+1, d.pool.Name, d.top.Name, d.leaf.Name, d.why())
	}
}

// chooseOld settles the device to replace: the one named, else the only
// failing one, else the person's pick. A nil device with a nil error means
// there is nothing to do.
func (r *run) chooseOld(pools []*zfs.Pool, failing []device) (*device, error) {
	if r.Old != "" {
		return r.namedOld(pools)
	}
	switch len(failing) {
	case 0:
		where := "any pool"
		if r.Pool != "" {
			where = "pool " + r.Pool
		}
		fmt.Fprintf(r.Out, "No failing device in %s. To replace a healthy disk anyway, name it: zwatch replace POOL OLD\n", where)
		return nil, nil
	case 1:
		return &failing[0], nil
	}
	if r.Yes || r.in == nil {
		return nil, fmt.Errorf("%d failing devices: name the one to replace, e.g. %s",
			len(failing), ShellCommand("zwatch", "replace", failing[0].pool.Name, failing[0].leaf.Name))
	}
	i, err := r.pick("Which device to replace?", len(failing))
	if err != nil {
		return nil, err
	}
	return &failing[i], nil
}

// namedOld finds the device the person named, by any of its names.
func (r *run) namedOld(pools []*zfs.Pool) (*device, error) {
	for _, d := range allDevices(pools, r.Pool) {
		if leafNamed(d.leaf, r.Old) {
			return &d, nil
		}
	}
	where := "any pool"
	if r.Pool != "" {
		where = "pool " + r.Pool
	}
	return nil, fmt.Errorf("no device %q in %s: use a name from the NAME column of `zpool status`, or its GUID from `zpool status -g`", r.Old, where)
}

func (r *run) showCandidates(cands []Candidate, t Target) {
	need := "unknown (no member's size is known)"
	if t.MinSize > 0 {
		need = fmt.Sprintf("%s (%d bytes)", units.Decimal(t.MinSize), t.MinSize)
	}
	fmt.Fprintf(r.Out, "\nCandidate new disks (need at least %s):\n", need)
	if len(cands) == 0 {
		fmt.Fprintln(r.Out, "  none found: connect the new disk and run this again")
		return
	}
	for i, c := range cands {
		d := c.Disk
		fmt.Fprintf(r.Out, "  [%d] %s  %s  %s  %s  serial %s\n", i+1, strutil.FirstNonEmpty(c.Device, d.Kernel),
			strutil.FirstNonEmpty(d.Kernel, "-"), units.Decimal(d.SizeBytes), strutil.FirstNonEmpty(d.Model, "-"), strutil.FirstNonEmpty(d.Serial, "-"))
		if c.Usable {
			fmt.Fprintln(r.Out, "      usable")
		}
		for _, why := range c.Reasons {
			fmt.Fprintln(r.Out, "      refused: "+why.Text)
		}
		for _, w := range c.Warnings {
			fmt.Fprintln(r.Out, "      warning: "+w.Text)
		}
	}
}

// chooseNew settles the new disk: the one named (refused with the reason
// and the fix when unusable), else the only usable one, else the person's
// pick among the usable ones.
func (r *run) chooseNew(cands []Candidate) (Candidate, error) {
	if r.New != "" {
		for _, c := range cands {
			if matchesDiskName(r.New, c.Disk) {
				return c, refusal(c)
			}
		}
		return Candidate{}, fmt.Errorf("%w: no disk %q found: name it by its /dev/disk/by-id name, kernel name (sdX) or serial as `lsblk -o NAME,SIZE,MODEL,SERIAL` shows", ErrRefused, r.New)
	}
	var usable []Candidate
	for _, c := range cands {
		if c.Usable {
			usable = append(usable, c)
		}
	}
	switch {
	case len(usable) == 0:
		return Candidate{}, fmt.Errorf("%w: no usable new disk: connect a whole, empty disk at least as large as the old one (see the reasons above)", ErrRefused)
	case len(usable) == 1:
		return usable[0], nil
	case r.Yes || r.in == nil:
		return Candidate{}, fmt.Errorf("%d usable new disks: name the new one by its by-id name, kernel name or serial, e.g. %s", len(usable),
			ShellQuote(usable[0].Device))
	}
	i, err := r.pick("Which disk is the new one? (candidates 1 to "+strconv.Itoa(len(usable))+" are usable)", len(usable))
	if err != nil {
		return Candidate{}, err
	}
	return usable[i], nil
}

// refusal explains why c cannot be the new disk, nil when it can.
func refusal(c Candidate) error {
	if c.Usable {
		return nil
	}
	d := c.Disk
	name := strutil.FirstNonEmpty(c.Device, d.Kernel)
	if d.Serial != "" {
		name += " (serial " + d.Serial + ")"
	}
	texts, fixes := make([]string, 0, len(c.Reasons)), make([]string, 0, len(c.Reasons))
	for _, why := range c.Reasons {
		texts = append(texts, why.Text)
		if why.Fix != "" {
			fixes = append(fixes, why.Fix)
		}
	}
	msg := fmt.Sprintf("%s as the new disk: %s", name, strings.Join(texts, "; "))
	if len(fixes) > 0 {
		msg += ". Fix: " + strings.Join(fixes, "; ")
	}
	return fmt.Errorf("%w %s", ErrRefused, msg)
}
