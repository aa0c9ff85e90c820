package daemon

import (
	"bytes"
	"context"
	"log/slog"

	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/tools/maintenance"
)

// liveMaintenance runs scrubs and self-tests with the real tools.
type liveMaintenance struct {
	cfg    *config.Config
	runner *execx.Runner
	pub    collectors.Publisher
	status *collectors.ZpoolStatus
}

func newMaintenance(cfg *config.Config, pub collectors.Publisher, log *slog.Logger) (*maintenance.Scheduler, error) {
	m := cfg.Maintenance
	sch, err := maintenance.ParseSchedule(m.Scrub, m.ShortTest, m.LongTest, m.ShortStagger.D(), m.LongStagger.D())
	if err != nil {
		return nil, err
	}
	if !cfg.Smart.Enabled {
		sch.Short, sch.Long = nil, nil
	}
	if !cfg.ZFS.Enabled {
		sch.Scrub = nil
	}
	runner := execx.New(cfg.ZFS.CommandTimeout.D())
	act := &liveMaintenance{cfg: cfg, runner: runner, pub: pub,
		status: &collectors.ZpoolStatus{Runner: runner, Zpool: cfg.ZFS.Zpool}}
	return &maintenance.Scheduler{Schedule: sch, Actions: act, Log: log}, nil
}

func (m *liveMaintenance) Pools(ctx context.Context) ([]*zfs.Pool, error) {
	if !m.cfg.ZFS.Enabled {
		return nil, nil
	}
	sd, err := m.status.Read(ctx)
	return sd.Pools, err
}

// Disks lists the disks SMART reads, with the pool and top-level vdev each
// belongs to, so that tests are staggered within a vdev.
func (m *liveMaintenance) Disks(ctx context.Context) ([]maintenance.Disk, error) {
	var out []maintenance.Disk
	ids, err := disk.Discover("/")
	if err != nil {
		return nil, err
	}
	pools, _ := m.Pools(ctx)
	res := disk.NewResolver("/", ids)
	member := DiskMembership(pools, res)
	types := map[string]string{}
	for _, d := range m.cfg.Smart.Devices {
		types[d.Device] = d.Type
	}
	for _, id := range ids {
		dev := id.ByID
		if dev == "" {
			dev = "/dev/" + id.Kernel
		}
		m := member[id.Serial]
		out = append(out, maintenance.Disk{Device: dev, Type: types[dev], Pool: m.Pool, Vdev: m.Vdev})
	}
	return out, nil
}

func (m *liveMaintenance) StartScrub(ctx context.Context, pool string) error {
	_, err := m.runner.Run(ctx, m.cfg.ZFS.Zpool, "scrub", pool)
	return err
}

func (m *liveMaintenance) StartSelfTest(ctx context.Context, d maintenance.Disk, long bool) error {
	kind := "short"
	if long {
		kind = "long"
	}
	args := []string{"-t", kind}
	if d.Type != "" {
		args = append(args, "-d", d.Type)
	}
	args = append(args, d.Device)
	_, err := m.runner.Run(ctx, m.cfg.Smart.Smartctl, args...)
	return err
}

// SelfTestLog reads the newest self-test entry. smartctl's exit status is a
// bit mask that is non-zero on many healthy disks, so the JSON is read
// whenever there is some.
func (m *liveMaintenance) SelfTestLog(ctx context.Context, d maintenance.Disk) (*maintenance.SelfTestResult, uint64, error) {
	args := []string{"--json=c", "-a", "-n", "standby"}
	if d.Type != "" {
		args = append(args, "-d", d.Type)
	}
	res, err := m.runner.Run(ctx, m.cfg.Smart.Smartctl, append(args, d.Device)...)
	if len(res.Stdout) == 0 {
		return nil, 0, err
	}
	rep, perr := smart.Parse(bytes.NewReader(res.Stdout))
	if perr != nil {
		return nil, 0, perr
	}
	var hours uint64
	if rep.PowerOnHours != nil {
		hours = *rep.PowerOnHours
	}
	if rep.SelfTest == nil {
		return nil, hours, nil
	}
	st := rep.SelfTest
	return &maintenance.SelfTestResult{Type: st.Type, Passed: st.Passed, Status: st.Status, LifetimeHours: st.LifetimeHours}, hours, nil
}

func (m *liveMaintenance) Publish(ctx context.Context, ev maintenance.Event) error {
	return collectors.Publish(ctx, m.pub, facts.Maintenance, "maintenance", ev)
}
