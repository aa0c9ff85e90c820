package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/daemon"
)

// The JSON forms of the commands whose data is zwatch's own (the others are
// their packages' types). Keys are snake_case and documented in docs/json.md;
// a key is added, never renamed or dropped.

// versionInfo is `zwatch version --json`.
type versionInfo struct {
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from (go build records
	// it), CommitTime its time, Modified whether the tree had changes.
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	// BuildDate is set by `make build` (daemon.BuildDate).
	BuildDate string `json:"build_date,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"` // GOOS/GOARCH
}

func buildVersion() versionInfo {
	v := versionInfo{Version: daemon.Version, BuildDate: daemon.BuildDate, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.time":
				v.CommitTime = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	return v
}

// Shown is the version as the text form prints it: a build without a
// version names its commit.
func (v versionInfo) Shown() string {
	if v.Version == "dev" && len(v.Commit) >= 12 {
		return "dev-" + v.Commit[:12]
	}
	return v.Version
}

// checkedConfig is `zwatch check-config --json`.
type checkedConfig struct {
	Path     string          `json:"path"`
	Valid    bool            `json:"valid"`
	Warnings []string        `json:"warnings"`
	Errors   []configProblem `json:"errors"`
	// Config is the effective config as the text form prints it, secrets
	// masked the same way ("******", "****** (from ${ENV})"); null when
	// invalid.
	Config map[string]any `json:"config"`
}

// configProblem is one error of an invalid config.
type configProblem struct {
	Key     string `json:"key,omitempty"`
	Value   string `json:"value,omitempty"`
	Problem string `json:"problem"`
}

// writeCheckedConfig turns the masked YAML into JSON: the same text, so the
// same masking, whatever types a channel adds. A channel written as a URL
// gets that URL, masked, as from_url (the text form has it as a comment).
func writeCheckedConfig(w io.Writer, l *config.Loaded, masked []byte) error {
	var m map[string]any
	if err := yaml.Unmarshal(masked, &m); err != nil {
		return fmt.Errorf("render config as JSON: %w", err)
	}
	if notify, ok := m["notify"].(map[string]any); ok {
		chs, _ := notify["channels"].([]any)
		for i, c := range l.Config.Notify.Channels {
			if i >= len(chs) {
				break
			}
			if ch, ok := chs[i].(map[string]any); ok && c.MaskedURL() != "" {
				ch["from_url"] = c.MaskedURL()
			}
		}
	}
	return writeJSON(w, checkedConfig{Path: l.Path, Valid: true, Warnings: emptyIfNil(l.Warnings), Errors: []configProblem{}, Config: m})
}

// invalidConfig lists the problems of a config that did not load, each key
// with its value and problem where the config package named them.
func invalidConfig(path string, err error) checkedConfig {
	c := checkedConfig{Path: path, Warnings: []string{}}
	var errs config.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			c.Errors = append(c.Errors, configProblem{Key: e.Path, Value: e.Value, Problem: e.Problem})
		}
	} else {
		c.Errors = []configProblem{{Problem: err.Error()}}
	}
	return c
}

func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
