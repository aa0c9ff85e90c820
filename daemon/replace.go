package daemon

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/incident"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/tools/replace"
	"github.com/zwatch/zwatch/tools/replace/remote"
)

// replacer is the replacement from the phone (actions.replace) on this
// machine's real tools: zwatch replace's sources with the config's zpool
// and smartctl, the incident from the rule engine's current alerts. Nil
// when actions.replace is off.
func replacer(ctx context.Context, cfg *config.Config, b *bus.Bus, log *slog.Logger) *remote.Service {
	if !cfg.Actions.Replace {
		return nil
	}
	run := toolRunner{r: execx.New(cfg.ZFS.CommandTimeout.D()), paths: map[string]string{"zpool": cfg.ZFS.Zpool, "smartctl": cfg.Smart.Smartctl}}
	return &remote.Service{
		Bus: b, Host: cfg.Host,
		Incident: func(ctx context.Context, id string) ([]alert.Alert, error) {
			cur, err := rules.ReadCurrent(ctx, b)
			if err != nil {
				return nil, err
			}
			var out []alert.Alert
			for _, a := range cur.Active() {
				if a.Incident == id && a.State == alert.Firing {
					out = append(out, a)
				}
			}
			return out, nil
		},
		Acknowledge: func(ctx context.Context, id, by, source string) error {
			_, err := incident.Answer(ctx, b, facts.IncidentActionData{Incident: id, Action: facts.ActionAck, By: by, Source: source}, answer.SnoozeFor)
			return err
		},
		Runner: run,
		Status: replace.ZpoolStatus{Runner: run, ParseJSON: zfs.ParseStatusJSON},
		Disks:  replace.DiskFunc(func(context.Context) ([]disk.Identity, error) { return disk.Discover("/") }),
		Probe:  replace.ExecProbe{Runner: run},
		Smart: func(ctx context.Context, device string) (*bool, error) {
			return smartHealth(ctx, run, device)
		},
		Background: ctx,
		Log:        log.With("part", "replace"),
	}
}

// smartHealth is the overall SMART health smartctl reports for device:
// nil when the disk offers none.
func smartHealth(ctx context.Context, run replace.Runner, device string) (*bool, error) {
	res, err := run.Run(ctx, "smartctl", "--json", "-H", "-i", device)
	if len(res.Stdout) == 0 {
		return nil, fmt.Errorf("smartctl -H %s: %w", device, err)
	}
	rep, perr := smart.Parse(bytes.NewReader(res.Stdout))
	if perr != nil {
		return nil, fmt.Errorf("smartctl -H %s: %w", device, perr)
	}
	return rep.SmartPassed, nil
}

// toolRunner runs zpool and smartctl from the paths the config names.
type toolRunner struct {
	r     *execx.Runner
	paths map[string]string
}

func (t toolRunner) Run(ctx context.Context, name string, args ...string) (execx.Result, error) {
	if p := t.paths[name]; p != "" {
		name = p
	}
	return t.r.Run(ctx, name, args...)
}
