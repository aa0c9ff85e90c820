package neighbours

import (
	"fmt"
	"sort"
	"strings"
)

// ZEDDirs are where zed.rc and the enabled zedlets live: packaged OpenZFS,
// then a build from source (its sysconfdir /usr/local/etc).
var ZEDDirs = []string{"/etc/zfs/zed.d", "/usr/local/etc/zfs/zed.d"}

// zedPath is the PATH ZED gives its zedlets (_PATH_STDPATH, zed_event.c):
// where a mail program named without a slash is looked for.
var zedPath = []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"}

// zedPush is a service zed-functions.sh pushes to when all its keys are set
// (zed_notify_pushbullet, _slack_webhook, _pushover, _ntfy, _gotify in
// OpenZFS's cmd/zed/zed.d/zed-functions.sh).
type zedPush struct {
	service string
	keys    []string
}

var zedPushes = []zedPush{
	{"Pushbullet", []string{"ZED_PUSHBULLET_ACCESS_TOKEN"}},
	{"Slack", []string{"ZED_SLACK_WEBHOOK_URL"}},
	{"Pushover", []string{"ZED_PUSHOVER_TOKEN", "ZED_PUSHOVER_USER"}},
	{"ntfy", []string{"ZED_NTFY_TOPIC"}},
	{"Gotify", []string{"ZED_GOTIFY_URL", "ZED_GOTIFY_APPTOKEN"}},
}

// ZED is what zed.rc and the zedlet folder say about ZED's notifications.
// Values of tokens are never kept: only which keys are set.
type ZED struct {
	// Path is zed.rc as the machine names it.
	Path    string
	Running bool
	// Email are the addresses of EmailKey: ZED_EMAIL_ADDR, or the older
	// ZED_EMAIL that zed-functions.sh still honours when the first is empty.
	Email    []string
	EmailKey string
	// MailProgram is ZED_EMAIL_PROG or its default, mail; MailProgramFound
	// whether it is installed (without it ZED's mail fails, and nobody
	// gets it).
	MailProgram      string
	MailProgramFound bool
	// Verbose is ZED_NOTIFY_VERBOSE=1: a notification after every scrub
	// and resilver, healthy or not.
	Verbose bool
	// Pushes are the push services configured, e.g. "Pushover", with the
	// key that turns each off.
	Pushes []Push
	// Zedlets are the enabled zedlets that notify (statechange-notify.sh,
	// data-notify.sh, ...): without one, ZED sends nothing whatever zed.rc
	// says.
	Zedlets []string
}

// Push is one push service of zed.rc.
type Push struct {
	Service string
	Key     string // the key whose empty value turns it off
}

// Notifies reports whether ZED sends a person anything: a zedlet that
// notifies is enabled, and a mail address with an installed mail program
// or a push service is configured.
func (z *ZED) Notifies() bool {
	return len(z.Zedlets) > 0 && (len(z.Email) > 0 && z.MailProgramFound || len(z.Pushes) > 0)
}

func detectZED(fs sysFS, running bool) (*ZED, error) {
	for _, dir := range ZEDDirs {
		rc := dir + "/zed.rc"
		b, err := fs.readConf(rc)
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		z := &ZED{Path: rc, Running: running}
		vars := parseRC(b)
		z.EmailKey = "ZED_EMAIL_ADDR"
		if vars["ZED_EMAIL_ADDR"] == "" && vars["ZED_EMAIL"] != "" {
			z.EmailKey = "ZED_EMAIL"
		}
		z.Email = strings.Fields(vars[z.EmailKey])
		z.MailProgram = vars["ZED_EMAIL_PROG"]
		if z.MailProgram == "" {
			z.MailProgram = "mail"
		}
		z.MailProgramFound = fs.onPath(z.MailProgram, zedPath)
		z.Verbose = vars["ZED_NOTIFY_VERBOSE"] == "1"
		for _, p := range zedPushes {
			set := true
			for _, k := range p.keys {
				set = set && vars[k] != ""
			}
			if set {
				z.Pushes = append(z.Pushes, Push{Service: p.service, Key: p.keys[0]})
			}
		}
		z.Zedlets, err = notifyingZedlets(fs, dir)
		return z, err
	}
	return nil, nil
}

