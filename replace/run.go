package replace

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/zwatch/zwatch/units"

	"github.com/schollz/progressbar/v3"

	"github.com/zwatch/zwatch/disk"
	"github.com/zwatch/zwatch/zfs"
)

// Errors Run returns for a person's decision or a refused disk, so the
// command line can tell them from failures.
var (
	ErrAborted = errors.New("replacement aborted; nothing was changed")
	ErrRefused = errors.New("refused")
	// ErrResilverStuck: the resilver ended but the old device is still
	// attached, which ZFS does when the resilver met errors.
	ErrResilverStuck = errors.New("resilver finished but the replacement did not complete")
)

// DefaultPoll is how often Run reads zpool status while a resilver runs.
const DefaultPoll = 5 * time.Second

// Options configure Run, the interactive `zwatch replace [POOL [OLD [NEW]]]`.
type Options struct {
	Pool string // pool of the failing device; "" to look in every pool
	Old  string // the device to replace: as zpool shows it, its GUID, by-id name or serial
	New  string // the new disk: by-id name or path, kernel name or serial
	// Yes answers every question with the proposed default (for scripts);
	// Run refuses when there is no single default.
	Yes bool
	// DryRun prints the commands and runs nothing.
	DryRun bool
	Out    io.Writer
	In     io.Reader
	// Runner runs zpool replace (execx.Runner live).
	Runner Runner
	Status StatusSource
	Disks  DiskSource
	Probe  Probe
	// Poll is the interval between status reads while following the
	// resilver; DefaultPoll when 0.
	Poll time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Ashift of the vdev when the caller knows it; else asked from Status
	// when it implements AshiftSource.
	Ashift int
}

// Run shows the failing devices, picks or checks the new disk, confirms,
// runs zpool replace and follows the resilver to its end.
func Run(ctx context.Context, o Options) error {
	r, err := newRun(o)
	if err != nil {
		return err
	}
	return r.run(ctx)
}

// run carries one invocation's state.
type run struct {
	Options
	in *bufio.Reader
}

func newRun(o Options) (*run, error) {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	switch {
	case o.Status == nil:
		return nil, errors.New("replace: no pool status source")
	case o.Disks == nil:
		return nil, errors.New("replace: no disk source")
	case o.Runner == nil && !o.DryRun:
		return nil, errors.New("replace: no command runner")
	}
	r := &run{Options: o}
	if o.In != nil {
		r.in = bufio.NewReader(o.In)
	}
	return r, nil
}

func (r *run) run(ctx context.Context) error {
	pools, err := r.Status.Status(ctx, "") // every pool: a new disk must be in none
	if err != nil {
		return fmt.Errorf("reading pool status: %w", err)
	}
	if r.Pool != "" {
		if _, err := findPool(pools, r.Pool); err != nil {
			return err
		}
	}
	failing := failingDevices(pools, r.Pool)
	r.showFailing(failing)
	old, err := r.chooseOld(pools, failing)
	if err != nil || old == nil {
		return err
	}
	if old.parent != nil && old.parent.Type == zfs.VdevReplacing {
		fmt.Fprintf(r.Out, "\n%s is already being replaced in pool %s; following the resilver.\n", old.leaf.Name, old.pool.Name)
		if r.DryRun {
			fmt.Fprintf(r.Out, "\n    %s\n", ShellCommand("zpool", "status", "-v", old.pool.Name))
			return nil
		}
		return r.followAndReport(ctx, old.pool.Name)
	}
	disks, err := r.Disks.Disks(ctx)
	if err != nil {
		return fmt.Errorf("listing disks: %w", err)
	}
	oldID, _ := diskOfLeaf(old.leaf, disks)
	var oldPtr *disk.Identity
	if oldID.Kernel != "" || oldID.Serial != "" {
		oldPtr = &oldID
	}
	t := TargetFor(old.pool, old.leaf, disks)
	t.Ashift = r.ashift(ctx, old.pool.Name)
	cands := Candidates(ctx, disks, pools, t, r.Probe)
	r.showCandidates(cands, t)
	nc, err := r.chooseNew(cands)
	if err != nil {
		return err
	}
	rep := ReplacementFor(old.pool, old.leaf, oldPtr)
	p := planFor(&rep)
	argv := []string{"replace", old.pool.Name, p.oldArg, nc.Device}
	fmt.Fprintf(r.Out, "\nThe command:\n\n    %s\n", ShellCommand(append([]string{"zpool"}, argv...)...))
	if r.DryRun {
		fmt.Fprintf(r.Out, "\nDry run: nothing was run. Afterwards, watch and verify with:\n\n    %s\n    %s\n",
			ShellCommand("zpool", "status", "-v", old.pool.Name), ShellCommand("zpool", "scrub", old.pool.Name))
		return nil
	}
	if err := r.confirm(fmt.Sprintf("Replace %s with %s in pool %s?", p.shown, nc.Device, old.pool.Name)); err != nil {
		return err
	}
	if _, err := r.Runner.Run(ctx, "zpool", argv...); err != nil {
		return fmt.Errorf("zpool replace failed: %w", err)
	}
	fmt.Fprintf(r.Out, "\nzpool replace started the resilver onto %s.\n", nc.Device)
	return r.followAndReport(ctx, old.pool.Name)
}

