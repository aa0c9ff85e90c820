package collectors

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/internal/testutil"
)

const kstatCaptured = "../testdata/kstat/zfs-2.3.2/"

// kstatRoot copies a captured kstat directory into a fresh root, beside a
// file such as the ARC's arcstats that is no pool.
func kstatRoot(t *testing.T, capture string) string {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join(kstatCaptured, capture)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name(), "state"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, e.Name()), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, e.Name(), "state"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "arcstats"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestPoolKstatReadsCapturedStates(t *testing.T) {
	for capture, want := range map[string]string{
		"online":    "hung=ONLINE",
		"degraded":  "tank=DEGRADED",
		"suspended": "hung=SUSPENDED tank=DEGRADED",
	} {
		c := &PoolKstat{Root: kstatRoot(t, capture)}
		got, err := c.Read(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", capture, err)
		}
		var parts []string
		for _, p := range got.Pools {
			parts = append(parts, p.Name+"="+p.State)
		}
		if strings.Join(parts, " ") != want || got.Source != "procfs" {
			t.Errorf("%s: %+v, want %s from procfs", capture, got, want)
		}
	}
}

func TestPoolKstatPublishes(t *testing.T) {
	c := &PoolKstat{Root: kstatRoot(t, "suspended")}
	var pub memPublisher
	if err := c.Collect(context.Background(), &pub); err != nil {
		t.Fatal(err)
	}
	if m := pub.all(); len(m) != 1 || m[0].kind != facts.PoolKstat.Name() || m[0].collector != "pool_kstat" {
		t.Fatalf("published %+v, want one %s", m, facts.PoolKstat.Name())
	}
}

func TestPoolKstatErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := (&PoolKstat{Root: filepath.Join(t.TempDir(), "none")}).Read(ctx); !errors.Is(err, ErrNotAvailable) {
		t.Errorf("missing kstat dir: %v, want ErrNotAvailable", err)
	}
	// No pool imported: an empty list, not an error.
	got, err := (&PoolKstat{Root: t.TempDir()}).Read(ctx)
	if err != nil || got.Pools == nil || len(got.Pools) != 0 {
		t.Errorf("no pools: %+v, %v", got, err)
	}
	for name, content := range map[string][]byte{
		"garbage": []byte("online, probably\n"),
		"empty":   nil,
		"huge":    []byte(strings.Repeat("A", 10<<20)),
		"binary":  {0xff, 0xfe, 0, 1},
	} {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "p"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "p", "state"), content, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := (&PoolKstat{Root: root}).Read(ctx)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), filepath.Join(root, "p", "state")) {
			t.Errorf("%s: %v, want a parse error naming the file", name, err)
		}
	}
}

// FreeBSD: sysctl through the runner. The stand-in prints what OpenZFS's
// FreeBSD SPL makes of the kstat (kstat.<module>.<pool>.<class>.<name>,
// the raw state node hidden from listing); it is derived from that code,
// not captured from a FreeBSD machine.
func TestPoolKstatSysctl(t *testing.T) {
	dir := t.TempDir()
	sysctl := testutil.WriteScript(t, dir, "sysctl", `#!/bin/sh
case "$*" in
"-N kstat.zfs")
  printf 'kstat.zfs.misc.arcstats.hits\nkstat.zfs.tank.misc.iostats.trim_extents_written\nkstat.zfs.tank.dataset.objset-0x36.nread\nkstat.zfs.hung.misc.iostats.trim_extents_written\n' ;;
"-e -i kstat.zfs.hung.misc.state kstat.zfs.tank.misc.state")
  printf 'kstat.zfs.hung.misc.state=SUSPENDED\n\nkstat.zfs.tank.misc.state=ONLINE\n\n' ;;
*) echo "unexpected argv: $*" >&2; exit 2 ;;
esac
`)
	c := &PoolKstat{Sysctl: sysctl, Runner: execx.New(5 * time.Second)}
	got, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Pools) != 2 || got.Pools[0] != (facts.PoolKstatState{Name: "hung", State: "SUSPENDED"}) ||
		got.Pools[1] != (facts.PoolKstatState{Name: "tank", State: "ONLINE"}) || got.Source != "sysctl" {
		t.Errorf("sysctl reading %+v", got)
	}
	if _, err := ParseKstatSysctl(strings.NewReader("kstat.zfs.misc.arcstats.hits: 3\n")); err == nil {
		t.Error("a line that is no state node was accepted")
	}
}

// The first timeout of a streak probes the kstat, retries the command and
// runs zpool list; later ones only probe; an answer ends the streak.
func TestHangProbe(t *testing.T) {
	var kstat, retry, cheap int
	p := &HangProbe{Kstat: func() { kstat++ }, Retry: func() { retry++ }, Cheap: func() { cheap++ }}
	timeout := &execx.Error{Kind: execx.KindTimeout, Command: "zpool status"}
	busy := &execx.Error{Kind: execx.KindBusy, Command: "zpool status"}
	p.Note(timeout)
	if kstat != 1 || retry != 1 || cheap != 1 {
		t.Fatalf("first timeout: kstat %d retry %d cheap %d, want 1 each", kstat, retry, cheap)
	}
	p.Note(busy)
	if kstat != 2 || retry != 1 || cheap != 1 {
		t.Fatalf("busy retry: kstat %d retry %d cheap %d, want 2 1 1", kstat, retry, cheap)
	}
	p.Note(nil)
	p.Note(&execx.Error{Kind: execx.KindFailed})
	p.Note(timeout)
	if kstat != 3 || retry != 2 {
		t.Fatalf("a new streak after an answer: kstat %d retry %d, want 3 2", kstat, retry)
	}
	var nilProbe *HangProbe
	nilProbe.Note(timeout) // collectors without a probe
}

func FuzzParseKstatState(f *testing.F) {
	for _, c := range []string{"online/hung", "degraded/tank", "suspended/hung"} {
		b, err := os.ReadFile(filepath.Join(kstatCaptured, c, "state"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseKstatState(b)
		if err == nil && (s == "" || len(s) > maxKstatState || strings.ContainsAny(s, " \n\t")) {
			t.Fatalf("accepted %q as state %q", b, s)
		}
	})
}

func FuzzParseKstatSysctl(f *testing.F) {
	f.Add([]byte("kstat.zfs.hung.misc.state=SUSPENDED\n\nkstat.zfs.tank.misc.state=ONLINE\n"))
	f.Add([]byte("kstat.zfs.misc.arcstats.hits\nkstat.zfs.tank.misc.iostats.trim_extents_written\nkstat.zfs.tank.dataset.objset-0x36.nread\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, p := range poolsOfSysctlNames(b) {
			if p == "" || p == "misc" || strings.Contains(p, ".") {
				t.Fatalf("pool %q from %q", p, b)
			}
		}
		m, err := ParseKstatSysctl(strings.NewReader(string(b)))
		if err == nil {
			for p, s := range m {
				if p == "" || s == "" {
					t.Fatalf("accepted pool %q state %q from %q", p, s, b)
				}
			}
		}
	})
}
