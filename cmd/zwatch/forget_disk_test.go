package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
)

// `zwatch forget-disk` reaches the running daemon's bus with the disk's
// name, a by-id path cut to its name.
func TestForgetDisk(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfgPath := writeConfig(t, fmt.Sprintf("host: nas1\nstate_dir: %s\nnotify:\n  console: false\n", t.TempDir()))
	b := openDaemonBus(t, ctx, cfgPath)
	defer b.Close()
	out, errOut, code := run(t, "-c", cfgPath, "forget-disk", "/dev/disk/by-id/ata-Samsung_SSD_860_EVO_1TB_S3Z9NB0K000003")
	if code != exitOK {
		t.Fatalf("forget-disk exits %d: %s", code, errOut)
	}
	if !strings.Contains(out, "forgets disk ata-Samsung_SSD_860_EVO_1TB_S3Z9NB0K000003 on nas1") {
		t.Errorf("output: %q", out)
	}
	s, err := b.JS.Stream(ctx, bus.StreamFacts)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetLastMsgForSubject(ctx, bus.Subject("nas1", facts.DiskForget.Name()))
	if err != nil {
		t.Fatalf("no disk.forget fact: %v", err)
	}
	var env bus.Envelope
	var d facts.DiskForgetData
	if err := json.Unmarshal(m.Data, &env); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(env.Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.Serial != "ata-Samsung_SSD_860_EVO_1TB_S3Z9NB0K000003" || d.By == "" {
		t.Errorf("fact = %+v", d)
	}
}

func TestForgetDiskRefusesNonDisks(t *testing.T) {
	cfgPath := writeConfig(t, fmt.Sprintf("host: nas1\nstate_dir: %s\n", t.TempDir()))
	for arg, want := range map[string]string{
		"":            "empty",
		"/dev/sdb":    "is a path",
		"../etc":      "is a path",
		"WD-WX32 D70": "space or control",
		"S3Z9\x00":    "space or control",
	} {
		_, errOut, code := run(t, "-c", cfgPath, "forget-disk", arg)
		if code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("forget-disk %q: exit %d, %q; want usage error containing %q", arg, code, errOut, want)
		}
	}
}

// Whatever is typed, a name accepted is one token with no path in it.
func FuzzDiskToForget(f *testing.F) {
	for _, s := range []string{"S3Z9NB0K000003", "/dev/disk/by-id/ata-Samsung_SSD_860_EVO_1TB_S3Z9NB0K000003", "../x", "a b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, err := diskToForget(s)
		if err == nil && (name == "" || strings.ContainsAny(name, "/\\ \t\n\x00") || len(name) > 255) {
			t.Fatalf("diskToForget(%q) accepted %q", s, name)
		}
	})
}
