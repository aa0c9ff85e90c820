package replace

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
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
	// Plan, when set, receives what the run decided (--json).
	Plan *Plan
	// Progress, when set, is told each reading of the resilver it follows
	// (a replacement asked for from the phone reports it there).
	Progress func(zfs.Scan)
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
	if o.Plan != nil {
		*o.Plan = newPlan(o.Pool)
	}
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
	r.record(func(p *Plan) {
		for _, d := range failing {
			p.Failing = append(p.Failing, planDevice(d))
		}
	})
	old, err := r.chooseOld(pools, failing)
	if err != nil || old == nil {
		return err
	}
	r.record(func(p *Plan) { d := planDevice(*old); p.Old = &d })
	if old.parent != nil && old.parent.Type == zfs.VdevReplacing {
		fmt.Fprintf(r.Out, "\n%s is already being replaced in pool %s; following the resilver.\n", old.leaf.Name, old.pool.Name)
		r.record(func(p *Plan) {
			p.AlreadyReplacing = true
			p.Afterwards = append(p.Afterwards, newCommand("zpool", "status", "-v", old.pool.Name))
		})
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
	r.record(func(p *Plan) { p.MinSizeBytes, p.Candidates = t.MinSize, append(p.Candidates, cands...) })
	nc, err := r.chooseNew(cands)
	if nc.Device != "" || nc.Disk.Kernel != "" {
		r.record(func(p *Plan) { p.New = &nc })
	}
	if err != nil {
		return err
	}
	rep := ReplacementFor(old.pool, old.leaf, oldPtr)
	p := planFor(&rep)
	argv := []string{"replace", old.pool.Name, p.oldArg, nc.Device}
	fmt.Fprintf(r.Out, "\nThe command:\n\n    %s\n", ShellCommand(append([]string{"zpool"}, argv...)...))
	r.record(func(p *Plan) {
		p.Commands = append(p.Commands, newCommand(append([]string{"zpool"}, argv...)...))
		p.Afterwards = append(p.Afterwards, newCommand("zpool", "status", "-v", old.pool.Name), newCommand("zpool", "scrub", old.pool.Name))
	})
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
