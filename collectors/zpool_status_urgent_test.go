package collectors

import (
	"context"
	"slices"
	"testing"

	"github.com/zwatch/zwatch/internal/execx"
)

// seqRunner answers each call with the next output, whatever the argv.
type seqRunner struct{ outs [][]byte }

func (r *seqRunner) Run(context.Context, string, ...string) (execx.Result, error) {
	out := r.outs[0]
	if len(r.outs) > 1 {
		r.outs = r.outs[1:]
	}
	return execx.Result{Stdout: out}, nil
}

// The scrub of d1 found 209 checksum errors on virtio-ZWV0002 that a did
// not show: that disk's SMART is asked for once, at the poll that saw the
// rise, and neither at the first poll (old counters are not news) nor
// again while the counters stand still.
func TestZpoolStatusAsksSMARTOfALeafWhoseCountersRose(t *testing.T) {
	r := &seqRunner{outs: [][]byte{
		capture(t, "a.zpool-status-j.json"),
		capture(t, "d1-scrubbed.zpool-status-j.json"),
		capture(t, "d1-scrubbed.zpool-status-j.json"),
	}}
	var asked []string
	c := &ZpoolStatus{Runner: r, Urgent: func(target string) { asked = append(asked, target) }}
	for range 3 {
		if _, err := c.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"/dev/disk/by-id/virtio-ZWV0002-part1"}; !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
}

// zpool clear takes the counters down: no disk misbehaved.
func TestZpoolStatusClearedCountersAskNothing(t *testing.T) {
	r := &argvRunner{answers: map[string]execx.Result{
		"status -p -s -P -v": {Stdout: capture(t, "d1-scrubbed.zpool-status-p-P.txt")},
	}}
	var asked []string
	c := &ZpoolStatus{Runner: r, TextOnly: true, Urgent: func(target string) { asked = append(asked, target) }}
	if _, err := c.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.answers["status -p -s -P -v"] = execx.Result{Stdout: capture(t, "d2-cleared.zpool-status-p-P.txt")}
	if _, err := c.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 0 {
		t.Errorf("asked %q after zpool clear", asked)
	}
}

// Capture l5: the throttled virtio-ZWV0003's slow-I/O counter went from 0
// to 16 with no error counted: a rise that asks for its SMART.
func TestZpoolStatusAsksSMARTOfASlowDisk(t *testing.T) {
	r := &seqRunner{outs: [][]byte{
		capture(t, "l5-before.zpool-status-j.json"),
		capture(t, "l5-slow.zpool-status-s-j.json"),
	}}
	var asked []string
	c := &ZpoolStatus{Runner: r, Urgent: func(target string) { asked = append(asked, target) }}
	for range 2 {
		if _, err := c.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"/dev/disk/by-id/virtio-ZWV0003-part1"}; !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
}
