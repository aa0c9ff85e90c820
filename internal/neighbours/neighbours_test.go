package neighbours

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// debianZedlets are the zedlets of Debian 12's zfs-zed package, installed
// under /usr/lib/zfs-linux/zed.d (testdata/README.md).
var debianZedlets = []string{"all-debug.sh", "all-syslog.sh", "data-notify.sh", "generic-notify.sh",
	"history_event-zfs-list-cacher.sh", "pool_import-led.sh", "resilver_finish-notify.sh",
	"resilver_finish-start-scrub.sh", "scrub_finish-notify.sh", "statechange-led.sh",
	"statechange-notify.sh", "trim_finish-notify.sh", "vdev_attach-led.sh", "vdev_clear-led.sh"}

// machine is a fixture root laid out as a Debian 12 install.
type machine struct {
	t    *testing.T
	root string
}

func newMachine(t *testing.T) *machine {
	return &machine{t: t, root: t.TempDir()}
}

func (m *machine) write(p string, data []byte, mode os.FileMode) {
	m.t.Helper()
	full := filepath.Join(m.root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(full, data, mode); err != nil {
		m.t.Fatal(err)
	}
	if err := os.Chmod(full, mode); err != nil { // past the umask
		m.t.Fatal(err)
	}
}

func (m *machine) link(target, p string) {
	m.t.Helper()
	full := filepath.Join(m.root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.Symlink(target, full); err != nil {
		m.t.Fatal(err)
	}
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// zfsZed installs zfs-zed as Debian's package and postinst do: the
// zedlets in /usr/lib/zfs-linux/zed.d, absolute links to those named in
// DEFAULT-ENABLED in /etc/zfs/zed.d, and zed.rc.
func (m *machine) zfsZed(zedrc string) {
	for _, z := range debianZedlets {
		m.write("/usr/lib/zfs-linux/zed.d/"+z, []byte("#!/bin/sh\n"), 0o755)
	}
	for _, z := range strings.Fields(string(testdata(m.t, "debian-12/DEFAULT-ENABLED"))) {
		m.link("/usr/lib/zfs-linux/zed.d/"+z, "/etc/zfs/zed.d/"+z)
	}
	m.write("/etc/zfs/zed.d/zed.rc", testdata(m.t, zedrc), 0o644)
}

// mailx installs /usr/bin/mail the way Debian's alternatives do.
func (m *machine) mailx() {
	m.write("/usr/bin/mail.mailutils", []byte("\x7fELF"), 0o755)
	m.link("/usr/bin/mail.mailutils", "/etc/alternatives/mail")
	m.link("/etc/alternatives/mail", "/usr/bin/mail")
}

// procs makes /proc with one process per name (and a kernel thread).
func (m *machine) procs(names ...string) {
	m.write("/proc/2/comm", []byte("kthreadd\n"), 0o444)
	m.write("/proc/self/comm", []byte("zed\n"), 0o444) // not a PID: skipped
	for i, n := range names {
		m.write(filepath.Join("/proc", string(rune('3'+i))+"41", "comm"), []byte(n+"\n"), 0o444)
	}
}

func TestDebianDefaultsNotifyTwice(t *testing.T) {
	m := newMachine(t)
	m.zfsZed("debian-12/zed.rc")
	m.write("/etc/smartd.conf", testdata(t, "debian-12/smartd.conf"), 0o644)
	m.mailx()
	m.procs("systemd", "zed", "smartd")

	r := Detect(m.root)
	if len(r.Problems) > 0 {
		t.Fatal(r.Problems)
	}
	z := r.ZED
	if z == nil || !z.Running || z.Path != "/etc/zfs/zed.d/zed.rc" || !slices.Equal(z.Email, []string{"root"}) || z.EmailKey != "ZED_EMAIL_ADDR" ||
		z.MailProgram != "mail" || !z.MailProgramFound || z.Verbose || len(z.Pushes) != 0 {
		t.Fatalf("zed: %+v", z)
	}
	if want := []string{"data-notify.sh", "resilver_finish-notify.sh", "scrub_finish-notify.sh", "statechange-notify.sh"}; !slices.Equal(z.Zedlets, want) {
		t.Errorf("zedlets %v, want %v", z.Zedlets, want)
	}
	if len(r.Smartd) != 1 || !r.Smartd[0].Running {
		t.Fatalf("smartd: %+v", r.Smartd)
	}
	want := SmartdEntry{Line: 21, Device: "DEVICESCAN", Mail: "root", Exec: debianRunner, Delivers: true}
	if s := r.Smartd[0]; len(s.Entries) != 1 || s.Entries[0] != want || s.SelfTests != "" {
		t.Fatalf("smartd entries %+v, want %+v", s.Entries, want)
	}

	adv := r.Advice(true)
	if len(adv) != 2 {
		t.Fatalf("advice: %+v", adv)
	}
	contains(t, adv[0].Message, `it mails root (ZED_EMAIL_ADDR) in /etc/zfs/zed.d/zed.rc`, "statechange-notify.sh",
		"zed is running", `set ZED_EMAIL_ADDR="" in /etc/zfs/zed.d/zed.rc`, "two notifications", "Keep ZED running", DocLink)
	contains(t, adv[1].Message, "it mails root (-m root) in /etc/smartd.conf (DEVICESCAN, line 21)",
		"smartd is running", "Remove -m and its -M directives", "systemctl restart smartd", DocLink)
	if adv[0].Program != "zed" || adv[1].Program != "smartd" || adv[1].Config != "/etc/smartd.conf" {
		t.Errorf("advice: %+v", adv)
	}
}

// ZED_EMAIL_ADDR="root" is the default everywhere, but without a mail
// program nothing leaves: no double notification to speak of.
func TestNoMailProgramNoAdvice(t *testing.T) {
	m := newMachine(t)
	m.zfsZed("debian-12/zed.rc")
	m.write("/etc/smartd.conf", testdata(t, "debian-12/smartd.conf"), 0o644)
	m.procs("zed", "smartd")
	r := Detect(m.root)
	if r.ZED == nil || r.ZED.MailProgramFound || r.ZED.Notifies() {
		t.Fatalf("zed: %+v", r.ZED)
	}
	if len(r.Smartd) != 1 || r.Smartd[0].Notifies() || len(r.Smartd[0].Entries) != 1 {
		t.Fatalf("smartd: %+v", r.Smartd)
	}
	if adv := r.Advice(true); len(adv) != 0 {
		t.Fatalf("advice without a mail program: %+v", adv)
	}
}

// The recommended setup says nothing.
func TestSilencedSaysNothing(t *testing.T) {
	m := newMachine(t)
	m.zfsZed("derived/zed.rc-silenced")
	m.write("/etc/smartd.conf", testdata(t, "derived/smartd.conf-silenced"), 0o644)
	m.mailx()
	m.procs("zed", "smartd")
	r := Detect(m.root)
	if r.ZED == nil || len(r.ZED.Email) != 0 || len(r.ZED.Zedlets) != 4 {
		t.Fatalf("zed: %+v", r.ZED)
	}
	if adv := r.Advice(true); len(adv) != 0 {
		t.Fatalf("advice: %+v", adv)
	}
}

func TestZEDPushesNeverShowTokens(t *testing.T) {
	m := newMachine(t)
	m.zfsZed("derived/zed.rc-pushes")
	m.procs() // zed not running
	r := Detect(m.root)
	z := r.ZED
	if z == nil || z.Running || len(z.Email) != 0 || !z.Verbose {
		t.Fatalf("zed: %+v", z)
	}
	if want := []Push{{"Pushover", "ZED_PUSHOVER_TOKEN"}, {"ntfy", "ZED_NTFY_TOPIC"}}; !slices.Equal(z.Pushes, want) {
		t.Fatalf("pushes %v, want %v (Gotify has no app token)", z.Pushes, want)
	}
	adv := r.Advice(false)
	if len(adv) != 1 {
		t.Fatalf("advice: %+v", adv)
	}
	msg := adv[0].Message
	contains(t, msg, "pushes to Pushover (ZED_PUSHOVER_TOKEN) and pushes to ntfy (ZED_NTFY_TOPIC)",
		`set ZED_PUSHOVER_TOKEN="" and ZED_NTFY_TOPIC=""`, "after every scrub (ZED_NOTIFY_VERBOSE=1)", "zed is not running now")
	for _, secret := range []string{"azGDORePK8gMaC0QOYAMyEEuzJnyUi", "uQiRzpo4DXghDmr9QzzfQu27cmVRsG", "zfs-alerts", "example.net"} {
		if strings.Contains(msg, secret) {
			t.Errorf("advice shows %q: %s", secret, msg)
		}
	}
}

// ZED runs only (links to) regular files executable by their owner and
// writable by nobody else; Debian disables a zedlet by linking it to
// /dev/null. A zedlet that notifies under another event name counts.
func TestWhichZedletsRun(t *testing.T) {
	m := newMachine(t)
	m.write("/etc/zfs/zed.d/zed.rc", testdata(t, "debian-12/zed.rc"), 0o644)
	m.mailx()
	m.link("/dev/null", "/etc/zfs/zed.d/statechange-notify.sh")
	m.write("/etc/zfs/zed.d/data-notify.sh", []byte("#!/bin/sh\n"), 0o775)    // group-writable
	m.write("/etc/zfs/zed.d/scrub_finish-notify.sh", []byte("#\n"), 0o644)    // not executable
	m.write("/etc/zfs/zed.d/.hidden-notify.sh", []byte("#!/bin/sh\n"), 0o755) // dot files are skipped
	m.write("/etc/zfs/zed.d/all-syslog.sh", []byte("#!/bin/sh\n"), 0o755)     // logs, does not notify
	m.link("missing-notify.sh", "/etc/zfs/zed.d/dangling-notify.sh")
	r := Detect(m.root)
	if r.ZED == nil || len(r.ZED.Zedlets) != 0 || r.ZED.Notifies() {
		t.Fatalf("zed: %+v", r.ZED)
	}
	m.write("/usr/libexec/zfs/zed.d/generic-notify.sh", []byte("#!/bin/sh\n"), 0o755)
	m.link("../../../usr/libexec/zfs/zed.d/generic-notify.sh", "/etc/zfs/zed.d/probe_failure-notify.sh")
	m.write("/etc/zfs/zed.d/io-email.sh", []byte("#!/bin/sh\n"), 0o700) // OpenZFS 0.6
	r = Detect(m.root)
	if want := []string{"io-email.sh", "probe_failure-notify.sh"}; r.ZED == nil || !slices.Equal(r.ZED.Zedlets, want) {
		t.Fatalf("zed: %+v, want zedlets %v", r.ZED, want)
	}
}

// ZED_EMAIL, the name before ZED_EMAIL_ADDR, still mails; ZED_EMAIL_PROG
// names the program; a build from source keeps its zed.d in /usr/local/etc.
func TestZEDOlderKeyAndOwnMailProgram(t *testing.T) {
	m := newMachine(t)
	m.write("/usr/local/etc/zfs/zed.d/zed.rc", []byte("ZED_EMAIL=\"admin@example.com ops@example.com\"\nZED_EMAIL_PROG=/opt/bin/sendmail-wrapper\n"), 0o600)
	m.write("/usr/local/etc/zfs/zed.d/statechange-notify.sh", []byte("#!/bin/sh\n"), 0o755)
	m.write("/opt/bin/sendmail-wrapper", []byte("#!/bin/sh\n"), 0o755)
	r := Detect(m.root)
	z := r.ZED
	if z == nil || z.Path != "/usr/local/etc/zfs/zed.d/zed.rc" || z.EmailKey != "ZED_EMAIL" || !z.MailProgramFound ||
		!slices.Equal(z.Email, []string{"admin@example.com", "ops@example.com"}) {
		t.Fatalf("zed: %+v", z)
	}
	contains(t, r.Advice(false)[0].Message, "mails admin@example.com ops@example.com (ZED_EMAIL)", `set ZED_EMAIL=""`)
}

func TestSmartdDefaultsAndIgnoredLines(t *testing.T) {
	m := newMachine(t)
	m.write("/etc/smartmontools/smartd.conf", testdata(t, "derived/smartd.conf-default-lines"), 0o644)
	m.write("/usr/sbin/mail", []byte("#!/bin/sh\n"), 0o755)
	r := Detect(m.root)
	if r.ZED != nil || len(r.Smartd) != 1 {
		t.Fatalf("report %+v", r)
	}
	s := r.Smartd[0]
	want := []SmartdEntry{
		{Line: 5, Device: "/dev/sda", Mail: "admin@example.com", Delivers: true},
		{Line: 6, Device: "/dev/sdb", Mail: "admin@example.com", Delivers: true},
		{Line: 13, Device: "/dev/sde", Mail: "ops@example.com,admin@example.com", Delivers: true},
	}
	if s.Path != "/etc/smartmontools/smartd.conf" || !slices.Equal(s.Entries, want) || s.SelfTests != "L/../../7/00" {
		t.Fatalf("smartd %+v, want entries %+v", s, want)
	}
	adv := r.Advice(true)
	contains(t, adv[0].Message, "(/dev/sda, line 5; /dev/sdb, line 6; /dev/sde, line 13)", "from those lines", "mails admin@example.com (-m admin@example.com) and mails ops@example.com,admin@example.com",
		"smartd is not running now", "SMART self-tests (-s L/../../7/00)", "maintenance.short_test")
	if strings.Contains(r.Advice(false)[0].Message, "self-tests") {
		t.Error("self-tests named though zwatch starts none")
	}
}

func TestSmartdNomailerRunsItsScript(t *testing.T) {
	m := newMachine(t)
	m.write("/etc/smartd.conf", testdata(t, "derived/smartd.conf-nomailer"), 0o644)
	if r := Detect(m.root); len(r.Smartd) != 1 || r.Smartd[0].Notifies() {
		t.Fatalf("a missing script notifies nobody: %+v", r.Smartd)
	}
	m.write("/usr/local/bin/smart-notify", []byte("#!/bin/sh\n"), 0o755)
	r := Detect(m.root)
	contains(t, r.Advice(false)[0].Message, "it runs /usr/local/bin/smart-notify in /etc/smartd.conf (DEVICESCAN, line 21)", "from that line")
}

func TestNothingInstalled(t *testing.T) {
	r := Detect(t.TempDir())
	if r.ZED != nil || r.Smartd != nil || r.Problems != nil || r.Advice(true) != nil {
		t.Fatalf("report %+v", r)
	}
}

// What is not a readable config is a problem to log, never a hang or a
// huge read: a FIFO, a directory, a file far too large.
func TestUnreadableConfigsAreProblems(t *testing.T) {
	m := newMachine(t)
	if err := os.MkdirAll(filepath.Join(m.root, "etc/zfs/zed.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(m.root, "etc/zfs/zed.d/zed.rc"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.write("/etc/smartd.conf", []byte(strings.Repeat("# padding\n", maxConfBytes/10+1)), 0o644)
	if err := os.MkdirAll(filepath.Join(m.root, "etc/smartmontools/smartd.conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan Report)
	go func() { done <- Detect(m.root) }()
	select {
	case r := <-done:
		if len(r.Problems) != 3 || r.ZED != nil || r.Smartd != nil {
			t.Fatalf("report %+v", r)
		}
		contains(t, r.Problems[0].Error(), "/etc/zfs/zed.d/zed.rc", "not a regular file")
		contains(t, r.Problems[1].Error(), "/etc/smartd.conf", "larger than 256 KiB")
		contains(t, r.Problems[2].Error(), "/etc/smartmontools/smartd.conf", "not a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("Detect hangs on a FIFO")
	}
}

func TestParseRC(t *testing.T) {
	vars := parseRC([]byte(`# comment
ZED_A="root"
ZED_B='it''s'
export ZED_C=bare # trailing comment
ZED_D="say \"hi\" \$HOME"
ZED_E=
ZED_F=""
ZED_G="$(cat /run/secret)"
ZED_H="unterminated
: "${ZED_I:=default}"
if [ -n "$X" ]; then ZED_J=1; fi
ZED_A=later
  ZED_K=indented;
9BAD=x
`))
	want := map[string]string{"ZED_A": "later", "ZED_B": "its", "ZED_C": "bare", "ZED_D": `say "hi" $HOME`,
		"ZED_E": "", "ZED_F": "", "ZED_G": "$(cat /run/secret)", "ZED_K": "indented"}
	if len(vars) != len(want) {
		t.Errorf("got %d vars %v, want %v", len(vars), vars, want)
	}
	for k, v := range want {
		if got, ok := vars[k]; !ok || got != v {
			t.Errorf("%s = %q (%v), want %q", k, got, ok, v)
		}
	}
}

func TestRunningIsBounded(t *testing.T) {
	m := newMachine(t)
	m.write("/proc/100/comm", []byte(strings.Repeat("z", 10_000)), 0o444)
	m.write("/proc/101/comm", []byte("smartd\n"), 0o444)
	got := sysFS{root: m.root}.running("zed", "smartd")
	if got["zed"] || !got["smartd"] {
		t.Fatalf("running %v", got)
	}
}

func contains(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("lacks %q:\n%s", sub, s)
		}
	}
}
