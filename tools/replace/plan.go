package replace

// Plan is what a run decided, for `zwatch replace --dry-run --json`
// (docs/json.md): the failing devices, the one to replace, every disk
// considered with why it is refused or what to know, the new disk, and the
// commands, each as an argv and as one copy-paste line. Run fills it in as
// it goes, so a run that stops (a refused disk, nothing failing) still says
// how far it got.
type Plan struct {
	// Pool is the pool asked for; "" when every pool was looked at.
	Pool    string   `json:"pool"`
	Failing []Device `json:"failing"`
	// Old is the device to replace; null when none is failing (or several
	// are and none was named).
	Old *Device `json:"old"`
	// AlreadyReplacing: Old is being replaced already; the only command is
	// the one that follows the resilver.
	AlreadyReplacing bool `json:"already_replacing"`
	// MinSizeBytes is what the new disk needs at least; 0 when unknown.
	MinSizeBytes uint64 `json:"min_size_bytes"`
	// Candidates are the disks considered, usable ones first, each with
	// the checks it failed (reasons) and the warnings.
	Candidates []Candidate `json:"candidates"`
	// New is the disk chosen or named; with usable false when it was
	// refused (its reasons say why).
	New *Candidate `json:"new"`
	// Commands are what a run without --dry-run runs, in order.
	Commands []Command `json:"commands"`
	// Afterwards are the commands that watch the resilver and verify.
	Afterwards []Command `json:"afterwards"`
}

// Device is a pool member as zpool status shows it.
type Device struct {
	Pool string `json:"pool"`
	// Vdev is its top-level vdev (raidz2-0, mirror-1).
	Vdev string `json:"vdev"`
	// Name is as zpool status prints it (by-id name, or the GUID of a
	// device that is gone).
	Name  string `json:"name"`
	GUID  string `json:"guid,omitempty"`
	State string `json:"state"`
	// Why is what zpool reports: state, errors, notes.
	Why string `json:"why"`
}

// Command is one command line.
type Command struct {
	Argv []string `json:"argv"`
	// Shell is Argv quoted for a POSIX shell, to copy and paste.
	Shell string `json:"shell"`
}

func newCommand(argv ...string) Command {
	return Command{Argv: argv, Shell: ShellCommand(argv...)}
}

// newPlan is a plan with empty lists rather than nulls.
func newPlan(pool string) Plan {
	return Plan{Pool: pool, Failing: []Device{}, Candidates: []Candidate{}, Commands: []Command{}, Afterwards: []Command{}}
}

func planDevice(d device) Device {
	return Device{Pool: d.pool.Name, Vdev: d.top.Name, Name: d.leaf.Name, GUID: d.leaf.GUID, State: d.leaf.State, Why: d.why()}
}

// record runs f on the plan when the caller asked for one.
func (r *run) record(f func(p *Plan)) {
	if r.Plan != nil {
		f(r.Plan)
	}
}
