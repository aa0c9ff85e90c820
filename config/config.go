// Package config loads and validates zwatch's YAML configuration. A config
// that is wrong in any way — an unknown key, a wrong type, a bad duration,
// an impossible value — is refused with errors that name the key path, the
// value and the fix, so zwatch never starts on a misunderstanding.
package config

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/zwatch/zwatch/internal/input"
	"github.com/zwatch/zwatch/internal/yamlcheck"
	"gopkg.in/yaml.v3"
)

// maxConfigSize bounds what Parse reads: a config is a few KiB, and a path
// named by mistake (a log, /dev/zero) must not be read whole.
const maxConfigSize = 4 << 20

// DefaultPath is where zwatch looks for its config when none is named.
const DefaultPath = "/etc/zwatch/zwatch.yaml"

// Config is the whole configuration. Every key is documented with its
// default in configs/zwatch.example.yaml.
type Config struct {
	// Host names this machine on the bus; default: the system host name.
	Host string `yaml:"host"`
	// Role is what this process runs: RoleAll, RoleAgent or RoleServer.
	Role        string            `yaml:"role"`
	StateDir    string            `yaml:"state_dir"`
	Log         LogConfig         `yaml:"log"`
	Bus         BusConfig         `yaml:"bus"`
	ZFS         ZFSConfig         `yaml:"zfs"`
	Smart       SmartConfig       `yaml:"smart"`
	Kernel      KernelConfig      `yaml:"kernel"`
	Disks       DisksConfig       `yaml:"disks"`
	Heartbeat   HeartbeatConfig   `yaml:"heartbeat"`
	Maintenance MaintenanceConfig `yaml:"maintenance"`
	Rules       RulesConfig       `yaml:"rules"`
	Notify      NotifyConfig      `yaml:"notify"`
	Fleet       FleetConfig       `yaml:"fleet"`
	HTTP        HTTPConfig        `yaml:"http"`
	History     HistoryConfig     `yaml:"history"`
	Memory      MemoryConfig      `yaml:"memory"`
	Actions     ActionsConfig     `yaml:"actions"`
	// Collectors sets the collectors that have keys of their own, by name
	// (collectors.go); the built-in ones read theirs under zfs:, smart:
	// and disks:.
	Collectors map[string]CollectorConfig `yaml:"collectors"`
}

// Roles of a zwatch process (key role, flag --role).
const (
	// RoleAll runs collectors, the rule engine and the notifiers (one machine).
	RoleAll = "all"
	// RoleAgent runs the collectors only and publishes to bus.url.
	RoleAgent = "agent"
	// RoleServer runs the rule engine and the notifiers only.
	RoleServer = "server"
)

// FleetConfig tunes zwatch on many machines (docs/fleet.md).
type FleetConfig struct {
	// Buffer is how many messages an agent keeps while the bus is
	// unreachable; when full, the oldest is dropped and counted.
	Buffer int `yaml:"buffer"`
	// LeaseTTL is how long the active rule engine's lease outlives its last
	// renewal: a standby server takes over within about this long.
	LeaseTTL Duration `yaml:"lease_ttl"`
	// Partitions splits the hosts among the servers' rule engines: each
	// server runs the engines of its share of this many partitions
	// (docs/fleet.md). 1: one engine on one server at a time.
	Partitions int `yaml:"partitions"`
}

// ValidateRole checks role against the bus settings (also after --role).
func (c *Config) ValidateRole() error {
	var errs Errors
	c.validateRole(&errs)
	if len(errs) == 0 {
		return nil
	}
	return errs
}

func (c *Config) validateRole(errs *Errors) {
	oneOf(errs, "role", c.Role, RoleAll, RoleAgent, RoleServer)
	switch {
	case c.Role == RoleAgent && c.Bus.URL == "":
		errs.add("role", c.Role, "an agent publishes to a remote NATS cluster: set bus.url (and its credentials and TLS)")
	case c.Role == RoleServer && c.Bus.URL == "" && c.Bus.Listen == "":
		errs.add("role", c.Role, "a server without bus.url or bus.listen cannot hear any agent: set one of them")
	}
}

