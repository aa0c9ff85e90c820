package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/input"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/kernlog"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
)

// EvalHost is the host name saved outputs are evaluated as.
const EvalHost = "eval"

// Eval runs the rules over saved command outputs, for `zwatch rules eval
// FILE...`. Each file is `zpool status` (text or -j), `zpool list -Hp`,
// `zpool import`, `zfs list -Hp -o name,used,avail,quota,refquota`, `zfs
// list -Hp -t filesystem,volume -o <zfs.DatasetPropColumns>`, `zfs list -Hp
// -t snapshot -o name,creation,used -s creation` or `smartctl -j -a`
// output, or a saved kernel log (eval_kernel.go), detected by content, and taken as the next
// observation from one host. Between files a fake clock moves past group_wait
// and past the `for` of every pending alert. Eval returns the alerts firing
// after the last file and those the last file resolved; alerts a bigger one
// carries (inhibited) are left out, as a person would not see them.
func Eval(files []string, cfg config.RulesConfig) ([]alert.Alert, error) {
	return evalAt(files, cfg, time.Now().UTC().Truncate(time.Second))
}

func evalAt(files []string, cfg config.RulesConfig, now time.Time) ([]alert.Alert, error) {
	ev, err := evalFiles(files, cfg, now, false)
	return ev.Alerts, err
}

// Evaluation is what one evaluation found: the alerts a person would see,
// and the facts they were judged from, in the order observed.
type Evaluation struct {
	Alerts []alert.Alert
	Facts  []bus.Envelope
}

// EvalFilesAt is Eval on the clock now, and also returns the facts the
// files became (`zwatch check --input` reads its performance data from them).
func EvalFilesAt(files []string, cfg config.RulesConfig, now time.Time) (Evaluation, error) {
	return evalFiles(files, cfg, now, true)
}

// evalFiles keeps the facts only when asked: a saved output of millions of
// lines need not stay in memory once judged.
func evalFiles(files []string, cfg config.RulesConfig, now time.Time, keep bool) (Evaluation, error) {
	var capacity facts.CapacityData
	return evalSteps(EvalHost, len(files), cfg, now, keep, func(i int, at time.Time) (string, []bus.Envelope, error) {
		envs, err := envelopesOf(files[i], at, &capacity, kernelConfig.of(&cfg))
		return files[i], envs, err
	})
}

// EvalFacts judges facts collected together from host, such as one live
// reading of every collector (`zwatch check`), as one observation on the
// clock now. As in Eval, a condition they show fires at once: the clock
// moves past its `for`.
func EvalFacts(host string, envs []bus.Envelope, cfg config.RulesConfig, now time.Time) (Evaluation, error) {
	return evalSteps(host, 1, cfg, now, true, func(int, time.Time) (string, []bus.Envelope, error) {
		return host, envs, nil
	})
}

// evalSteps observes n successive steps of facts from host. Between steps
// a fake clock moves past group_wait and past the `for` of every pending
// alert; the alerts firing after the last step, and those it resolved,
// are returned, without those a bigger one carries (inhibited), and the
// facts when keep is set.
func evalSteps(host string, n int, cfg config.RulesConfig, now time.Time, keep bool, step func(i int, at time.Time) (string, []bus.Envelope, error)) (Evaluation, error) {
	e := NewEngine(cfg, nil)
	gap := cfg.GroupWait.D() + time.Second
	var out Evaluation
	for i := range n {
		name, envs, err := step(i, now)
		if err != nil {
			return Evaluation{}, err
		}
		for _, env := range envs {
			if err := e.Observe(env, now); err != nil {
				return Evaluation{}, fmt.Errorf("%s: %w", name, err)
			}
		}
		if keep {
			out.Facts = append(out.Facts, envs...)
		}
		h := e.hosts[host]
		if h == nil {
			continue // nothing observed from host yet
		}
		// Past every `for`, so pending alerts fire as they would in time.
		next := now.Add(gap)
		for _, t := range h.Alerts {
			if t.A.State == alert.Pending {
				if at := t.A.StartsAt.Add(t.For + time.Second); at.After(next) {
					next = at
				}
			}
		}
		now = next
		if i == n-1 {
			e.settle(h, now)
			for _, a := range e.Alerts(host) {
				if t := h.Alerts[a.Fingerprint]; t != nil && t.Inhibited {
					continue
				}
				if a.State == alert.Firing || (a.State == alert.Resolved && wasSent(h, a.Fingerprint)) {
					out.Alerts = append(out.Alerts, a)
				}
			}
		}
		e.Tick(now)
	}
	return out, nil
}

