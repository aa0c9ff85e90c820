package replace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

// decodePlan encodes the plan as `zwatch replace --json` prints it and
// reads it back, so the tests see what a script sees.
func decodePlan(t *testing.T, p Plan) Plan {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Plan
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// The dry-run plan of tresor1's real failure: the device by GUID, the
// candidates with the checks they failed, the Seagate chosen, and the
// command exactly as the owner ran it, as argv and as a line.
func TestDryRunPlan(t *testing.T) {
	var plan Plan
	var out bytes.Buffer
	o := tresorOptions(t, &out, nil)
	o.DryRun, o.Plan = true, &plan
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	p := decodePlan(t, plan)
	if len(p.Failing) != 1 || p.Old == nil || *p.Old != p.Failing[0] {
		t.Fatalf("failing %+v, old %+v", p.Failing, p.Old)
	}
	old := *p.Old
	if old.Pool != "tresor1" || old.Name != "6544112441320430488" || old.State != "UNAVAIL" ||
		old.Why != "UNAVAIL, was /dev/disk/by-id/ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104-part1" {
		t.Errorf("old %+v", old)
	}
	if p.MinSizeBytes != tresorSurvivor.SizeBytes || len(p.Candidates) != 3 || p.AlreadyReplacing {
		t.Errorf("plan %+v", p)
	}
	byKernel := map[string]Candidate{}
	for _, c := range p.Candidates {
		byKernel[c.Disk.Kernel] = c
	}
	if c := byKernel["sda"]; c.Usable || len(c.Reasons) == 0 || c.Reasons[0].Code != CodeInPool || c.Reasons[0].Fix == "" {
		t.Errorf("the surviving mirror member: %+v", c)
	}
	if c := byKernel["sdc"]; c.Usable || !slices.ContainsFunc(c.Reasons, func(r Reason) bool { return r.Code == CodeMounted }) {
		t.Errorf("the boot disk: %+v", c)
	}
	if p.New == nil || !p.New.Usable || p.New.Device != tresorNew.ByID || p.New.Disk.Serial != "ZR12E9YV" {
		t.Fatalf("new %+v", p.New)
	}
	want := []string{"zpool", "replace", "tresor1", "6544112441320430488", tresorNew.ByID}
	if len(p.Commands) != 1 || !slices.Equal(p.Commands[0].Argv, want) || p.Commands[0].Shell != tresorReplace {
		t.Errorf("commands %+v", p.Commands)
	}
	if len(p.Afterwards) != 2 || p.Afterwards[0].Shell != "zpool status -v tresor1" || !slices.Equal(p.Afterwards[1].Argv, []string{"zpool", "scrub", "tresor1"}) {
		t.Errorf("afterwards %+v", p.Afterwards)
	}
}

// Refused: the named disk is in the plan as new, unusable, with its
// reasons, and there is no command.
func TestDryRunPlanRefused(t *testing.T) {
	var plan Plan
	var out bytes.Buffer
	o := tresorOptions(t, &out, nil)
	o.DryRun, o.Plan, o.New = true, &plan, "sdc"
	if err := Run(context.Background(), o); !errors.Is(err, ErrRefused) {
		t.Fatalf("err %v", err)
	}
	p := decodePlan(t, plan)
	if p.New == nil || p.New.Usable || p.New.Disk.Kernel != "sdc" || len(p.New.Reasons) == 0 || len(p.Commands) != 0 {
		t.Errorf("plan %+v", p)
	}
}

// Quoting: a name a shell would split is one quoted word in Shell and one
// element in Argv.
func TestCommandQuoting(t *testing.T) {
	c := newCommand("zpool", "replace", "my pool", "it's")
	if c.Shell != `zpool replace 'my pool' 'it'\''s'` || len(c.Argv) != 4 {
		t.Errorf("%+v", c)
	}
}

// Already being replaced: only the command that follows the resilver.
func TestDryRunPlanAlreadyReplacing(t *testing.T) {
	var plan Plan
	o := Options{DryRun: true, Plan: &plan, Pool: "upool", Old: "gpt/usb0",
		Status: statusSeq(t, "freebsd-raidz1-replacing-removed-resilver-in-progress.txt"),
		Disks:  fixedDisks{}, Probe: fakeProbe{}}
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	p := decodePlan(t, plan)
	if !p.AlreadyReplacing || p.Old == nil || len(p.Commands) != 0 || len(p.Afterwards) != 1 || p.Afterwards[0].Shell != "zpool status -v upool" {
		t.Errorf("plan %+v", p)
	}
}