// LogConfig sets log verbosity and format.
type LogConfig struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// BusConfig says where the NATS bus is.
type BusConfig struct {
	// Listen opens a NATS listener on the embedded server for remote agents;
	// every client must authenticate (zwatch fleet add-host).
	Listen string `yaml:"listen"`
	// ListenTLS is the listener's certificate; required unless Listen is
	// a loopback address.
	ListenTLS ListenTLSConfig `yaml:"listen_tls"`
	URL       string          `yaml:"url"`
	CredsFile string          `yaml:"creds_file"`
	User      string          `yaml:"user"`
	Password  Secret          `yaml:"password"`
	TLS       TLSConfig       `yaml:"tls"`
	Replicas  int             `yaml:"replicas"`
	// FactsMaxAge and FactsMaxMB bound the stream that buffers collector
	// messages until the rule engine has read them.
	FactsMaxAge Duration `yaml:"facts_max_age"`
	FactsMaxMB  int      `yaml:"facts_max_mb"`
}

// TLSConfig names PEM files for a TLS connection.
type TLSConfig struct {
	CA   string `yaml:"ca"`
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// ListenTLSConfig names the embedded server's PEM certificate and key.
type ListenTLSConfig struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// ZFSConfig configures the ZFS collectors.
type ZFSConfig struct {
	Enabled        bool     `yaml:"enabled"`
	Zpool          string   `yaml:"zpool"`
	Zfs            string   `yaml:"zfs"`
	CommandTimeout Duration `yaml:"command_timeout"`
	ListInterval   Duration `yaml:"list_interval"`
	StatusInterval Duration `yaml:"status_interval"`
	FollowEvents   bool     `yaml:"follow_events"`
	ARCInterval    Duration `yaml:"arc_interval"`
	// DatasetsInterval: every filesystem and volume with its mount and key
	// state (zfs list); also at once after a pool import, export or key event.
	DatasetsInterval Duration `yaml:"datasets_interval"`
	// SnapshotsInterval: one zfs list -t snapshot, summed up per dataset.
	SnapshotsInterval Duration `yaml:"snapshots_interval"`
	// ImportInterval: how often zpool import looks again for pools that are
	// present but not imported, while one is (it reads every disk's labels).
	ImportInterval Duration `yaml:"import_interval"`
	// CacheFile is the pool cache file whose pools are imported at boot;
	// zpool import -c reads it for pools that did not import.
	CacheFile string `yaml:"cache_file"`
	// VersionInterval: how often `zfs version` compares the userland with
	// the loaded kernel module (and once at start).
	VersionInterval Duration `yaml:"version_interval"`
}

// KernelConfig configures the kernel log follower (Linux).
type KernelConfig struct {
	// Enabled follows the kernel log for disk, link and controller errors.
	Enabled bool `yaml:"enabled"`
	// Kmsg is the kernel's log device, read directly (no dmesg, no journal).
	Kmsg string `yaml:"kmsg"`
}

// DisksConfig configures the disk inventory (sysfs and /dev/disk/by-id).
type DisksConfig struct {
	// Interval: how often the disks present are listed (and at once when the
	// kernel log says one left).
	Interval Duration `yaml:"interval"`
}

// SmartConfig configures the SMART collector.
type SmartConfig struct {
	Enabled  bool          `yaml:"enabled"`
	Smartctl string        `yaml:"smartctl"`
	Interval Duration      `yaml:"interval"`
	Timeout  Duration      `yaml:"timeout"`
	Devices  []SmartDevice `yaml:"devices"`
	// UrgentMinInterval: a disk the kernel log or ZFS names as misbehaving
	// is read at once, but at most once per this long.
	UrgentMinInterval Duration `yaml:"urgent_min_interval"`
}

// SmartDevice lists a disk explicitly, with the smartctl -d type it needs.
type SmartDevice struct {
	Device string `yaml:"device"`
	Type   string `yaml:"type"`
}

// HeartbeatConfig pings an external URL every cycle so that a person learns
// when zwatch itself is down (healthchecks.io, Uptime Kuma push monitors).
type HeartbeatConfig struct {
	URL      string   `yaml:"url"`
	Interval Duration `yaml:"interval"`
}

// Default returns the configuration used for every key the file omits.
func Default() Config {
	host, _ := os.Hostname()
	return Config{
		Host:     host,
		StateDir: "/var/lib/zwatch",
		Log:      LogConfig{Level: "info", Format: "text"},
		Bus:      BusConfig{Replicas: 1, FactsMaxAge: Duration(24 * time.Hour), FactsMaxMB: 24},
		ZFS: ZFSConfig{
			Enabled: true, Zpool: "zpool", Zfs: "zfs",
			CommandTimeout:    Duration(30 * time.Second),
			ListInterval:      Duration(10 * time.Second),
			StatusInterval:    Duration(60 * time.Second),
			FollowEvents:      true,
			ARCInterval:       Duration(60 * time.Second),
			DatasetsInterval:  Duration(5 * time.Minute),
			SnapshotsInterval: Duration(15 * time.Minute),
			ImportInterval:    Duration(15 * time.Minute),
			CacheFile:         "/etc/zfs/zpool.cache",
			VersionInterval:   Duration(24 * time.Hour),
		},
		Smart: SmartConfig{
			Enabled: true, Smartctl: "smartctl",
			Interval: Duration(30 * time.Minute),
			Timeout:  Duration(60 * time.Second),

			UrgentMinInterval: Duration(5 * time.Minute),
		},
		Kernel:      KernelConfig{Enabled: true, Kmsg: "/dev/kmsg"},
		Disks:       DisksConfig{Interval: Duration(time.Minute)},
		Heartbeat:   HeartbeatConfig{Interval: Duration(5 * time.Minute)},
		Role:        RoleAll,
		Fleet:       FleetConfig{Buffer: 10000, LeaseTTL: Duration(15 * time.Second), Partitions: 64},
		Maintenance: DefaultMaintenance(),
		Rules:       DefaultRules(),
		Notify:      DefaultNotify(),
		HTTP:        HTTPConfig{Listen: DefaultHTTPListen},
		History:     DefaultHistory(),
		Memory:      DefaultMemory(),
	}
}

// Loaded is a validated config and what a person should hear about it.
type Loaded struct {
	Config   Config
	Path     string
	Warnings []string
}

// Load reads, validates and returns the config at path; cat names the rules
// and channel types that exist (catalog.Config()).
func Load(path string, cat Catalog) (*Loaded, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("config file %s does not exist: copy configs/zwatch.example.yaml there, or name another file with --config", path)
		}
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	defer f.Close()
	l, err := Parse(f, cat)
	if err != nil {
		return nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	l.Path = path
	if st, err := f.Stat(); err == nil && st.Mode().Perm()&0o044 != 0 && l.Config.hasLiteralSecret() {
		l.Warnings = append(l.Warnings, fmt.Sprintf("%s holds a secret and is readable by other users (mode %04o): run chmod 600 %s, or move the secret to ${ENV} or file:", path, st.Mode().Perm(), path))
	}
	return l, nil
}

// Parse reads and validates a config from r against the extensions in cat.
func Parse(r io.Reader, cat Catalog) (*Loaded, error) {
	data, err := input.From("config", r, maxConfigSize)
	if err != nil {
		return nil, err
	}
	cfg := Default()
	if len(bytes.TrimSpace(data)) > 0 {
		var root yaml.Node
		if err := yaml.Unmarshal(data, &root); err != nil {
			return nil, fmt.Errorf("not valid YAML: %w", err)
		}
		var errs Errors
		for _, p := range yamlcheck.Check(&root, reflect.TypeFor[Config](), yamlcheck.Options{}) {
			errs.addProblem(p)
		}
		checkRules(&root, cat, &errs)
		checkChannels(&root, cat, &errs)
		if len(errs) > 0 {
			return nil, errs
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	if strings.TrimSpace(cfg.Host) == "" {
		cfg.Host, _ = os.Hostname()
	}
	var errs Errors
	cfg.validate(&errs, cat)
	if len(errs) > 0 {
		return nil, errs
	}
	return &Loaded{Config: cfg}, nil
}

// placeAt puts the problems from index from on, those that name no line
// of their own, at line: where the key they were decoded from stands, so
// they take their place among the rest (mergeByLine).
func (es Errors) placeAt(from, line int) {
	for _, e := range es[from:] {
		if e.line == 0 {
			e.line = line
		}
	}
}

// Error is one problem with one key.
type Error struct {
	Path    string
	Value   string
	Problem string
	// line is where in the file a structural problem is, so that the
	// channels' problems take their place among the rest (checkChannels).
	line int
}

func (e *Error) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("%s = %s: %s", e.Path, e.Value, e.Problem)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Problem)
}

// Errors collects every problem so a person can fix them in one go.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = "  " + e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es *Errors) add(path string, value any, format string, args ...any) {
	v := ""
	if value != nil {
		v = fmt.Sprintf("%q", fmt.Sprint(value))
	}
	*es = append(*es, &Error{Path: path, Value: v, Problem: fmt.Sprintf(format, args...)})
}

