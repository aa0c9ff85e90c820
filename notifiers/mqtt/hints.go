package mqtt

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"github.com/eclipse/paho.mqtt.golang/packets"
)

// AddressKey names the broker setting, with the address dialled.
func (s *Sender) AddressKey() string { return fmt.Sprintf("broker (%s)", s.broker) }

// Hint reads a broker's refusal: the CONNACK return codes of MQTT 3.1.1
// (section 3.2.2.3: 1 protocol version, 2 identifier rejected, 3 server
// unavailable, 4 bad user name or password, 5 not authorized) and the TLS
// mistakes of a port that does not speak what the scheme says.
func (s *Sender) Hint(err error) string {
	var rh tls.RecordHeaderError
	msg := err.Error()
	switch {
	case errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword):
		return "the broker refused the user name or password: check username and password (mosquitto: mosquitto_passwd sets them)"
	case errors.Is(err, packets.ErrorRefusedNotAuthorised):
		if s.username == "" {
			return "the broker wants a login: set username and password (the Home Assistant Mosquitto add-on accepts a Home Assistant user)"
		}
		return "the broker refused the login: check username and password, and that the user may connect (mosquitto: password_file, allow_anonymous)"
	case errors.Is(err, packets.ErrorRefusedIDRejected):
		return "the broker rejected the client id: set client_id to 1-23 letters and digits"
	case errors.Is(err, packets.ErrorRefusedServerUnavailable):
		return "the broker is up but refuses clients for now: the outbox retries by itself"
	case errors.Is(err, packets.ErrorRefusedBadProtocolVersion):
		return "the broker does not speak MQTT 3.1.1: upgrade it (mosquitto 1.3 and later, EMQX, HiveMQ and the Home Assistant add-on do)"
	case errors.As(err, &rh) || strings.Contains(msg, "first record does not look like a TLS handshake"):
		return fmt.Sprintf("%s does not speak TLS: use mqtts:// with the broker's TLS port (usually 8883), or mqtt:// for port 1883", s.broker)
	case closedAtConnect(err) && s.broker.tls:
		return fmt.Sprintf("the broker closed the connection during the TLS handshake: port %s probably does not speak TLS: use mqtts:// with the broker's TLS port (usually 8883), or mqtt:// for its plain port (usually 1883)", s.broker.port)
	case closedAtConnect(err):
		return fmt.Sprintf("the broker closed the connection before answering: if port %s is its TLS port (usually 8883) write mqtts://; otherwise see the broker's log (client id banned, too many connections)", s.broker.port)
	case strings.Contains(msg, "not acknowledged") && strings.Contains(msg, "within the send timeout"):
		return "the broker took the connection but did not acknowledge a publish in time: check the broker's load and log, or raise notify.send_timeout"
	}
	return ""
}

// closedAtConnect: the connection was dropped before the broker's CONNACK.
func closedAtConnect(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "connect to ") && (strings.Contains(msg, "EOF") || strings.Contains(msg, "connection reset"))
}
