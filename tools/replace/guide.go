// Package replace guides a person through replacing a failing disk of a ZFS
// pool: a written guide generated from live state for every disk alert
// (Guide, GuideSteps), the choice of a safe new disk (Candidates), and the
// interactive `zwatch replace` that runs `zpool replace` and follows the
// resilver (Run).
//
// The commands it prints are meant to be pasted: every name is quoted for
// a POSIX shell, and the old device is named the one way zpool is sure to
// accept in the situation at hand (see docs/replacement.md).
package replace

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/internal/units"

	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
)

// Placeholders stand for names only the person can know. They are left
// unquoted on purpose: pasted as they are, the shell stops at the < with a
// syntax error instead of running a half-right command.
const (
	NewDiskPlaceholder      = "/dev/disk/by-id/<new-disk-id>"
	NewPartitionPlaceholder = "<new-partition>"
)

// Step is one step of a replacement, for rendering as text or HTML.
type Step struct {
	Title string `json:"title"`
	// Explanation says what and why; it may hold several lines.
	Explanation string `json:"explanation"`
	// Command is a complete shell command with every name quoted, or ""
	// when the step is done by hand.
	Command string `json:"command,omitempty"`
	// More are further complete commands for the step, in order.
	More []string `json:"more,omitempty"`
}

// Bay says whether the new disk can be attached beside the old one.
type Bay int

const (
	BayUnknown Bay = iota // the guide explains both ways
	BayFree               // a free port or bay exists
	BayNone               // the old disk must come out to make room
)

// GuideOptions carries what live state alone does not tell.
type GuideOptions struct {
	// Ledctl is true when ledctl (package ledmon) is installed, so the
	// guide can offer to light the bay's locate LED.
	Ledctl bool
	// FreeBay says whether a free port exists for the new disk.
	FreeBay Bay
	// New is the new disk when it is already chosen and checked by
	// Candidates (zwatch replace); it implies a free port.
	New *disk.Identity
}

// Guide is the plain-text replacement guide for a disk alert, as put in the
// email body; "" when the alert is not about a replaceable disk.
func Guide(a alert.Alert) string {
	return GuideWith(a, GuideOptions{})
}

// GuideWith is Guide with what the caller knows beyond the alert.
func GuideWith(a alert.Alert, o GuideOptions) string {
	if pool, devices, ok := suspendedPool(a); ok {
		head := fmt.Sprintf("Bringing pool %s back from SUSPENDED", pool)
		if a.Summary != "" {
			head += "\n" + a.Summary
		}
		return FormatSteps(head, SuspendedSteps(pool, devices))
	}
	steps := GuideSteps(a, o)
	if len(steps) == 0 {
		return ""
	}
	r := a.Replacement
	p := planFor(r)
	head := fmt.Sprintf("Replacing %s in pool %s", p.shown, r.Pool)
	if zfs.IsInteriorName(r.TopVdev) {
		head += " (" + r.TopVdev + ")"
	}
	if a.Summary != "" {
		head += "\n" + a.Summary
	}
	return FormatSteps(head, steps)
}

// plan is what the guide decides from the alert's replacement context.
type plan struct {
	pool     string
	shown    string // the device as zpool status shows it
	oldArg   string // what to give zpool replace/offline as the old device
	byGUID   bool
	absent   bool
	offline  bool // already OFFLINE
	handPart bool
	freeBSD  bool
	was      string
	state    string
	id       *disk.Identity
}

// planFor decides how to name the old device. A device that is gone (state
// REMOVED or UNAVAIL, or listed by GUID with "was ...") is named by its
// GUID: zpool looks a GUID up directly, while a path must be re-expanded
// and matched (and a whole disk's ".../X-part1" never matches, since zpool
// appends -part1 itself). A present device is named as zpool shows it.
func planFor(r *alert.Replacement) plan {
	p := plan{pool: r.Pool, state: r.VdevState, id: r.Disk}
	path := strutil.FirstNonEmpty(r.VdevPath, r.Was)
	guid := r.VdevGUID
	if guid == "" && isGUID(r.VdevPath) {
		guid, path = r.VdevPath, r.Was
	}
	p.absent = isAbsentState(r.VdevState) || r.Was != ""
	p.offline = r.VdevState == zfs.StateOffline
	p.handPart = handPartitioned(path)
	p.freeBSD = isFreeBSDName(path)
	p.was = r.Was
	p.shown = shownName(path)
	if p.shown == "" {
		p.shown = guid
	}
	p.oldArg = p.shown
	if p.absent && guid != "" {
		p.oldArg, p.byGUID = guid, true
		if r.Was != "" || p.shown == "" {
			p.shown = guid
		}
	}
	if p.id == nil {
		p.id = identityFromName(path)
	}
	return p
}