func wasSent(h *hostState, fp string) bool {
	return h.Alerts[fp] != nil && h.Alerts[fp].LastSent != nil
}

// envelopesOf reads one saved output and wraps it as its collectors
// would. A `zfs list -Hp -o name,used,avail,quota,refquota` feeds both the
// capacity message (the pools' root datasets, for their fullness) and the
// datasets message (the quotas), as zpool_list and datasets split it now.
func envelopesOf(file string, at time.Time, last *facts.CapacityData, kcfg kernelSettings) ([]bus.Envelope, error) {
	data, err := input.Read(file, input.MaxToolOutput)
	if err != nil {
		return nil, fmt.Errorf("rules eval: %w", err)
	}
	env, err := envelopeOf(file, data, at, last)
	if err != nil {
		// Not a tool output: a saved kernel log, read as it is (its
		// prefixes are the format, not pasting).
		kenvs, kerr := kernelEnvelopes(file, data, at, kcfg)
		if kerr == nil {
			return kenvs, nil
		}
		if !errors.Is(kerr, kernlog.ErrNotKernelLog) {
			return nil, kerr
		}
		return nil, err
	}
	out := []bus.Envelope{env}
	if env.Schema != facts.ZpoolCapacity.Schema() || len(last.Datasets) == 0 {
		return out, nil
	}
	d := facts.DatasetsData{Datasets: make([]facts.DatasetState, len(last.Datasets))}
	for _, col := range zfs.DatasetPropColumns {
		if !slices.Contains([]string{"name", "used", "avail", "quota", "refquota"}, col) {
			d.Missing = append(d.Missing, col)
		}
	}
	for i, ds := range last.Datasets {
		d.Datasets[i].Dataset = ds
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("rules eval %s: %w", file, err)
	}
	return append(out, bus.Envelope{Schema: facts.Datasets.Schema(), Host: EvalHost, Collector: "datasets", CollectedAt: at, Data: raw}), nil
}

// envelopeOf wraps one saved output (data, read from file) as its collector would.
func envelopeOf(file string, data []byte, at time.Time, last *facts.CapacityData) (bus.Envelope, error) {
	// Pasted text (log prefixes, markdown fences, a config: fragment) reads
	// as the output itself; nothing left is an empty input, not "no pools".
	data = zfs.Unpaste(data)
	if len(bytes.TrimSpace(data)) == 0 {
		return bus.Envelope{}, fmt.Errorf("rules eval: %s is empty: save the tool's output there first (e.g. zpool status > FILE)", input.Name(file))
	}
	kind, collector, payload, err := detect(data)
	if err != nil {
		return bus.Envelope{}, fmt.Errorf("rules eval %s: %w", filepath.Base(input.Name(file)), err)
	}
	// zpool list and zfs list travel together in one capacity message, as
	// the collector sends them: a file of one completes the last of the other.
	if cd, ok := payload.(facts.CapacityData); ok {
		if cd.Pools == nil {
			cd.Pools = last.Pools
		}
		if cd.Datasets == nil {
			cd.Datasets = last.Datasets
		}
		*last = cd
		payload = cd
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return bus.Envelope{}, fmt.Errorf("rules eval %s: %w", file, err)
	}
	return bus.Envelope{Schema: bus.Schema(kind), Host: EvalHost, Collector: collector, CollectedAt: at, Data: raw}, nil
}