// addProblem adds what yamlcheck found, with the document itself named
// "(top level)".
func (es *Errors) addProblem(p yamlcheck.Problem) {
	path := p.Path
	if path == "" {
		path = "(top level)"
	}
	var v any
	if p.Value != "" {
		v = p.Value
	}
	es.add(path, v, "%s", p.Message)
	(*es)[len(*es)-1].line = p.Line
}

func (c *Config) validate(errs *Errors, cat Catalog) {
	if strings.TrimSpace(c.Host) == "" {
		errs.add("host", c.Host, "empty and the system has no host name: set the name this machine has on the bus")
	}
	if c.StateDir == "" {
		errs.add("state_dir", nil, "empty: set a writable directory such as /var/lib/zwatch")
	}
	oneOf(errs, "log.level", c.Log.Level, "debug", "info", "warn", "error")
	oneOf(errs, "log.format", c.Log.Format, "text", "json")
	if c.Bus.URL != "" && c.Bus.Listen != "" {
		errs.add("bus.listen", c.Bus.Listen, "cannot be used with bus.url: with an external NATS server zwatch embeds none; remove one of them")
	}
	if c.Bus.URL != "" && !strings.Contains(c.Bus.URL, "://") {
		errs.add("bus.url", c.Bus.URL, "want a NATS URL such as nats://nats1:4222 or tls://nats1:4222")
	}
	if (c.Bus.TLS.Cert == "") != (c.Bus.TLS.Key == "") {
		errs.add("bus.tls", nil, "cert and key go together: set both or neither")
	}
	c.Bus.validateListen(errs)
	for _, f := range []struct{ path, file string }{{"bus.creds_file", c.Bus.CredsFile}, {"bus.tls.ca", c.Bus.TLS.CA}, {"bus.tls.cert", c.Bus.TLS.Cert}, {"bus.tls.key", c.Bus.TLS.Key},
		{"bus.listen_tls.cert", c.Bus.ListenTLS.Cert}, {"bus.listen_tls.key", c.Bus.ListenTLS.Key}} {
		if f.file == "" {
			continue
		}
		if _, err := os.Stat(f.file); err != nil {
			errs.add(f.path, f.file, "cannot be read: %v", err)
		}
	}
	positive(errs, "bus.facts_max_age", c.Bus.FactsMaxAge, time.Minute)
	if c.Bus.FactsMaxMB < 1 || c.Bus.FactsMaxMB > 1<<20 {
		errs.add("bus.facts_max_mb", c.Bus.FactsMaxMB, "must be 1 to 1048576 (MiB); about 7 MiB a minute per 1,000 hosts × 12 disks")
	}
	if c.Bus.Replicas < 1 || c.Bus.Replicas > 5 {
		errs.add("bus.replicas", c.Bus.Replicas, "must be 1 to 5 (1 on one machine, 3 in a three-node cluster)")
	}
	positive(errs, "zfs.command_timeout", c.ZFS.CommandTimeout, time.Second)
	positive(errs, "zfs.list_interval", c.ZFS.ListInterval, time.Second)
	positive(errs, "zfs.status_interval", c.ZFS.StatusInterval, time.Second)
	positive(errs, "zfs.arc_interval", c.ZFS.ARCInterval, time.Second)
	positive(errs, "zfs.datasets_interval", c.ZFS.DatasetsInterval, time.Second)
	positive(errs, "zfs.snapshots_interval", c.ZFS.SnapshotsInterval, time.Second)
	positive(errs, "zfs.import_interval", c.ZFS.ImportInterval, time.Minute)
	if c.ZFS.CacheFile != "" && !strings.HasPrefix(c.ZFS.CacheFile, "/") {
		errs.add("zfs.cache_file", c.ZFS.CacheFile, "want an absolute path such as /etc/zfs/zpool.cache, or \"\" for none")
	}
	positive(errs, "smart.interval", c.Smart.Interval, time.Minute)
	positive(errs, "smart.timeout", c.Smart.Timeout, time.Second)
	positive(errs, "smart.urgent_min_interval", c.Smart.UrgentMinInterval, time.Minute)
	positive(errs, "zfs.version_interval", c.ZFS.VersionInterval, time.Minute)
	positive(errs, "disks.interval", c.Disks.Interval, 10*time.Second)
	c.validateCollectors(errs, cat.Collectors)
	if c.Kernel.Enabled && !strings.HasPrefix(c.Kernel.Kmsg, "/") {
		errs.add("kernel.kmsg", c.Kernel.Kmsg, "want the absolute path of the kernel log device, normally /dev/kmsg")
	}
	for i, d := range c.Smart.Devices {
		if !strings.HasPrefix(d.Device, "/dev/") {
			errs.add(fmt.Sprintf("smart.devices[%d].device", i), d.Device, "want a device path such as /dev/disk/by-id/ata-... or /dev/sda")
		}
	}
	if c.Heartbeat.URL != "" && !strings.HasPrefix(c.Heartbeat.URL, "http://") && !strings.HasPrefix(c.Heartbeat.URL, "https://") {
		errs.add("heartbeat.url", c.Heartbeat.URL, "want an http:// or https:// URL (e.g. https://hc-ping.com/<uuid>)")
	}
	positive(errs, "heartbeat.interval", c.Heartbeat.Interval, 10*time.Second)
	c.validateRole(errs)
	c.validateActions(errs)
	if c.Fleet.Buffer < 100 || c.Fleet.Buffer > 1000000 {
		errs.add("fleet.buffer", c.Fleet.Buffer, "must be 100 to 1000000 messages")
	}
	positive(errs, "fleet.lease_ttl", c.Fleet.LeaseTTL, 3*time.Second)
	if c.Fleet.LeaseTTL.D() > 5*time.Minute {
		errs.add("fleet.lease_ttl", FormatDuration(c.Fleet.LeaseTTL.D()), "too long: at most 5m (a standby server waits this long to take over)")
	}
	if c.Fleet.Partitions < 1 || c.Fleet.Partitions > 1024 { // bus.MaxPartitions
		errs.add("fleet.partitions", c.Fleet.Partitions, "must be 1 to 1024, the same on every server")
	}
	c.Maintenance.validate("maintenance", errs)
	c.HTTP.validate(errs)
	c.History.validate(errs)
	c.Memory.validate(errs)
	c.Rules.validate("rules", errs, cat)
	c.Notify.validate("notify", errs, cat)
}