// identityFromName describes a disk from a serial-bearing by-id name alone,
// for a disk that is gone and was never seen by discovery.
func identityFromName(path string) *disk.Identity {
	key := wholeDiskKey(path)
	serial := serialOfByID(key)
	if serial == "" {
		return nil
	}
	return &disk.Identity{Serial: serial, Model: modelOfByID(key), ByID: disk.ByIDDir + "/" + key, Absent: true}
}

// GuideSteps is the replacement guide for a disk alert as steps; nil when
// the alert carries no replacement context.
func GuideSteps(a alert.Alert, o GuideOptions) []Step {
	if pool, devices, ok := suspendedPool(a); ok {
		return SuspendedSteps(pool, devices)
	}
	r := a.Replacement
	if r == nil || r.Pool == "" || (r.VdevPath == "" && r.VdevGUID == "" && r.Was == "") {
		return nil
	}
	p := planFor(r)
	if o.New != nil && o.FreeBay == BayUnknown {
		o.FreeBay = BayFree // the new disk is already connected beside the old
	}
	var steps []Step
	if writes, ok := writesFailing(a); ok {
		steps = append(steps, attachedStep(p, writes))
	}
	steps = append(steps, findOldStep(p, o))
	steps = append(steps, offlineStep(p, r.Margin, o))
	steps = append(steps, findNewStep(p, r, o)...)
	steps = append(steps, replaceStep(p, o), watchStep(p), scrubStep(p))
	return steps
}

// findOldStep identifies the disk to pull, by stable names first: kernel
// names move between boots.
func findOldStep(p plan, o GuideOptions) Step {
	s := Step{Title: "Find the failing disk"}
	var b strings.Builder
	fmt.Fprintf(&b, "zpool status shows %s as %s", p.shown, strutil.FirstNonEmpty(p.state, "failing"))
	if p.was != "" {
		fmt.Fprintf(&b, " (was %s)", p.was)
	}
	b.WriteString(".")
	if p.id != nil {
		b.WriteString(identityLines(*p.id, p.absent))
	}
	switch {
	case p.absent:
		b.WriteString("\nThe system no longer sees this disk, so its bay LED cannot be lit. Find it by the serial printed on its label, or light the bays of the remaining members and take the one that stays dark.")
	case p.freeBSD:
		b.WriteString("\nMatch the serial with the label on the disk (`geom disk list` shows each disk's serial as ident; in an SES enclosure `sesutil locate DISK on` lights its bay).")
	case p.id != nil && p.id.ByID != "" && o.Ledctl:
		b.WriteString("\nLight its bay's locate LED, and switch it off once the disk is out:")
		s.Command = ShellCommand("ledctl", "locate="+p.id.ByID)
		s.More = []string{ShellCommand("ledctl", "locate_off="+p.id.ByID)}
	default:
		b.WriteString("\nMatch the serial with the label on the disk. (With ledctl from the ledmon package, zwatch can light the bay's locate LED.)")
	}
	s.Explanation = b.String()
	return s
}

// identityLines lists what is known of a disk, one fact a line.
func identityLines(id disk.Identity, absent bool) string {
	var b strings.Builder
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "\n  %-8s %s", k+":", v)
		}
	}
	line("by-id", id.ByID)
	line("serial", id.Serial)
	line("model", id.Model)
	if id.SizeBytes > 0 {
		line("size", fmt.Sprintf("%s (%d bytes)", units.Decimal(id.SizeBytes), id.SizeBytes))
	}
	line("WWN", id.WWN)
	if id.Kernel != "" && !absent && !id.Absent {
		line("now", "/dev/"+id.Kernel+" (kernel names change between boots; trust the serial)")
	}
	return b.String()
}