// ashift is the caller's value, else the pool's property when the status
// source can read it; 0 when unknown.
func (r *run) ashift(ctx context.Context, pool string) int {
	if r.Ashift > 0 {
		return r.Ashift
	}
	if a, ok := r.Status.(AshiftSource); ok {
		if n, err := a.Ashift(ctx, pool); err == nil {
			return n
		}
	}
	return 0
}

// device is one leaf of a pool with its context.
type device struct {
	pool   *zfs.Pool
	class  string
	top    *zfs.Vdev
	parent *zfs.Vdev
	leaf   *zfs.Vdev
}

// why says what zpool reports about the device.
func (d device) why() string {
	var parts []string
	parts = append(parts, d.leaf.State)
	if d.leaf.Was != "" {
		parts = append(parts, "was "+d.leaf.Was)
	}
	parts = append(parts, d.leaf.Notes...)
	if n := d.leaf.ReadErrors + d.leaf.WriteErrors + d.leaf.ChecksumErrors; n > 0 {
		parts = append(parts, fmt.Sprintf("errors read %d, write %d, checksum %d",
			d.leaf.ReadErrors, d.leaf.WriteErrors, d.leaf.ChecksumErrors))
	}
	if d.parent != nil && d.parent.Type == zfs.VdevReplacing {
		parts = append(parts, "being replaced ("+d.parent.Name+")")
	}
	return strings.Join(parts, ", ")
}

// allDevices lists every leaf of the data, special, dedup and log vdevs of
// the pools (pool "" for all). Cache and spare devices are not replaced
// with zpool replace.
func allDevices(pools []*zfs.Pool, pool string) []device {
	var out []device
	for _, p := range pools {
		if p == nil || (pool != "" && p.Name != pool) {
			continue
		}
		for _, cv := range p.AllVdevs() {
			if cv.Class == "cache" || cv.Class == "spares" {
				continue
			}
			walk(cv.Vdev, nil, func(leaf, parent *zfs.Vdev) {
				out = append(out, device{pool: p, class: cv.Class, top: cv.Vdev, parent: parent, leaf: leaf})
			})
		}
	}
	return out
}

func walk(v, parent *zfs.Vdev, fn func(leaf, parent *zfs.Vdev)) {
	if v.IsLeaf() {
		fn(v, parent)
		return
	}
	for _, c := range v.Children {
		walk(c, v, fn)
	}
}

// failingDevices are the leaves not ONLINE or with errors. The new half of
// a replacing pair (ONLINE, resilvering) is not failing.
func failingDevices(pools []*zfs.Pool, pool string) []device {
	var out []device
	for _, d := range allDevices(pools, pool) {
		l := d.leaf
		if l.State != zfs.StateOnline || l.ReadErrors+l.WriteErrors+l.ChecksumErrors > 0 {
			out = append(out, d)
		}
	}
	return out
}

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

// leafNamed reports whether name names leaf: as shown, by GUID, by path or
// was-path, by whole-disk by-id name, or by the serial in that name.
func leafNamed(leaf *zfs.Vdev, name string) bool {
	name = strings.TrimSpace(name)
	if name == "" {
		return false
	}
	if name == leaf.Name || name == leaf.GUID {
		return true
	}
	for _, p := range []string{leaf.Path, leaf.Was} {
		if p == "" {
			continue
		}
		if p == name || shownName(p) == shownName(name) || wholeDiskKey(p) == wholeDiskKey(name) {
			return true
		}
		if s := serialOfByID(p); s != "" && s == name {
			return true
		}
	}
	return serialOfByID(leaf.Name) == name
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
		fmt.Fprintf(r.Out, "  [%d] %s  %s  %s  %s  serial %s\n", i+1, firstNonEmpty(c.Device, d.Kernel),
			firstNonEmpty(d.Kernel, "-"), units.Decimal(d.SizeBytes), firstNonEmpty(d.Model, "-"), firstNonEmpty(d.Serial, "-"))
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
	name := firstNonEmpty(c.Device, d.Kernel)
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

// confirm asks a yes/no question; only an explicit yes goes on.
func (r *run) confirm(q string) error {
	if r.Yes {
		return nil
	}
	if r.in == nil {
		return errors.New("cannot ask for confirmation without input; use --yes to go ahead or --dry-run to see the commands")
	}
	fmt.Fprintf(r.Out, "\n%s [y/N] ", q)
	line, err := r.readLine()
	if err != nil {
		return err
	}
	if a := strings.ToLower(line); a == "y" || a == "yes" {
		return nil
	}
	fmt.Fprintln(r.Out, "Nothing was changed.")
	return ErrAborted
}

// pick asks for a number from 1 to n and returns its index.
func (r *run) pick(q string, n int) (int, error) {
	fmt.Fprintf(r.Out, "\n%s [1-%d] ", q, n)
	line, err := r.readLine()
	if err != nil {
		return 0, err
	}
	i, err := strconv.Atoi(line)
	if err != nil || i < 1 || i > n {
		fmt.Fprintln(r.Out, "Nothing was changed.")
		return 0, fmt.Errorf("%w: %q is not a number from 1 to %d", ErrAborted, line, n)
	}
	return i - 1, nil
}

func (r *run) readLine() (string, error) {
	line, err := r.in.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", fmt.Errorf("%w: no answer (input closed)", ErrAborted)
	}
	return strings.TrimSpace(line), nil
}

