// Package exec is the exec channel: it runs a program the user names, with
// the notification as JSON on its stdin (the webhook channel's body,
// channel.Payload) and as ZWATCH_* environment variables, the way smartd's
// -M exec and ZFS's zedlets hand an event to a script.
//
// The program runs with an explicit argv (never a shell), in its own process
// group that is killed when it exits or its time is up, with only PATH and
// the variables the channel lists from zwatch's own environment (which holds
// secrets), and with its output bounded. It does not go through execx: execx
// allows one invocation per argv at a time, which suits a collector polling
// zpool but would refuse a second notification while the first one's script
// runs, and it takes no stdin.
package exec

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the exec channel type.
var Service = channel.Define[Config]("exec")

// Config is an exec channel's own keys.
type Config struct {
	// Command is the program (an absolute path) and its arguments, one list
	// item each: no shell reads them.
	Command []string `yaml:"command"`
	// Timeout bounds one run; default notify.send_timeout, which also caps it.
	Timeout config.Duration `yaml:"timeout"`
	// Env adds variables to the program's environment; their values are
	// secrets ("${PAGER_TOKEN}" passes zwatch's own).
	Env map[string]config.Secret `yaml:"env"`
}

var _ channel.Settings = Config{}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	if len(c.Command) == 0 {
		errs.Add(p+".command", nil, "empty: set the program and its arguments as a list, e.g. [/usr/local/bin/page-me, --urgent]")
	}
	for i, arg := range c.Command {
		key := fmt.Sprintf("%s.command[%d]", p, i)
		switch {
		case strings.ContainsRune(arg, 0):
			errs.Add(key, strings.ReplaceAll(arg, "\x00", `\0`), "contains a NUL byte, which no argument can hold")
		case i > 0:
		case arg == "":
			errs.Add(key, nil, "empty: set the absolute path of the program to run")
		case !filepath.IsAbs(arg):
			errs.Add(key, arg, "must be an absolute path (e.g. /usr/local/bin/%s): the program runs with a minimal PATH and no shell", filepath.Base(arg))
		case len(c.Command) == 1 && len(strings.Fields(arg)) > 1 && filepath.IsAbs(strings.Fields(arg)[0]):
			errs.Add(key, arg, "holds a whole command line, but no shell splits it: write the program and each argument as its own list item, e.g. [%s]", strings.Join(strings.Fields(arg), ", "))
		}
	}
	if c.Timeout.D() < 0 {
		errs.Add(p+".timeout", config.FormatDuration(c.Timeout.D()), "must be positive (e.g. 10s); leave it out for notify.send_timeout")
	}
	for name, v := range c.Env {
		key := p + ".env." + name
		switch {
		case !envName.MatchString(name):
			errs.Add(key, nil, "not a valid variable name: use letters, digits and _, not starting with a digit")
		case strings.HasPrefix(name, "ZWATCH_"):
			errs.Add(key, nil, "ZWATCH_* variables describe the notification and are set by zwatch: choose another name")
		case strings.ContainsRune(v.Value, 0):
			errs.Add(key, nil, "the value contains a NUL byte, which no environment variable can hold")
		}
	}
}

// HasLiteralSecret reports an env value written in the file itself.
func (c Config) HasLiteralSecret() bool {
	for _, v := range c.Env {
		if v.Literal {
			return true
		}
	}
	return false
}

// NewSender builds the channel's sender; it does not look for the program,
// which may be installed after zwatch starts.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env), nil }

// DefaultPath is the PATH the program gets unless env sets one.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// New builds the sender for c.
func New(c Config, env channel.Env) *Sender {
	limit := env.Timeout
	if limit <= 0 {
		limit = 30 * time.Second
	}
	s := &Sender{argv: append([]string(nil), c.Command...), timeout: limit, sendTimeout: limit}
	if t := c.Timeout.D(); t > 0 {
		s.timeout, s.ownTimeout = t, true
	}
	s.env = []string{"PATH=" + DefaultPath}
	for name, v := range c.Env {
		if name == "PATH" {
			s.env[0] = "PATH=" + v.Value
		} else {
			s.env = append(s.env, name+"="+v.Value)
		}
		s.secrets = append(s.secrets, v.Value)
	}
	return s
}

// Sender runs the program once per notification.
type Sender struct {
	argv []string
	// timeout is the channel's own bound; sendTimeout is notify.send_timeout,
	// which bounds every delivery attempt and so caps timeout.
	timeout, sendTimeout time.Duration
	ownTimeout           bool
	env                  []string
	secrets              []string
}

var (
	_ channel.Sender    = (*Sender)(nil)
	_ channel.Diagnoser = (*Sender)(nil)
)

// AddressKey is command.
func (s *Sender) AddressKey() string { return "command" }