// offlineStep decides whether to offline the old disk. A disk that still
// works keeps its share of redundancy while it stays in the pool, so with a
// free port it is replaced in place; it is offlined only to free its bay.
func offlineStep(p plan, margin *int, o GuideOptions) Step {
	offline := ShellCommand("zpool", "offline", p.pool, p.oldArg)
	// A disk that is ONLINE or DEGRADED still serves reads; when the vdev has
	// no margin left, it is the redundancy.
	serving := p.state == zfs.StateOnline || p.state == zfs.StateDegraded
	noSpare := serving && margin != nil && *margin <= 0
	switch {
	case p.absent:
		return Step{Title: "No need to take it offline",
			Explanation: fmt.Sprintf("The device is already gone from the pool (%s), so there is nothing to offline. Remove it and put the new disk in its bay, or in any free bay.", p.state)}
	case p.offline:
		return Step{Title: "It is already offline",
			Explanation: "The disk is already OFFLINE: ZFS no longer uses it. Pull it when ready and put the new disk in its bay, or use a free bay."}
	case noSpare:
		return Step{Title: "Keep the old disk connected",
			Explanation: "This vdev has no redundancy to spare, and the old disk still serves reads: with it out, one more error before the resilver ends could lose data. Connect the new disk to a free port — a temporary USB or eSATA adapter will do — and replace the old disk while it is still attached."}
	case o.FreeBay == BayFree:
		return Step{Title: "Keep the old disk connected",
			Explanation: "The old disk still works and a free port exists: connect the new disk there and replace the old one while it is attached. Its data still counts toward redundancy during the resilver. Do not offline it; ZFS detaches it when the resilver completes, then pull it."}
	case o.FreeBay == BayNone:
		return Step{Title: "Take the old disk offline, then swap it",
			Explanation: "There is no free port, so the old disk must come out to make room. Offline it first so ZFS stops using it cleanly, then pull it and insert the new disk in its bay. Until the resilver ends the vdev runs without that disk's redundancy.",
			Command:     offline}
	}
	return Step{Title: "Offline the old disk only if it must come out first",
		Explanation: "If a free port or bay exists, leave the old disk attached and skip this step: while attached it still counts toward redundancy during the resilver, and ZFS detaches it when the resilver completes.\nIf it must be pulled to free its bay, offline it first, then pull it and insert the new disk:",
		Command:     offline}
}

// findNewStep tells how to find the new disk's stable name, and how to
// clear an old label if the disk was used before.
func findNewStep(p plan, r *alert.Replacement, o GuideOptions) []Step {
	zw := ShellCommand("zwatch", "replace", p.pool, p.oldArg)
	if o.New != nil {
		return []Step{{Title: "The new disk",
			Explanation: "Use this disk, checked to be a whole, empty disk in no pool and large enough:" + identityLines(*o.New, false)}}
	}
	need := "at least as large as the disk it replaces"
	if r.Disk != nil && r.Disk.SizeBytes > 0 {
		need = fmt.Sprintf("at least %s (%d bytes)", units.Decimal(r.Disk.SizeBytes), r.Disk.SizeBytes)
	}
	if p.freeBSD {
		return []Step{{Title: "Find the new disk's name",
			Explanation: "Connect the new disk. It must be " + need + " and in no pool. Find it by the serial printed on its label (ident in `geom disk list`), then partition it like a healthy member (see the next step).",
			Command:     "geom disk list",
			More:        []string{"camcontrol devlist"}},
			{Title: "Only if the new disk was in a ZFS pool before: clear its old label",
				Explanation: "zpool replace refuses a device that carries another pool's label. If that pool is gone for good and nothing on the disk is needed, clear the label on the new partition. This destroys the ZFS label: the old pool can no longer be imported from this disk.",
				Command:     "zpool labelclear -f /dev/" + NewPartitionPlaceholder}}
	}
	find := Step{Title: "Find the new disk's name",
		Explanation: "Connect the new disk. It must be " + need + ", with no partitions and in no pool. Its by-id name is the one ending in the serial printed on its label (ignore the -partN and wwn- entries). `" + zw + "` lists the disks that qualify and checks them for you.",
		Command:     "ls -l /dev/disk/by-id/ | grep -v part",
		More:        []string{"lsblk -o NAME,SIZE,MODEL,SERIAL", zw}}
	clear := Step{Title: "Only if the new disk was in a ZFS pool before: clear its old label",
		Explanation: "zpool replace refuses a disk that carries another pool's label. If that pool is gone for good and nothing on the disk is needed, clear the label. This destroys the ZFS label: the old pool can no longer be imported from this disk. For a disk ZFS partitioned itself the label is on -part1 (`lsblk -f` shows zfs_member); then remove the partition table:",
		Command:     "zpool labelclear -f " + NewDiskPlaceholder + "-part1",
		More:        []string{"wipefs -a " + NewDiskPlaceholder}}
	return []Step{find, clear}
}

