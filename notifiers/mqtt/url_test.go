package mqtt_test

import (
	"testing"

	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/mqtt"
)

// The URL form is apprise's (https://github.com/caronc/apprise/wiki/Notify_mqtt:
// mqtt://[user[:password]@]host[:port]/topic, mqtts:// for TLS, qos,
// client_id, retain, session, version) and the newer shoutrrr's
// (https://github.com/nicholas-fedor/shoutrrr/blob/main/docs/services/push/mqtt/index.md:
// clientid, retained, cleansession, disabletls, disabletlsverification);
// the path is zwatch's topic_prefix.
func TestMQTTURL(t *testing.T) {
	notifytest.CheckURLs(t, mqtt.Service, []string{"hunter2pass"}, []notifytest.URLCase{
		{URL: "mqtt://homeassistant.local", Want: mqtt.Config{Broker: "mqtt://homeassistant.local"}, Masked: "mqtt://homeassistant.local"},
		{URL: "mqtt://zwatch:hunter2pass@homeassistant.local:1883/site/nas?qos=2&clientid=zwatch-nas1",
			Want: mqtt.Config{Broker: "mqtt://homeassistant.local:1883", Username: "zwatch", Password: notifytest.Lit("hunter2pass"),
				TopicPrefix: "site/nas", QoS: notifytest.Int(2), ClientID: "zwatch-nas1"},
			Masked: "mqtt://***@homeassistant.local:1883/site/nas?qos=2&clientid=zwatch-nas1"},
		{URL: "MQTTS://zwatch@broker.example.net/zwatch/?client_id=nas1&QoS=1",
			Want:   mqtt.Config{Broker: "mqtts://broker.example.net", Username: "zwatch", TopicPrefix: "zwatch", ClientID: "nas1", QoS: notifytest.Int(1)},
			Masked: "mqtts://***@broker.example.net/zwatch/?client_id=nas1&QoS=1"},
		{URL: "mqtts://[fd00::5]:8883/", Want: mqtt.Config{Broker: "mqtts://[fd00::5]:8883"}, Masked: "mqtts://[fd00::5]:8883/"},

		{URL: "mqtt:///zwatch", Err: "host: empty: write the broker, mqtt://homeassistant.local/"},
		{URL: "mqtt://:hunter2pass@broker/", Err: "user: empty: write the user the broker knows"},
		{URL: "mqtt://broker:65536/", Err: `port: "65536" is not a port`},
		{URL: "mqtt://broker/home/+/x", Err: `path segment 2: "+" is not a topic level zwatch can publish under`},
		{URL: "mqtt://broker/$SYS", Err: `path segment 1: "$SYS" is not a topic level`},
		{URL: "mqtt://broker/a//b", Err: `path segment 2: "" is not a topic level`},
		{URL: "mqtt://broker/a%2Fb", Err: `path segment 1: "a/b" is not a topic level`},
		{URL: "mqtt://broker/alerts,other", Err: "path segment 1: names several topics (apprise publishes to each)"},
		{URL: "mqtt://broker/?qos=0", Err: "query parameter qos: 0 is not taken: zwatch counts a notification delivered only once the broker acknowledged it"},
		{URL: "mqtt://broker/?qos=high", Err: `query parameter qos: "high" is not an MQTT QoS zwatch uses: 1 (the default) or 2`},
		{URL: "mqtt://broker/?retain=yes", Err: "query parameter retain: zwatch retains Home Assistant's discovery and state topics"},
		{URL: "mqtt://broker/?retained=yes", Err: "query parameter retained"},
		{URL: "mqtt://broker/?cleansession=no", Err: "query parameter cleansession: zwatch keeps no session"},
		{URL: "mqtt://broker/?version=v5", Err: "query parameter version: zwatch speaks MQTT 3.1.1"},
		{URL: "mqtts://broker/?disabletls=yes", Err: "query parameter disabletls: the scheme says it: mqtt:// is plain, mqtts:// TLS"},
		{URL: "mqtts://broker/?disabletlsverification=yes", Err: "query parameter disabletlsverification: zwatch always verifies the broker's certificate"},
		{URL: "mqtt://broker/?clientid=a&client_id=b", Err: "query parameter client_id: given twice, also as clientid: keep one"},
		{URL: "mqtt://broker/?qso=2", Err: `query parameter qso: not read by mqtt URLs: did you mean "qos"?`},
	})
}
