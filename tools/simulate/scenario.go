// Package simulate replays recorded failures through zwatch's real pipeline
// — collectors, bus, rules, outbox and the configured channels — so that a
// person sees, on their own phone, exactly what a real failure will send
// before one happens.
//
// The recordings are real outputs of zpool, zfs and smartctl (see
// scenarios/README.md for where each came from), embedded in the binary.
// Stand-in zpool/zfs/smartctl scripts in a temporary directory replay them
// step by step; the real tools, pools, disks and state directory are never
// touched.
package simulate

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed scenarios
var recordings embed.FS

// manifestPath is the scenario list inside recordings.
const manifestPath = "scenarios/scenarios.yaml"

// Scenario is one recorded sequence.
type Scenario struct {
	Name string `yaml:"name"`
	// Description is one line for `zwatch simulate --list`.
	Description string `yaml:"description"`
	// Origin says where the recordings come from, in one line.
	Origin string `yaml:"origin"`
	// ZpoolVersion is the recorded `zpool version` output (relative to scenarios/).
	ZpoolVersion string `yaml:"zpool_version"`
	Steps        []Step `yaml:"steps"`
}

// Step is one recorded state of the machine.
type Step struct {
	// ZFS is the recording prefix (relative to scenarios/) of this step's
	// zpool/zfs outputs: PREFIX.zpool-status-j.json, PREFIX.zpool-list-Hp.txt,
	// PREFIX.zfs-list-Hp.txt. Empty: the scenario has no pools.
	ZFS string `yaml:"zfs"`
	// ZpoolList, when set, replaces the step's `zpool list -Hp` recording
	// (relative to scenarios/): a derived file, see scenarios/derived/README.md.
	ZpoolList string `yaml:"zpool_list"`
	// Smart lists the disks smartctl reads at this step and their recorded output.
	Smart []SmartRecording `yaml:"smart"`
	// Say tells the person what happens at this step.
	Say string `yaml:"say"`
	// Weight scales this step's share of the timeline (default 1).
	Weight float64 `yaml:"weight"`
}

// SmartRecording is one disk's recorded `smartctl --json -a` output.
type SmartRecording struct {
	Device string `yaml:"device"`
	File   string `yaml:"file"`
}

// UsesZFS reports whether the scenario replays zpool/zfs.
func (s *Scenario) UsesZFS() bool {
	for _, st := range s.Steps {
		if st.ZFS != "" {
			return true
		}
	}
	return false
}

// UsesSmart reports whether the scenario replays smartctl.
func (s *Scenario) UsesSmart() bool {
	for _, st := range s.Steps {
		if len(st.Smart) > 0 {
			return true
		}
	}
	return false
}

// Devices lists the disks the scenario's smartctl recordings are of, in order.
func (s *Scenario) Devices() []string {
	seen := map[string]bool{}
	var out []string
	for _, st := range s.Steps {
		for _, r := range st.Smart {
			if !seen[r.Device] {
				seen[r.Device] = true
				out = append(out, r.Device)
			}
		}
	}
	return out
}

// zfsFiles are the recorded outputs a step replays, by stand-in file name.
var zfsFiles = []struct{ suffix, name string }{
	{".zpool-status-j.json", "zpool-status-j.json"},
	{".zpool-list-Hp.txt", "zpool-list-Hp.txt"},
	{".zfs-list-Hp.txt", "zfs-list-Hp.txt"},
}

// List returns every embedded scenario, in manifest order.
func List() ([]*Scenario, error) {
	data, err := fs.ReadFile(recordings, manifestPath)
	if err != nil {
		return nil, fmt.Errorf("simulate: scenario manifest: %w", err)
	}
	var m struct {
		Scenarios []*Scenario `yaml:"scenarios"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("simulate: scenario manifest: %w", err)
	}
	for _, s := range m.Scenarios {
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("simulate: scenario %s: %w", s.Name, err)
		}
	}
	return m.Scenarios, nil
}

// Lookup finds a scenario by name.
func Lookup(name string) (*Scenario, error) {
	all, err := List()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range all {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("no scenario %q: choose one of %s (zwatch simulate --list)", name, strings.Join(names, ", "))
}

// check makes sure every recording the scenario names is embedded.
func (s *Scenario) check() error {
	if s.Name == "" || s.Description == "" || s.Origin == "" {
		return fmt.Errorf("name, description and origin are required")
	}
	if len(s.Steps) < 2 {
		return fmt.Errorf("needs at least two steps")
	}
	if s.UsesZFS() {
		if _, err := fs.Stat(recordings, path.Join("scenarios", s.ZpoolVersion)); s.ZpoolVersion == "" || err != nil {
			return fmt.Errorf("zpool_version %q is not an embedded recording", s.ZpoolVersion)
		}
	}
	for i, st := range s.Steps {
		if st.Weight < 0 {
			return fmt.Errorf("step %d: negative weight", i+1)
		}
		if s.UsesZFS() && st.ZFS == "" {
			return fmt.Errorf("step %d: every step of a ZFS scenario needs a zfs recording", i+1)
		}
		if st.ZFS != "" {
			if _, err := fs.Stat(recordings, path.Join("scenarios", st.ZFS+".zpool-status-j.json")); err != nil {
				return fmt.Errorf("step %d: %s.zpool-status-j.json is not embedded", i+1, st.ZFS)
			}
			if i == 0 {
				if _, err := fs.Stat(recordings, path.Join("scenarios", st.ZFS+".zpool-list-Hp.txt")); err != nil {
					return fmt.Errorf("step 1: %s.zpool-list-Hp.txt is not embedded", st.ZFS)
				}
			}
		}
		if st.ZpoolList != "" {
			if st.ZFS == "" {
				return fmt.Errorf("step %d: zpool_list without zfs", i+1)
			}
			if _, err := fs.Stat(recordings, path.Join("scenarios", st.ZpoolList)); err != nil {
				return fmt.Errorf("step %d: %s is not embedded", i+1, st.ZpoolList)
			}
		}
		if s.UsesSmart() && len(st.Smart) == 0 {
			return fmt.Errorf("step %d: every step of a SMART scenario needs its smartctl recordings", i+1)
		}
		for _, r := range st.Smart {
			if !strings.HasPrefix(r.Device, "/dev/") {
				return fmt.Errorf("step %d: device %q is not a /dev path", i+1, r.Device)
			}
			data, err := fs.ReadFile(recordings, path.Join("scenarios", r.File))
			if err != nil {
				return fmt.Errorf("step %d: %s is not embedded", i+1, r.File)
			}
			if _, err := smartExit(data); err != nil {
				return fmt.Errorf("step %d: %s: %w", i+1, r.File, err)
			}
		}
	}
	return nil
}

// smartExit reads smartctl's recorded exit status from its JSON output, so
// that the stand-in exits the way the real smartctl did.
func smartExit(data []byte) (int, error) {
	var out struct {
		Smartctl struct {
			ExitStatus *int `json:"exit_status"`
		} `json:"smartctl"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return 0, fmt.Errorf("not smartctl JSON: %w", err)
	}
	if out.Smartctl.ExitStatus == nil {
		return 0, fmt.Errorf("no smartctl.exit_status")
	}
	return *out.Smartctl.ExitStatus, nil
}
