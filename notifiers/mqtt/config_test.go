package mqtt_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
)

func parse(t *testing.T, channel string) (*config.Loaded, error) {
	t.Helper()
	return config.Parse(strings.NewReader("host: nas1\nstate_dir: /tmp/zw\nnotify:\n  console: false\n  channels:\n    - "+channel+"\n"), catalog.Config())
}

// TestConfigErrorsNameTheKeyAndTheFix checks each mistake is refused with
// its key path and what to write instead.
func TestConfigErrorsNameTheKeyAndTheFix(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for channel, want := range map[string]string{
		`{name: ha, type: mqtt}`:                                                     "notify.channels[0].broker: empty: set the broker, e.g. mqtt://homeassistant.local:1883",
		`{name: ha, type: mqtt, broker: "homeassistant.local:1883"}`:                 `notify.channels[0].broker = "homeassistant.local:1883": no scheme: write mqtt://homeassistant.local:1883 (or mqtts:// for TLS)`,
		`{name: ha, type: mqtt, broker: "http://ha:1883"}`:                           `scheme "http": write mqtt://host:1883`,
		`{name: ha, type: mqtt, broker: "ws://ha:9001"}`:                             "WebSockets are not supported",
		`{name: ha, type: mqtt, broker: "mqtt://ha:99999"}`:                          `notify.channels[0].broker = "mqtt://ha:99999": port "99999" must be 1-65535 (1883 for mqtt, 8883 for mqtts)`,
		`{name: ha, type: mqtt, broker: "mqtt://ha/zwatch"}`:                         "a broker URL has no path or query: write only mqtt://host:port",
		`{name: ha, type: mqtt, broker: "mqtt://u:hunter2@ha"}`:                      `notify.channels[0].broker = "mqtt://ha": credentials in the URL: set username and password as their own keys`,
		`{name: ha, type: mqtt, broker: "mqtt://ha", password: pw}`:                  "notify.channels[0].username: empty while password is set",
		`{name: ha, type: mqtt, broker: "mqtt://ha", ca_file: ` + ca + `}`:           "notify.channels[0].ca_file = \"" + ca + "\": only used with TLS: write the broker as mqtts://host:8883, or remove ca_file",
		`{name: ha, type: mqtt, broker: "mqtts://ha", ca_file: /nonexistent/ca.pem}`: `notify.channels[0].ca_file = "/nonexistent/ca.pem": cannot be read`,
		`{name: ha, type: mqtt, broker: "mqtt://ha", qos: 0}`:                        "notify.channels[0].qos = \"0\": must be 1 or 2: zwatch counts a notification delivered only once the broker acknowledged it",
		`{name: ha, type: mqtt, broker: "mqtt://ha", qos: 3}`:                        "notify.channels[0].qos = \"3\": must be 1 or 2",
		`{name: ha, type: mqtt, broker: "mqtt://ha", qos: high}`:                     "notify.channels[0].qos",
		`{name: ha, type: mqtt, broker: "mqtt://ha", topic_prefix: "zwatch/#"}`:      `notify.channels[0].topic_prefix = "zwatch/#": a topic prefix cannot hold the wildcards + or #`,
		`{name: ha, type: mqtt, broker: "mqtt://ha", topic_prefix: "/zwatch"}`:       "notify.channels[0].topic_prefix = \"/zwatch\": leading, trailing or doubled / make topics Home Assistant does not match",
		`{name: ha, type: mqtt, broker: "mqtt://ha", discovery_prefix: "$SYS"}`:      "notify.channels[0].discovery_prefix = \"$SYS\": topics beginning with $ are the broker's own",
		`{name: ha, type: mqtt, broker: "mqtt://ha", client_id: "nas one"}`:          "notify.channels[0].client_id = \"nas one\": must be at most 128 characters without spaces",
		`{name: ha, type: mqtt, broker: "mqtt://ha", topic: x}`:                      "notify.channels[0].topic: not used by type mqtt (its keys: broker, username, password, ca_file, client_id, topic_prefix, discovery_prefix, qos)",
		`{name: ha, type: mqtt, broker: "mqtt://ha", discovery_prefx: x}`:            `did you mean "discovery_prefix"?`,
	} {
		_, err := parse(t, channel)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\n  got  %v\n  want %q", channel, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the password in the URL is printed: %v", err)
		}
	}
}

// TestConfigDefaultsAndMaskedPassword: a minimal channel is valid, the
// password comes from the environment and check-config masks it.
func TestConfigDefaultsAndMaskedPassword(t *testing.T) {
	t.Setenv("ZW_MQTT_PASS", "s3cret-from-env")
	l, err := parse(t, `{name: ha, type: mqtt, broker: "mqtts://broker.example.net", username: zwatch, password: "${ZW_MQTT_PASS}", qos: 2}`)
	if err != nil {
		t.Fatal(err)
	}
	masked, err := l.Config.Masked()
	if err != nil {
		t.Fatal(err)
	}
	s := string(masked)
	if strings.Contains(s, "s3cret-from-env") || !strings.Contains(s, "password: '****** (from ${ZW_MQTT_PASS})'") ||
		!strings.Contains(s, "broker: mqtts://broker.example.net") || !strings.Contains(s, "qos: 2") {
		t.Errorf("Masked():\n%s", s)
	}
	if _, err := parse(t, `{name: ha, type: mqtt, broker: "mqtt://ha"}`); err != nil {
		t.Errorf("minimal channel: %v", err)
	}
}