// notifyingZedlets lists the zedlets of dir that notify and that ZED runs:
// (links to) regular files executable by their owner and writable by
// nobody else (zed_conf_scan_dir in OpenZFS's cmd/zed/zed_conf.c; it also
// wants root as owner, which only root can arrange, so it is not checked).
// Every zedlet that calls zed_notify is named *-notify.sh; before OpenZFS
// 0.7 they were *-email.sh.
func notifyingZedlets(fs sysFS, dir string) ([]string, error) {
	names, err := fs.names(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, ".") || !(strings.HasSuffix(n, "-notify.sh") || strings.HasSuffix(n, "-email.sh")) {
			continue
		}
		_, st, err := fs.resolve(dir + "/" + n)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o100 == 0 || st.Mode().Perm()&0o022 != 0 {
			continue
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// onPath reports whether prog, a path or a name looked up in dirs, is an
// executable file.
func (f sysFS) onPath(prog string, dirs []string) bool {
	if strings.Contains(prog, "/") {
		return f.executable(prog)
	}
	for _, d := range dirs {
		if f.executable(d + "/" + prog) {
			return true
		}
	}
	return false
}

// advice is the log line for a ZED that notifies.
func (z *ZED) advice() string {
	var what, keys []string
	if len(z.Email) > 0 && z.MailProgramFound {
		what = append(what, fmt.Sprintf("mails %s (%s)", strings.Join(z.Email, " "), z.EmailKey))
		keys = append(keys, z.EmailKey)
	}
	for _, p := range z.Pushes {
		what = append(what, fmt.Sprintf("pushes to %s (%s)", p.Service, p.Key))
		keys = append(keys, p.Key)
	}
	verbose := ""
	if z.Verbose {
		verbose = ", and after every scrub (ZED_NOTIFY_VERBOSE=1)"
	}
	state := "zed is running"
	if !z.Running {
		state = "zed is not running now, but will once started"
	}
	set := make([]string, len(keys))
	for i, k := range keys {
		set[i] = k + `=""`
	}
	return fmt.Sprintf("ZED also notifies about pool faults: it %s in %s, through its zedlets %s%s; %s. "+
		"One fault will send two notifications, ZED's and zwatch's. "+
		"Keep ZED running (its agents fault failing devices and start hot spares and auto-replace; zwatch reads the pool events without taking them from it) but silence it: "+
		"set %s in %s (each zedlet reads it anew, no restart needed). "+
		"Or keep ZED's messages and drop the matching zwatch channel. See %s",
		strings.Join(what, " and "), z.Path, strings.Join(z.Zedlets, ", "), verbose, state,
		strings.Join(set, " and "), z.Path, DocLink)
}

// parseRC reads the shell variable assignments of a zed.rc without running
// it: NAME=value, NAME="value", NAME='value', after an optional export,
// words of quoted and bare parts joined as the shell joins them. The last
// assignment of a name wins. Anything else (comments, tests, `: ${X:=y}`)
// is skipped, and a value with a substitution ($VAR, $(cmd), `cmd`) is kept
// as written: it counts as set, its meaning is not worked out.
func parseRC(b []byte) map[string]string {
	vars := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimPrefix(line, "export ")
		line = strings.TrimLeft(line, " \t")
		eq := strings.IndexByte(line, '=')
		if eq <= 0 || !isName(line[:eq]) {
			continue
		}
		if v, ok := shellWord(line[eq+1:]); ok {
			vars[line[:eq]] = v
		}
	}
	return vars
}

func isName(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// shellWord reads one shell word from the start of s: bare characters up
// to a blank, ';' or '#' at the start, single quotes literal, double quotes
// with \" \\ \$ \` escapes. ok is false for an unterminated quote, which
// the shell would refuse too.
func shellWord(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == ';' || c == '\r':
			return b.String(), true
		case c == '#' && i == 0:
			return "", true
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return "", false
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return "", false
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}