// replaceStep is the zpool replace command itself.
func replaceStep(p plan, o GuideOptions) Step {
	newDev := NewDiskPlaceholder
	if o.New != nil {
		newDev = ShellQuote(devicePath(*o.New))
	}
	var why []string
	if p.byGUID {
		why = append(why, "The old device is named by its GUID because it is gone: zpool finds a GUID directly, while a path must match its configuration exactly, and for a whole disk zpool appends the partition suffix itself, so the recorded (was) path does not match.")
	} else {
		why = append(why, "The old device is named as zpool status shows it.")
	}
	if isKernelName(p.oldArg) {
		why = append(why, "That is a kernel name, and kernel names move when disks are added or at boot: check with `zpool status` that it still names the failing disk right before running this, and do not reboot in between.")
	}
	if p.handPart {
		why = append(why, "The old device is a partition made by hand, not a whole disk: partition the new disk like a healthy member first (Linux: `sgdisk -R NEW HEALTHY` then `sgdisk -G NEW`; FreeBSD: `gpart backup HEALTHY | gpart restore -F NEW`), then give zpool the matching partition in place of the new disk's name.")
		if o.New == nil {
			newDev = NewPartitionPlaceholder
		}
	} else {
		why = append(why, "The new disk is given whole, by its by-id name, which survives reboots: ZFS partitions it itself.")
	}
	why = append(why, "The resilver starts at once; the old device is detached automatically when it completes.")
	return Step{Title: "Replace it",
		Explanation: strings.Join(why, " "),
		Command:     ShellCommand("zpool", "replace", p.pool, p.oldArg) + " " + newDev}
}

func watchStep(p plan) Step {
	return Step{Title: "Watch the resilver",
		Explanation: "The new disk is listed under replacing-N with (resilvering) until the resilver completes; then the old device disappears from the list. `zwatch replace` follows it with a progress bar.",
		Command:     ShellCommand("zpool", "status", "-v", p.pool)}
}

func scrubStep(p plan) Step {
	return Step{Title: "Scrub once the resilver has finished",
		Explanation: "A scrub reads every block back and checks it against its checksum, the new disk included.",
		Command:     ShellCommand("zpool", "scrub", p.pool)}
}