// followAndReport follows the resilver of pool, then prints the outcome
// and the scrub to run next.
func (r *run) followAndReport(ctx context.Context, pool string) error {
	start := r.Now()
	p, err := r.follow(ctx, pool)
	if err != nil {
		fmt.Fprintf(r.Out, "\nThe resilver goes on without zwatch; watch it with: %s\n", ShellCommand("zpool", "status", "-v", pool))
		return err
	}
	fmt.Fprintf(r.Out, "\nResilver finished (followed for %s). Pool %s is %s.\n", r.Now().Sub(start).Round(time.Second), p.Name, p.State)
	if t := strings.TrimSpace(p.Scan.Text); t != "" {
		fmt.Fprintf(r.Out, "  scan: %s\n", strings.ReplaceAll(t, "\n", "\n        "))
	}
	if p.Scan.Errors > 0 {
		fmt.Fprintf(r.Out, "The resilver met %d errors: check `zpool status -v %s`.\n", p.Scan.Errors, ShellQuote(p.Name))
	}
	fmt.Fprintf(r.Out, "Next, verify every block with a scrub:\n\n    %s\n", ShellCommand("zpool", "scrub", p.Name))
	return nil
}

// staleLimit is how many polls in a row may show a finished resilver with
// a replacing vdev still present before Run stops following: ZFS keeps the
// old device attached when the resilver met errors.
const staleLimit = 5

// follow polls the pool until no resilver runs and no replacing vdev is
// left, drawing a progress bar from the scan's own percent, rate and ETA.
func (r *run) follow(ctx context.Context, pool string) (*zfs.Pool, error) {
	bar := progressbar.NewOptions64(10000,
		progressbar.OptionSetWriter(r.Out),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionSetDescription("resilver"),
		progressbar.OptionShowDescriptionAtLineEnd(),
	)
	seen, stale := false, 0
	for {
		pools, err := r.Status.Status(ctx, pool)
		if err != nil {
			return nil, fmt.Errorf("reading pool status: %w", err)
		}
		p, err := findPool(pools, pool)
		if err != nil {
			return nil, err
		}
		running := p.Scan.Function == zfs.ScanResilver && p.Scan.State == zfs.ScanStateScanning
		replacing := hasReplacing(p)
		if running {
			seen = true
			_ = bar.Set64(int64(p.Scan.PercentDone * 100))
			bar.Describe(scanDetail(p.Scan))
		}
		switch {
		case !running && !replacing:
			bar.Describe("resilver complete")
			_ = bar.Finish()
			fmt.Fprintln(r.Out)
			return p, nil
		case !running && seen:
			if stale++; stale >= staleLimit {
				_ = bar.Exit()
				fmt.Fprintln(r.Out)
				return p, fmt.Errorf("%w in pool %s: the old device is still attached next to the new one (resilver errors: %d); see `zpool status -v %s`",
					ErrResilverStuck, p.Name, p.Scan.Errors, ShellQuote(p.Name))
			}
		default:
			stale = 0
		}
		if err := sleep(ctx, r.Poll); err != nil {
			_ = bar.Exit()
			return nil, err
		}
	}
}

// scanDetail is the bar's caption: zpool's own rate and estimate.
func scanDetail(s zfs.Scan) string {
	rate := "rate unknown"
	if s.RateBytes > 0 {
		rate = units.IEC(s.RateBytes) + "/s" // binary units, as zpool prints them
	}
	eta := "no estimate yet"
	if s.ETASeconds > 0 {
		eta = (time.Duration(s.ETASeconds) * time.Second).String() + " to go"
	}
	return fmt.Sprintf("%.2f%% resilvered, %s, %s", s.PercentDone, rate, eta)
}

// hasReplacing reports whether any vdev of p is a replacing group.
func hasReplacing(p *zfs.Pool) bool {
	for _, cv := range p.AllVdevs() {
		if hasType(cv.Vdev, zfs.VdevReplacing) {
			return true
		}
	}
	return false
}

func hasType(v *zfs.Vdev, typ string) bool {
	if v.Type == typ {
		return true
	}
	for _, c := range v.Children {
		if hasType(c, typ) {
			return true
		}
	}
	return false
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
