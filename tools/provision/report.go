package provision

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Report is the plan as data, for `zwatch provision --json`
// (docs/json.md): the disks, every check, the layout, the steps --apply
// would take, each as an argv and as the line to copy, and the config that
// watches the pool. For a pool that exists it is the comparison instead.
// Making it changes nothing.
type Report struct {
	Pool string `json:"pool"`
	// Exists: the pool is imported; Differences and Steps compare it with
	// the plan, and nothing on its disks was checked.
	Exists bool `json:"exists"`
	// Ready: --apply would run Steps (no check failed; for a pool that
	// exists, its layout matches).
	Ready  bool          `json:"ready"`
	Disks  []DiskInfo    `json:"disks"`
	Checks []CheckResult `json:"checks"`
	// Layout is the layout in words: "raidz2 of 6 × 4 TB: 16 TB usable, …".
	Layout string       `json:"layout"`
	Steps  []StepReport `json:"steps"`
	// WatchConfig is the zwatch config that watches the new pool (YAML).
	WatchConfig string `json:"watch_config,omitempty"`
	// AlreadyProvisioned: the pool exists and matches the plan.
	AlreadyProvisioned bool `json:"already_provisioned"`
	// Differences between an existing pool and the plan, in words.
	Differences []string `json:"differences"`
	// LayoutDiffers: the pool's vdevs are not the plan's; zwatch never
	// reshapes or destroys a pool, so Steps only cover the datasets.
	LayoutDiffers bool `json:"layout_differs"`
}

// StepReport is one step of the plan.
type StepReport struct {
	Why string `json:"why,omitempty"`
	// Argv is the command; empty for a file the step writes.
	Argv []string `json:"argv,omitempty"`
	// Command is the step as a person types it: the quoted command line,
	// or for a file an install command with the content.
	Command string      `json:"command"`
	File    *FileReport `json:"file,omitempty"`
	// Undo says how to reverse the step after a failure half way.
	Undo string `json:"undo,omitempty"`
	// Secret: the step carries what the person types at --apply (a
	// passphrase), never part of a plan.
	Secret bool `json:"secret,omitempty"`
}

// FileReport is a file a step writes.
type FileReport struct {
	Path    string `json:"path"`
	Mode    string `json:"mode"` // octal, e.g. 0644
	Content string `json:"content,omitempty"`
}

// PlanReport inspects opts.Plan on opts.Host as Run does without --apply,
// and returns the plan as data. Its error is Run's for the same plan:
// ErrChecksFailed when a check failed, ErrDiffers when an existing pool has
// another layout, with the report filled in as far as it goes.
func PlanReport(ctx context.Context, opts Options) (*Report, error) {
	switch {
	case opts.Plan == nil:
		return nil, errors.New("provision: no plan")
	case opts.Host == nil:
		return nil, errors.New("provision: no host")
	case opts.Apply:
		return nil, errors.New("provision: a report is the plan; it applies nothing")
	}
	in, err := Inspect(ctx, opts.Host, opts.Plan, InspectOptions{Wipe: opts.Wipe})
	if err != nil {
		return nil, err
	}
	rep := &Report{Pool: opts.Plan.Pool, Exists: in.Exists, Disks: in.Disks, Checks: in.Checks, Layout: in.Summary,
		Steps: []StepReport{}, Differences: []string{}}
	if rep.Disks == nil {
		rep.Disks = []DiskInfo{}
	}
	if rep.Checks == nil {
		rep.Checks = []CheckResult{}
	}
	if in.Exists {
		r := &runner{ctx: ctx, opts: opts, out: io.Discard}
		c, err := r.compare()
		if err != nil {
			return rep, err
		}
		rep.AlreadyProvisioned = len(c.Layout) == 0
		rep.LayoutDiffers = !rep.AlreadyProvisioned
		rep.Ready = rep.AlreadyProvisioned
		rep.Differences = append(append(append(rep.Differences, c.Notes...), c.Layout...), c.Properties...)
		rep.Steps = stepReports(c.Fixes)
		if rep.LayoutDiffers {
			return rep, ErrDiffers
		}
		return rep, nil
	}
	if in.Plan == nil {
		return rep, ErrChecksFailed
	}
	rep.Steps = stepReports(Steps(in.Plan))
	rep.WatchConfig = WatchStanza(in.Plan)
	rep.Ready = !in.Failed()
	if !rep.Ready {
		return rep, ErrChecksFailed
	}
	return rep, nil
}

func stepReports(steps []Step) []StepReport {
	out := make([]StepReport, 0, len(steps))
	for _, s := range steps {
		sr := StepReport{Why: s.Why, Argv: s.Argv, Command: s.String(), Undo: s.Undo, Secret: s.Secret}
		if f := s.File; f != nil {
			sr.File = &FileReport{Path: f.Path, Mode: fmt.Sprintf("%04o", f.Mode)}
			if !s.Secret {
				sr.File.Content = string(f.Content)
			}
		}
		out = append(out, sr)
	}
	return out
}