// FormatSteps renders steps as plain text under a heading: numbered steps,
// explanations wrapped at 76 columns, commands on their own lines, indented
// and never wrapped so they paste whole.
func FormatSteps(heading string, steps []Step) string {
	var b strings.Builder
	if heading != "" {
		b.WriteString(heading + "\n\n")
	}
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s.Title)
		for _, l := range strings.Split(s.Explanation, "\n") {
			if strings.HasPrefix(l, "  ") {
				b.WriteString("   " + l + "\n") // a fact line, kept as is
				continue
			}
			for _, w := range wrap(l, 73) {
				b.WriteString("   " + w + "\n")
			}
		}
		for _, c := range append([]string{s.Command}, s.More...) {
			if c != "" {
				b.WriteString("\n       " + c + "\n")
			}
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// wrap breaks s into lines of at most width runes at spaces; a longer word
// gets a line of its own.
func wrap(s string, width int) []string {
	words := strings.Fields(s)
	if len(words) == 0 {
		return nil
	}
	var lines []string
	cur := words[0]
	for _, w := range words[1:] {
		if len([]rune(cur))+1+len([]rune(w)) > width {
			lines = append(lines, cur)
			cur = w
			continue
		}
		cur += " " + w
	}
	return append(lines, cur)
}

// ReplacementFor builds the replacement context of an alert from live
// state: leaf of pool p, and the disk behind it when known.
func ReplacementFor(p *zfs.Pool, leaf *zfs.Vdev, id *disk.Identity) alert.Replacement {
	r := alert.Replacement{Pool: p.Name, VdevPath: leaf.Name, VdevGUID: leaf.GUID,
		VdevState: leaf.State, Was: leaf.Was, Disk: id}
	if isGUID(leaf.Name) {
		r.VdevGUID = leaf.Name
		r.VdevPath = strutil.FirstNonEmpty(leaf.Was, leaf.Path)
	}
	if top := topVdevOf(p, leaf); top != nil {
		r.TopVdev = top.Name
		m := margin(top)
		r.Margin = &m
	}
	return r
}

// margin is how many more member failures top survives: mirrors lose all
// but one side, raidz and draid their parity; a replacing or spare group
// still resilvering counts as failed.
func margin(top *zfs.Vdev) int {
	healthy, failed := 0, 0
	for _, c := range top.Children {
		if c.State == zfs.StateOnline {
			healthy++
		} else {
			failed++
		}
	}
	var m int
	switch top.Type {
	case zfs.VdevMirror:
		m = healthy - 1
	case zfs.VdevRaidz, zfs.VdevDraid:
		m = top.Parity - failed
	default:
		m = 0
	}
	return max(m, 0)
}

// suspendedPool tells an alert about a SUSPENDED pool (PoolSuspended, or a
// disk alert raised while its pool was suspended), with the devices to
// bring back.
func suspendedPool(a alert.Alert) (pool string, devices []string, ok bool) {
	if r := a.Replacement; r != nil && r.PoolState == zfs.StateSuspended && r.Pool != "" {
		if d := strutil.FirstNonEmpty(r.VdevPath, r.Was); d != "" && !isGUID(d) {
			devices = []string{d}
		}
		return r.Pool, devices, true
	}
	if a.Evidence["pool_state"] == zfs.StateSuspended && a.Labels["pool"] != "" {
		// "sdc UNAVAIL, sdd" (PoolState lists each device with its state)
		for _, d := range strings.Split(a.Evidence["devices"], ",") {
			if f := strings.Fields(d); len(f) > 0 {
				devices = append(devices, f[0])
			}
		}
		return a.Labels["pool"], devices, true
	}
	return "", nil, false
}

// SuspendedSteps is what a suspended pool needs: its device back, then
// zpool clear, then a look at what did not reach the disk. Replacing the
// disk is the wrong advice here: ZFS waits for that very device, and a
// pool without redundancy cannot rebuild onto another.
func SuspendedSteps(pool string, devices []string) []Step {
	what := "the device it lost"
	if len(devices) > 0 {
		what = strings.Join(devices, ", ")
	}
	return []Step{
		{Title: "Reconnect the device",
			Explanation: fmt.Sprintf("ZFS suspended pool %s because %s went away: I/O to the pool waits (failmode=wait) or fails (failmode=continue) until it is back. Do not replace or pull anything else. Check the disk's cable, power and enclosure; `dmesg` says when it dropped. Once it is back it is listed again:", pool, what),
			Command:     "ls -l /dev/disk/by-id/",
			More:        []string{"dmesg -T | tail -n 50"}},
		{Title: "Resume the pool",
			Explanation: "zpool clear retries the I/O that was waiting. If the device is still missing it fails and the pool stays SUSPENDED: go back to step 1.",
			Command:     ShellCommand("zpool", "clear", pool)},
		{Title: "Check what was lost",
			Explanation: "The writes that failed while the device was away show as errors. zpool status -v lists any file with a permanent error: restore those from backup. Counters from the outage alone clear once a scrub finds the data good.",
			Command:     ShellCommand("zpool", "status", "-v", pool)},
		{Title: "Scrub",
			Explanation: "A scrub reads every block back and checks it, so errors that were only the outage disappear and real damage is named.",
			Command:     ShellCommand("zpool", "scrub", pool)},
		{Title: "If the device cannot come back",
			Explanation: "A suspended pool cannot be exported and its waiting writes cannot be cancelled; rebooting the machine ends them (the writes are lost). If the pool has redundancy, import it after the reboot and replace the device (`zwatch replace`); without redundancy, restore it from backup."},
	}
}
