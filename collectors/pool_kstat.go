package collectors

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
)

// KstatDir is where Linux's SPL publishes the ZFS kstats, one directory per
// imported pool.
const KstatDir = "/proc/spl/kstat/zfs"

// maxKstatState bounds the read of one state file: the longest state name
// is "TRANSITIONING\n"; anything far longer is not a state file.
const maxKstatState = 64

// PoolKstat publishes the state of every imported pool from the kernel's
// kstat: /proc/spl/kstat/zfs/<pool>/state on Linux, sysctl
// kstat.zfs.<pool>.misc.state on FreeBSD. OpenZFS writes it without taking
// the pool's locks (spa_state_to_name), so it answers while every zpool
// command hangs on a SUSPENDED pool. It runs every list interval and at
// once when a zpool command times out (HangProbe).
type PoolKstat struct {
	// Root is the kstat directory on Linux; "" means KstatDir.
	Root string
	// Sysctl, when set, reads FreeBSD's sysctl tree through Runner instead
	// of Root: the program's name or path ("sysctl").
	Sysctl string
	Runner Runner
}

// Name implements Collector.
func (c *PoolKstat) Name() string { return "pool_kstat" }

// Collect implements Collector.
func (c *PoolKstat) Collect(ctx context.Context, pub Publisher) error {
	return PublishRead(ctx, pub, facts.PoolKstat, c.Name(), c.Read)
}

// Read reads every pool's state once.
func (c *PoolKstat) Read(ctx context.Context) (facts.PoolKstatData, error) {
	if c.Sysctl != "" {
		return c.readSysctl(ctx)
	}
	root := c.Root
	if root == "" {
		root = KstatDir
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return facts.PoolKstatData{}, fmt.Errorf("%s does not exist (ZFS kernel module not loaded): %w", root, ErrNotAvailable)
	}
	if err != nil {
		return facts.PoolKstatData{}, fmt.Errorf("read pool kstats: %w", err)
	}
	data := facts.PoolKstatData{Source: "procfs", Pools: []facts.PoolKstatState{}}
	for _, e := range entries {
		// Pools are directories; arcstats, dbufstats... are files.
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(root, e.Name(), "state")
		state, err := readKstatState(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a pool being exported, or a kstat directory of another kind
		}
		if err != nil {
			return facts.PoolKstatData{}, err
		}
		data.Pools = append(data.Pools, facts.PoolKstatState{Name: e.Name(), State: state})
	}
	return data, nil
}

// readKstatState reads one state file, at most maxKstatState bytes: procfs
// reports its size as 0, so it is read to EOF, never by its size.
func readKstatState(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKstatState+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	state, err := ParseKstatState(b)
	if err != nil {
		return "", &ParseError{Source: path, Err: err}
	}
	return state, nil
}

// ParseKstatState reads the content of a pool's kstat state: one upper-case
// word and a newline ("SUSPENDED\n").
func ParseKstatState(b []byte) (string, error) {
	if len(b) > maxKstatState {
		return "", fmt.Errorf("%d bytes or more, want one state name of at most %d", len(b), maxKstatState)
	}
	s := string(bytes.TrimSpace(b))
	if s == "" {
		return "", errors.New("empty, want a state name such as ONLINE")
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < 'A' || s[i] > 'Z') && s[i] != '_' {
			return "", fmt.Errorf("%q is not a state name (upper-case letters only)", s)
		}
	}
	return s, nil
}