// detect tells zpool status (text or JSON), zpool list -Hp and smartctl -j
// apart and parses the output into its bus payload.
func detect(data []byte) (kind, collector string, payload any, err error) {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && t[0] == '{' {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(t, &keys); err != nil {
			return "", "", nil, fmt.Errorf("not valid JSON: %w", err)
		}
		_, isSmart := keys["smartctl"]
		for _, k := range []string{"device", "ata_smart_attributes", "nvme_smart_health_information_log", "smart_status", "serial_number"} {
			if _, ok := keys[k]; ok {
				isSmart = true
			}
		}
		if _, ok := keys["pools"]; ok && !isSmart {
			pools, err := zfs.ParseStatusJSON(bytes.NewReader(t))
			if err != nil {
				return "", "", nil, err
			}
			return facts.ZpoolStatus.Name(), "zpool_status", facts.StatusData{Source: "json", Pools: pools}, nil
		}
		if isSmart {
			r, err := smart.Parse(bytes.NewReader(t))
			if err != nil {
				return "", "", nil, err
			}
			return facts.Smart.Name(), "smart", r, nil
		}
		return "", "", nil, fmt.Errorf("JSON that is neither `zpool status -j` nor `smartctl -j` output")
	}
	if looksLikeImport(t) {
		found, err := zfs.ParseImport(bytes.NewReader(t))
		if err != nil {
			return "", "", nil, err
		}
		return facts.PoolImport.Name(), "zpool_import", facts.PoolImportData{Found: found}, nil
	}
	if bytes.Contains(t, []byte("pool:")) || bytes.Contains(t, []byte("no pools available")) {
		pools, err := zfs.ParseStatusText(bytes.NewReader(t))
		if err != nil {
			return "", "", nil, err
		}
		return facts.ZpoolStatus.Name(), "zpool_status", facts.StatusData{Source: "text", Pools: pools}, nil
	}
	switch fields := bytes.Split(firstLine(t), []byte("\t")); {
	case len(fields) == len(zfs.DatasetPropColumns) && (string(fields[1]) == "filesystem" || string(fields[1]) == "volume"):
		ds, err := zfs.ParseDatasetProps(bytes.NewReader(t), zfs.DatasetPropColumns)
		if err != nil {
			return "", "", nil, err
		}
		d := facts.DatasetsData{Datasets: make([]facts.DatasetState, len(ds))}
		for i := range ds {
			d.Datasets[i].DatasetProps = ds[i]
		}
		return facts.Datasets.Name(), "datasets", d, nil
	case len(fields) == len(zfs.SnapshotColumns) && bytes.IndexByte(fields[0], '@') > 0:
		stats, total, err := zfs.SummarizeSnapshots(bytes.NewReader(t))
		if err != nil {
			return "", "", nil, err
		}
		return facts.Snapshots.Name(), "snapshots", facts.SnapshotsData{Datasets: stats, Total: total}, nil
	}
	pl, lerr := zfs.ParseList(bytes.NewReader(t))
	if lerr == nil && len(pl) > 0 {
		return facts.ZpoolCapacity.Name(), "zpool_list", facts.CapacityData{Pools: pl}, nil
	}
	if ds, derr := zfs.ParseDatasets(bytes.NewReader(t)); derr == nil && len(ds) > 0 {
		return facts.ZpoolCapacity.Name(), "zpool_list", facts.CapacityData{Datasets: ds}, nil
	}
	return "", "", nil, fmt.Errorf("not `zpool status`, `zpool list -Hp`, `zpool import`, `zfs list -Hp -o name,used,avail,quota,refquota`, "+
		"`zfs list -Hp -t filesystem,volume -o %s`, `zfs list -Hp -t snapshot -o name,creation,used -s creation` or `smartctl -j -a` output, "+
		"nor a kernel log (dmesg, dmesg -T, journalctl -k, journalctl -k -o json, /dev/kmsg records) (zpool list: %v)",
		strings.Join(zfs.DatasetPropColumns, ","), lerr)
}

// importID is the "id:" line only zpool import prints in a pool block.
var importID = regexp.MustCompile(`(?m)^\s*id: [0-9]+\s*$`)

// looksLikeImport: zpool import output (its pool blocks carry an id; with
// nothing to import it says so, or -c says it retries).
func looksLikeImport(t []byte) bool {
	return importID.Match(t) || bytes.Contains(t, []byte("no pools available to import")) ||
		bytes.Equal(t, []byte("cachefile import failed, retrying"))
}

func firstLine(t []byte) []byte {
	line, _, _ := bytes.Cut(t, []byte("\n"))
	return bytes.TrimRight(line, "\r")
}
