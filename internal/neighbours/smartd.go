package neighbours

import (
	"fmt"
	"strings"
)

// SmartdConfPaths are where smartd reads its configuration: Debian and
// Ubuntu, then Fedora, RHEL and openSUSE.
var SmartdConfPaths = []string{"/etc/smartd.conf", "/etc/smartmontools/smartd.conf"}

// debianRunner is the -M exec program of Debian's smartd.conf: it runs the
// scripts in /etc/smartmontools/run.d, whose 10mail mails with
// /usr/bin/mail.
const (
	debianRunner = "/usr/share/smartmontools/smartd-runner"
	debianMail   = "/usr/bin/mail"
	noMailer     = "<nomailer>"
)

// Smartd is one smartd.conf and the entries in it that notify.
type Smartd struct {
	Path    string
	Running bool
	// Entries are the monitoring entries (DEVICESCAN or a device) that
	// notify someone.
	Entries []SmartdEntry
	// SelfTests is the first -s schedule of an entry, "" when no entry
	// schedules self-tests.
	SelfTests string
}

// SmartdEntry is one line of smartd.conf, with the directives a DEFAULT
// line before it gave it.
type SmartdEntry struct {
	Line   int    // where it starts, 1-based
	Device string // DEVICESCAN or the device, e.g. /dev/sda
	// Mail is the -m address list ("root", "a@b,c@d"), "<nomailer>" when
	// only Exec runs.
	Mail string
	// Exec is the -M exec program, "" for smartd's own mail.
	Exec string
	// Delivers is false when the mail cannot leave: no mail program for
	// smartd's own mail or Debian's runner.
	Delivers bool
}

func detectSmartd(fs sysFS, conf string, running bool) (*Smartd, error) {
	b, err := fs.readConf(conf)
	if b == nil || err != nil {
		return nil, err
	}
	s := &Smartd{Path: conf, Running: running}
	for _, e := range parseSmartdConf(b) {
		if e.selfTests != "" && s.SelfTests == "" {
			s.SelfTests = e.selfTests
		}
		if e.Mail == "" || e.Mail == noMailer && e.Exec == "" {
			continue
		}
		switch {
		case e.Exec == "":
			e.Delivers = fs.onPath("mail", zedPath)
		case e.Exec == debianRunner:
			e.Delivers = fs.executable(debianMail)
		default:
			e.Delivers = fs.executable(e.Exec)
		}
		s.Entries = append(s.Entries, e.SmartdEntry)
	}
	return s, nil
}

// Notifies reports whether an entry sends a person something.
func (s *Smartd) Notifies() bool {
	for _, e := range s.Entries {
		if e.Delivers {
			return true
		}
	}
	return false
}

// parsedEntry is an entry with what Smartd needs besides.
type parsedEntry struct {
	SmartdEntry
	selfTests string
}

// parseSmartdConf reads the monitoring entries of a smartd.conf as
// smartd.conf(5) defines them: '#' starts a comment, a '\' at the end of a
// line continues the entry, DEFAULT sets directives for the entries after
// it (a later DEFAULT replaces it), a device entry with -d ignore monitors
// nothing, and smartd ignores every line after DEVICESCAN.
func parseSmartdConf(b []byte) []parsedEntry {
	var out []parsedEntry
	var def parsedEntry
	var entry []string
	start := 0
	lines := strings.Split(string(b), "\n")
	for i, line := range lines {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		line = strings.TrimSpace(line)
		if len(entry) == 0 {
			start = i + 1
		}
		cont := strings.HasSuffix(line, `\`)
		entry = append(entry, strings.Fields(strings.TrimSuffix(line, `\`))...)
		if cont && i+1 < len(lines) || len(entry) == 0 {
			continue
		}
		e, ignored := directives(entry[0], entry[1:], def)
		e.Line = start
		entry = nil
		switch {
		case e.Device == "DEFAULT":
			def = e
		case !ignored:
			out = append(out, e)
		}
		if e.Device == "DEVICESCAN" {
			break
		}
	}
	return out
}

// directives applies the directives of one entry over the defaults; ignored
// is -d ignore.
func directives(device string, args []string, def parsedEntry) (e parsedEntry, ignored bool) {
	e = def
	e.Device = device
	if device == "DEFAULT" {
		e = parsedEntry{SmartdEntry: SmartdEntry{Device: device}}
	}
	for i := 0; i < len(args); i++ {
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch args[i] {
		case "-m":
			e.Mail = next()
		case "-M":
			if next() == "exec" {
				e.Exec = next()
			}
		case "-s":
			e.selfTests = next()
		case "-d":
			ignored = ignored || next() == "ignore"
		}
	}
	return e, ignored
}

// advice is the log line for a smartd that notifies, "" when it does not.
func (s *Smartd) advice(zwatchSelfTests bool) string {
	var lines, how []string
	for _, e := range s.Entries {
		if !e.Delivers {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s, line %d", e.Device, e.Line))
		switch {
		case e.Mail == noMailer:
			how = append(how, "runs "+e.Exec)
		case e.Exec == "" || e.Exec == debianRunner:
			how = append(how, "mails "+e.Mail+" (-m "+e.Mail+")")
		default:
			how = append(how, "runs "+e.Exec+" for "+e.Mail+" (-m "+e.Mail+" -M exec)")
		}
	}
	if len(lines) == 0 {
		return ""
	}
	state := "smartd is running"
	if !s.Running {
		state = "smartd is not running now, but will once started"
	}
	where := "that line"
	if len(lines) > 1 {
		where = "those lines"
	}
	msg := fmt.Sprintf("smartd also notifies about failing disks: it %s in %s (%s); %s. "+
		"One failing disk will send two notifications, smartd's and zwatch's. "+
		"Remove -m and its -M directives from %s (smartd keeps monitoring and logging to syslog), then systemctl restart smartd. "+
		"Or keep smartd's mail and drop the matching zwatch channel.",
		strings.Join(dedupe(how), " and "), s.Path, strings.Join(lines, "; "), state, where)
	if s.SelfTests != "" && zwatchSelfTests {
		msg += fmt.Sprintf(" smartd also starts SMART self-tests (-s %s), and so does zwatch (maintenance.short_test, maintenance.long_test): keep one schedule.", s.SelfTests)
	}
	return msg + " See " + DocLink
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