// validateListen: the listener needs TLS unless it is loopback, whose
// traffic other machines cannot see.
func (b *BusConfig) validateListen(errs *Errors) {
	hasTLS := b.ListenTLS.Cert != "" || b.ListenTLS.Key != ""
	if (b.ListenTLS.Cert == "") != (b.ListenTLS.Key == "") {
		errs.add("bus.listen_tls", nil, "cert and key go together: set both or neither")
	}
	if b.Listen == "" {
		if hasTLS {
			errs.add("bus.listen_tls", nil, "has no effect without bus.listen: set bus.listen, or remove bus.listen_tls")
		}
		return
	}
	host, _, err := net.SplitHostPort(b.Listen)
	if err != nil {
		errs.add("bus.listen", b.Listen, "want host:port such as 127.0.0.1:4222")
		return
	}
	if b.ListenTLS.Cert != "" && b.ListenTLS.Key != "" {
		if _, err := tls.LoadX509KeyPair(b.ListenTLS.Cert, b.ListenTLS.Key); err != nil {
			errs.add("bus.listen_tls", nil, "cert %s and key %s do not load as a PEM certificate and its key: %v", b.ListenTLS.Cert, b.ListenTLS.Key, err)
		}
	}
	if ip := net.ParseIP(host); !hasTLS && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		errs.add("bus.listen", b.Listen, "reaches other machines, so it needs TLS: set bus.listen_tls.cert and bus.listen_tls.key (this server's PEM certificate and key), or listen on 127.0.0.1")
	}
}

func oneOf(errs *Errors, path, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	errs.add(path, v, "must be one of %s", strings.Join(allowed, ", "))
}

func positive(errs *Errors, path string, d Duration, min time.Duration) {
	if d.D() < min {
		errs.add(path, FormatDuration(d.D()), "too short: must be at least %s", FormatDuration(min))
	}
}

func (c *Config) hasLiteralSecret() bool {
	if c.Bus.Password.Literal {
		return true
	}
	return c.Notify.hasLiteralSecret()
}

// Masked renders the effective config as YAML with every secret masked.
func (c *Config) Masked() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("render config: %w", err)
	}
	return buf.Bytes(), nil
}
