package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// debianBox lays out, under a temporary root, what Debian 12's zfs-zed and
// smartmontools install by default (their real zed.rc and smartd.conf,
// internal/neighbours/testdata), with a mail program, and zed and smartd running.
func debianBox(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	put := func(p string, data []byte, mode os.FileMode) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, mode); err != nil {
			t.Fatal(err)
		}
	}
	real := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("../internal/neighbours/testdata/debian-12", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	put("etc/zfs/zed.d/zed.rc", real("zed.rc"), 0o644)
	put("usr/lib/zfs-linux/zed.d/statechange-notify.sh", []byte("#!/bin/sh\n"), 0o755)
	if err := os.Symlink("/usr/lib/zfs-linux/zed.d/statechange-notify.sh", filepath.Join(root, "etc/zfs/zed.d/statechange-notify.sh")); err != nil {
		t.Fatal(err)
	}
	put("etc/smartd.conf", real("smartd.conf"), 0o644)
	put("usr/bin/mail", []byte("#!/bin/sh\n"), 0o755)
	put("proc/812/comm", []byte("zed\n"), 0o444)
	put("proc/955/comm", []byte("smartd\n"), 0o444)
	return root
}

// `zwatch run` on a box where ZED and smartd mail too says so once each,
// at warning level, with the change that keeps one notification; the start
// goes on as usual.
func TestRunSaysOnceThatZEDAndSmartdMailToo(t *testing.T) {
	cfg := fmt.Sprintf("host: nas1\nstate_dir: %s\nzfs: {enabled: false}\nsmart: {enabled: false}\nkernel: {enabled: false}\nhttp: {listen: \"127.0.0.1:0\"}\n", t.TempDir())
	logs, stop := startDaemon(t, cfg, Options{SystemRoot: debianBox(t), HeartbeatEvery: time.Second})
	waitLog(t, logs, "zwatch running")
	time.Sleep(1500 * time.Millisecond) // a heartbeat later: still said once
	stop()
	out := logs.String()
	for _, want := range []string{`msg="ZED also notifies about pool faults: it mails root (ZED_EMAIL_ADDR) in /etc/zfs/zed.d/zed.rc`,
		`msg="smartd also notifies about failing disks: it mails root (-m root) in /etc/smartd.conf (DEVICESCAN, line 21)`} {
		if n := strings.Count(out, want); n != 1 {
			t.Errorf("said %d times, want once: %s\n%s", n, want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "also notifies") && !strings.Contains(line, "level=WARN") {
			t.Errorf("not a warning: %s", line)
		}
	}
	if !strings.Contains(out, "program=zed config=/etc/zfs/zed.d/zed.rc running=true") {
		t.Errorf("no structured attributes:\n%s", out)
	}
	if !strings.Contains(out, "zwatch running") {
		t.Errorf("the start did not go on:\n%s", out)
	}
}

// A simulation (no SystemRoot) says nothing about this machine.
func TestNoSystemRootNoLook(t *testing.T) {
	cfg := fmt.Sprintf("host: nas1\nstate_dir: %s\nzfs: {enabled: false}\nsmart: {enabled: false}\nkernel: {enabled: false}\nhttp: {listen: \"127.0.0.1:0\"}\n", t.TempDir())
	logs, stop := startDaemon(t, cfg, Options{})
	waitLog(t, logs, "zwatch running")
	stop()
	if strings.Contains(logs.String(), "also notifies") {
		t.Fatalf("looked at the machine:\n%s", logs.String())
	}
}

func waitLog(t *testing.T, logs *syncBuf, s string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log within 30 s", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