// readSysctl reads FreeBSD's kstat.zfs.<pool>.misc.state. The state nodes
// are hidden from listing (CTLFLAG_SKIP in OpenZFS's FreeBSD SPL), so the
// pools are found from the nodes under kstat.zfs that are listed (each
// pool's misc.iostats, dataset.objset-...), then their states are asked for
// by name in one call.
func (c *PoolKstat) readSysctl(ctx context.Context) (facts.PoolKstatData, error) {
	res, err := c.Runner.Run(ctx, c.Sysctl, "-N", "kstat.zfs")
	if err != nil {
		if execx.KindOf(err) == execx.KindFailed {
			return facts.PoolKstatData{}, fmt.Errorf("sysctl kstat.zfs (ZFS kernel module not loaded?): %v: %w", err, ErrNotAvailable)
		}
		return facts.PoolKstatData{}, err
	}
	pools := poolsOfSysctlNames(res.Stdout)
	data := facts.PoolKstatData{Source: "sysctl", Pools: []facts.PoolKstatState{}}
	if len(pools) == 0 {
		return data, nil
	}
	args := []string{"-e", "-i"}
	for _, p := range pools {
		args = append(args, "kstat.zfs."+p+".misc.state")
	}
	res, err = c.Runner.Run(ctx, c.Sysctl, args...)
	if err != nil {
		return facts.PoolKstatData{}, err
	}
	states, err := ParseKstatSysctl(bytes.NewReader(res.Stdout))
	if err != nil {
		return facts.PoolKstatData{}, &ParseError{Source: "sysctl kstat.zfs.<pool>.misc.state", Err: err}
	}
	for _, p := range pools {
		if s, ok := states[p]; ok {
			data.Pools = append(data.Pools, facts.PoolKstatState{Name: p, State: s})
		}
	}
	return data, nil
}

// poolsOfSysctlNames picks the pool names out of `sysctl -N kstat.zfs`:
// kstat.zfs.<pool>.<class>.<name>, where the ARC's own kstat.zfs.misc.* is
// no pool. A pool whose name holds a dot cannot be told apart in a sysctl
// name and is left out.
func poolsOfSysctlNames(out []byte) []string {
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		parts := strings.Split(strings.TrimSpace(line), ".")
		if len(parts) < 5 || parts[0] != "kstat" || parts[1] != "zfs" || parts[2] == "misc" {
			continue
		}
		if parts[3] == "misc" || parts[3] == "dataset" {
			seen[parts[2]] = true
		}
	}
	out2 := make([]string, 0, len(seen))
	for p := range seen {
		out2 = append(out2, p)
	}
	sort.Strings(out2)
	return out2
}

// ParseKstatSysctl reads `sysctl -e kstat.zfs.<pool>.misc.state ...`:
// one kstat.zfs.<pool>.misc.state=<STATE> per line.
func ParseKstatSysctl(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), 64*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		pool, isState := strings.CutSuffix(strings.TrimPrefix(name, "kstat.zfs."), ".misc.state")
		if !ok || !isState || !strings.HasPrefix(name, "kstat.zfs.") || pool == "" {
			return nil, fmt.Errorf("line %q is not kstat.zfs.<pool>.misc.state=<STATE>", line)
		}
		state, err := ParseKstatState([]byte(value))
		if err != nil {
			return nil, fmt.Errorf("pool %s: %w", pool, err)
		}
		out[pool] = state
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// HangProbe is what a zpool collector does when its command times out:
// the kstat reader runs at once (it says SUSPENDED without waiting on the
// pool), and on the first timeout of a streak the collector itself and the
// cheap zpool list run again right away. A zpool stuck in the kernel
// cannot be killed, so that retry answers "busy" within moments, which
// confirms the hang (rules: CommandHangs); a zpool that was only slow
// answers. Later timeouts of the same streak only probe the kstat: the
// collector's own interval paces the retries.
type HangProbe struct {
	// Kstat, Retry and Cheap poke the kstat reader, this collector and
	// zpool list; any may be nil.
	Kstat, Retry, Cheap func()

	mu     sync.Mutex
	streak int
}

// Note looks at the result of one run of the collector.
func (p *HangProbe) Note(err error) {
	if p == nil {
		return
	}
	k := execx.KindOf(err)
	p.mu.Lock()
	if k != execx.KindTimeout && k != execx.KindBusy {
		p.streak = 0
		p.mu.Unlock()
		return
	}
	p.streak++
	first := p.streak == 1
	p.mu.Unlock()
	call(p.Kstat)
	if first {
		call(p.Retry)
		call(p.Cheap)
	}
}

func call(f func()) {
	if f != nil {
		f()
	}
}
