package bus

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"golang.org/x/crypto/bcrypt"
)

// ServerUser is the NATS user of the zwatch process itself (and of the
// zwatch commands that read the bus through the listener): no restriction.
const ServerUser = "zwatch-server"

// authFileVersion is the layout of the credentials file.
const authFileVersion = 1

// bcryptCost of agent passwords: about 50 ms per connection on a small CPU,
// paid once per agent connection (agents stay connected).
const bcryptCost = bcrypt.DefaultCost

// Auth is the embedded server's users, kept in AuthPath(stateDir) (mode
// 0600 in a 0700 directory). The server password is kept in clear so that
// zwatch commands on this machine can connect as the server; an agent's
// password is kept only as its bcrypt hash and shown once when created.
type Auth struct {
	Version int         `json:"version"`
	Server  ServerCred  `json:"server"`
	Agents  []AgentCred `json:"agents"`
}

// ServerCred is the server identity's user and password.
type ServerCred struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// AgentCred is one agent's user: the host's subject token as user name.
type AgentCred struct {
	Host     string    `json:"host"`
	User     string    `json:"user"`
	Bcrypt   string    `json:"password_bcrypt"`
	Created  time.Time `json:"created"`
	Replaced time.Time `json:"replaced,omitzero"`
}

// AuthPath is the credentials file of the embedded server under stateDir.
func AuthPath(stateDir string) string {
	return filepath.Join(stateDir, "bus-auth", "users.json")
}

// AgentUser is the NATS user name of host's agent: its subject token.
func AgentUser(host string) string { return Token(host) }

// AgentInbox is the reply prefix of host's agent (bus.Options.InboxPrefix).
func AgentInbox(host string) string { return "_INBOX_" + Token(host) }

// AgentPermissions are what docs/fleet.md gives an agent on an external
// cluster: publish its own facts, but no alert and nothing into its history
// (the server's record of what it sent); receive only the replies to its own
// inbox (JetStream publish acknowledgements). No $JS.API, so it can neither
// read nor purge a stream or the state bucket.
func AgentPermissions(host string) *server.Permissions {
	t := Token(host)
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{"zwatch." + Version + "." + t + ".>"}, Deny: []string{Subject(host, KindAlert), Subject(host, KindHistory) + ".>"}},
		Subscribe: &server.SubjectPermission{Allow: []string{AgentInbox(host) + ".>"}},
	}
}

// serverUsers are the NATS users the embedded server accepts.
func (a *Auth) serverUsers() []*server.User {
	users := []*server.User{{Username: a.Server.User, Password: a.Server.Password}}
	for _, ag := range a.Agents {
		users = append(users, &server.User{Username: ag.User, Password: ag.Bcrypt, Permissions: AgentPermissions(ag.Host)})
	}
	return users
}

// Agent returns host's entry.
func (a *Auth) Agent(host string) (AgentCred, bool) {
	i := slices.IndexFunc(a.Agents, func(c AgentCred) bool { return c.User == AgentUser(host) })
	if i < 0 {
		return AgentCred{}, false
	}
	return a.Agents[i], true
}

// LoadAuth reads the credentials file; an error wrapping fs.ErrNotExist
// when there is none yet.
func LoadAuth(stateDir string) (*Auth, error) {
	path := AuthPath(stateDir)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bus credentials %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("bus credentials %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("bus credentials %s is not a regular file: remove it, zwatch creates a new one", path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("bus credentials %s are readable by other users (mode %04o): run chmod 600 %s, and zwatch fleet add-host --rotate for every agent if others could have read it", path, st.Mode().Perm(), path)
	}
	var a Auth
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("bus credentials %s are damaged: %w (move the file away; zwatch creates a new one and every agent needs zwatch fleet add-host again)", path, err)
	}
	if a.Version != authFileVersion || a.Server.User != ServerUser || len(a.Server.Password) < 16 {
		return nil, fmt.Errorf("bus credentials %s: version %d, server user %q: not written by this zwatch (move the file away; zwatch creates a new one)", path, a.Version, a.Server.User)
	}
	return &a, nil
}

