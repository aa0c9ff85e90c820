// Package mqtt is the MQTT channel: each notification is published as a
// JSON event to <topic_prefix>/<host>/notification, and Home Assistant's MQTT
// discovery turns the host into a device with an event entity for the
// notifications and a problem binary_sensor per pool and per disk, which is
// ON while an alert about it fires. It speaks MQTT 3.1.1 through Eclipse
// Paho (github.com/eclipse/paho.mqtt.golang), the client most brokers and
// Home Assistant installations are tested with.
package mqtt

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Service is the mqtt channel type.
var Service = channel.Define[Config]("mqtt")

// Defaults of the optional keys.
const (
	DefaultTopicPrefix     = "zwatch"
	DefaultDiscoveryPrefix = "homeassistant"
	DefaultQoS             = 1
	defaultPort            = "1883"
	defaultTLSPort         = "8883"
)

// Config is an mqtt channel's own keys.
type Config struct {
	// Broker is mqtt://host[:1883] or mqtts://host[:8883] (TLS).
	Broker   string        `yaml:"broker"`
	Username string        `yaml:"username"`
	Password config.Secret `yaml:"password"`
	// CAFile trusts a private CA or a self-signed broker certificate (mqtts).
	CAFile string `yaml:"ca_file"`
	// ClientID is the daemon's MQTT client id; default zwatch-<host>.
	ClientID string `yaml:"client_id"`
	// TopicPrefix begins zwatch's own topics; default zwatch.
	TopicPrefix string `yaml:"topic_prefix"`
	// DiscoveryPrefix is Home Assistant's discovery prefix; default homeassistant.
	DiscoveryPrefix string `yaml:"discovery_prefix"`
	// QoS of every publish, 1 (default) or 2: Send returns once the broker
	// acknowledged (PUBACK, or PUBCOMP for 2).
	QoS *int `yaml:"qos"`
}

var _ channel.Settings = Config{}

// Validate reports missing and impossible values under p.
func (c Config) Validate(p string, errs *config.Errors) {
	if _, err := parseBroker(c.Broker); err != nil {
		var shown any
		if strings.TrimSpace(c.Broker) != "" {
			shown = redactBroker(c.Broker)
		}
		errs.Add(p+".broker", shown, "%v", err)
	}
	tls := strings.HasPrefix(strings.ToLower(strings.TrimSpace(c.Broker)), "mqtts:")
	if c.Password.IsSet() && c.Username == "" {
		errs.Add(p+".username", nil, "empty while password is set: set the user the broker knows the password of")
	}
	if c.CAFile != "" {
		if !tls {
			errs.Add(p+".ca_file", c.CAFile, "only used with TLS: write the broker as mqtts://host:8883, or remove ca_file")
		} else if _, err := os.Stat(c.CAFile); err != nil {
			errs.Add(p+".ca_file", c.CAFile, "cannot be read: %v", err)
		}
	}
	if c.ClientID != "" {
		if len(c.ClientID) > 128 || strings.ContainsFunc(c.ClientID, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			errs.Add(p+".client_id", c.ClientID, "must be at most 128 characters without spaces or control characters (letters and digits are safest), or left out for zwatch-<host>")
		}
	}
	checkPrefix(errs, p+".topic_prefix", c.TopicPrefix, DefaultTopicPrefix)
	checkPrefix(errs, p+".discovery_prefix", c.DiscoveryPrefix, DefaultDiscoveryPrefix)
	if c.QoS != nil && *c.QoS != 1 && *c.QoS != 2 {
		errs.Add(p+".qos", *c.QoS, "must be 1 or 2: zwatch counts a notification delivered only once the broker acknowledged it, which QoS 0 never does")
	}
}

// checkPrefix refuses a topic prefix that is not a plain topic name.
func checkPrefix(errs *config.Errors, path, v, def string) {
	if v == "" {
		return
	}
	switch {
	case strings.ContainsAny(v, "+#\x00"):
		errs.Add(path, v, "a topic prefix cannot hold the wildcards + or #: write a plain topic, e.g. %s", def)
	case strings.HasPrefix(v, "/") || strings.HasSuffix(v, "/") || strings.Contains(v, "//"):
		errs.Add(path, v, "leading, trailing or doubled / make topics Home Assistant does not match: write it like %s or site/%s", def, def)
	case strings.HasPrefix(v, "$"):
		errs.Add(path, v, "topics beginning with $ are the broker's own ($SYS): choose another prefix, e.g. %s", def)
	case len(v) > 200:
		errs.Add(path, v, "too long: keep a prefix under 200 bytes")
	}
}

// HasLiteralSecret reports a password written in the file itself.
func (c Config) HasLiteralSecret() bool { return c.Password.Literal }

// NewSender builds the channel's sender; it reads ca_file but connects to
// nothing: the first send does.
func (c Config) NewSender(env channel.Env) (channel.Sender, error) { return New(c, env) }

// broker is a parsed broker key.
type broker struct {
	tls  bool
	host string
	port string
}

// server is the broker address as Paho takes it.
func (b broker) server() string {
	if b.tls {
		return "ssl://" + net.JoinHostPort(b.host, b.port)
	}
	return "tcp://" + net.JoinHostPort(b.host, b.port)
}

// String is the broker as the config writes it, for messages.
func (b broker) String() string {
	scheme := "mqtt"
	if b.tls {
		scheme = "mqtts"
	}
	return scheme + "://" + net.JoinHostPort(b.host, b.port)
}

func parseBroker(v string) (broker, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return broker{}, fmt.Errorf("empty: set the broker, e.g. mqtt://homeassistant.local:1883 (or mqtts://host:8883 for TLS)")
	}
	if !strings.Contains(v, "://") {
		return broker{}, fmt.Errorf("no scheme: write mqtt://%s (or mqtts:// for TLS)", v)
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return broker{}, fmt.Errorf("not a broker URL: write mqtt://host:1883, or mqtts://host:8883 for TLS")
	}
	b := broker{host: u.Hostname(), port: u.Port()}
	switch strings.ToLower(u.Scheme) {
	case "mqtt":
		if b.port == "" {
			b.port = defaultPort
		}
	case "mqtts":
		b.tls = true
		if b.port == "" {
			b.port = defaultTLSPort
		}
	default:
		return broker{}, fmt.Errorf("scheme %q: write mqtt://host:1883, or mqtts://host:8883 for TLS (WebSockets are not supported)", u.Scheme)
	}
	switch {
	case u.User != nil:
		return broker{}, fmt.Errorf("credentials in the URL: set username and password as their own keys (the password as ${ENV} or file:)")
	case u.Path != "" && u.Path != "/" || u.RawQuery != "":
		return broker{}, fmt.Errorf("a broker URL has no path or query: write only mqtt://host:port")
	case b.host == "":
		return broker{}, fmt.Errorf("no host: write mqtt://host:1883")
	}
	if n, err := strconv.Atoi(b.port); err != nil || n < 1 || n > 65535 {
		return broker{}, fmt.Errorf("port %q must be 1-65535 (1883 for mqtt, 8883 for mqtts)", b.port)
	}
	return b, nil
}

// redactBroker shows a bad broker value without credentials written into it.
func redactBroker(v string) string {
	if u, err := url.Parse(strings.TrimSpace(v)); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	return v
}