// EnsureAuth loads the credentials file, creating it with a new server
// password when there is none.
func EnsureAuth(stateDir string) (*Auth, error) {
	var a *Auth
	err := withAuthLock(stateDir, func() error {
		var err error
		a, err = LoadAuth(stateDir)
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		pw, err := newPassword()
		if err != nil {
			return err
		}
		a = &Auth{Version: authFileVersion, Server: ServerCred{User: ServerUser, Password: pw}}
		return writeAuth(stateDir, a)
	})
	return a, err
}

// ErrAgentExists says that the host has credentials already (AddAgent
// without rotate).
var ErrAgentExists = errors.New("agent has credentials already")

// AddAgent creates credentials for host's agent and returns its password
// (shown once: only its hash is kept). A host that has them already gets
// ErrAgentExists, unless rotate, which replaces its password: the running
// server then disconnects the agent until it uses the new one.
func AddAgent(stateDir, host string, rotate bool, now time.Time) (string, error) {
	if err := validAgentHost(host); err != nil {
		return "", err
	}
	if _, err := EnsureAuth(stateDir); err != nil {
		return "", err
	}
	var pw string
	err := withAuthLock(stateDir, func() error {
		a, err := LoadAuth(stateDir)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(a.Agents, func(c AgentCred) bool { return c.User == AgentUser(host) })
		if i >= 0 && !rotate {
			return fmt.Errorf("host %s (user %s, created %s): %w; use --rotate to replace its password", host, a.Agents[i].User, a.Agents[i].Created.Format(time.RFC3339), ErrAgentExists)
		}
		if pw, err = newPassword(); err != nil {
			return err
		}
		hash, err := bcrypt.GenerateFromPassword([]byte(pw), bcryptCost)
		if err != nil {
			return fmt.Errorf("hash the password of %s: %w", host, err)
		}
		if i >= 0 {
			a.Agents[i].Bcrypt, a.Agents[i].Replaced = string(hash), now.UTC()
		} else {
			a.Agents = append(a.Agents, AgentCred{Host: host, User: AgentUser(host), Bcrypt: string(hash), Created: now.UTC()})
		}
		return writeAuth(stateDir, a)
	})
	return pw, err
}

// RemoveAgent deletes host's credentials; the running server then closes
// the agent's connection. ErrAgentUnknown when it has none.
func RemoveAgent(stateDir, host string) error {
	return withAuthLock(stateDir, func() error {
		a, err := LoadAuth(stateDir)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(a.Agents, func(c AgentCred) bool { return c.User == AgentUser(host) })
		if i < 0 {
			return fmt.Errorf("host %s (user %s): %w", host, AgentUser(host), ErrAgentUnknown)
		}
		a.Agents = slices.Delete(a.Agents, i, i+1)
		return writeAuth(stateDir, a)
	})
}

// ErrAgentUnknown says that the host has no credentials.
var ErrAgentUnknown = errors.New("no such agent: zwatch fleet hosts lists them")

func validAgentHost(host string) error {
	switch {
	case host == "" || strings.TrimSpace(host) != host:
		return fmt.Errorf("host name %q: want the agent's host: value, without spaces around it", host)
	case len(host) > 253:
		return fmt.Errorf("host name %.20q...: longer than 253 characters", host)
	case AgentUser(host) == ServerUser:
		return fmt.Errorf("host name %q is the server's own user name: name the agent differently", host)
	}
	return nil
}

func newPassword() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// writeAuth replaces the file atomically, so that a server reloading it
// never reads half of it.
func writeAuth(stateDir string, a *Auth) error {
	path := AuthPath(stateDir)
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return fmt.Errorf("encode bus credentials: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".users-*.json")
	if err != nil {
		return fmt.Errorf("write bus credentials in %s: %w", filepath.Dir(path), err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write bus credentials %s: %w", path, err)
	}
	return nil
}

// withAuthLock runs fn holding an exclusive lock on the credentials
// directory (made 0700 if missing), so that two add-host never lose one.
func withAuthLock(stateDir string, fn func() error) error {
	dir := filepath.Dir(AuthPath(stateDir))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("bus credentials directory %s: %w (fix the state directory's permissions, or point --state-dir elsewhere)", dir, err)
	}
	if st, err := os.Stat(dir); err == nil && st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("bus credentials directory %s is open to other users (mode %04o) and cannot be closed: %w", dir, st.Mode().Perm(), err)
		}
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("lock bus credentials in %s: %w", dir, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock bus credentials in %s: %w", dir, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	return fn()
}
