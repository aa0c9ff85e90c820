package email

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// AddressKey names the mail server settings, with the address dialled.
func (e *Sender) AddressKey() string {
	return fmt.Sprintf("smtp.host/smtp.port (%s:%d)", e.host, e.port)
}

// Hint reads the usual SMTP mistakes out of err: TLS mode against port,
// credentials, relaying, and the port 25 most ISPs block.
func (e *Sender) Hint(err error) string {
	port, mode := e.port, e.mode
	var rh tls.RecordHeaderError
	msg := err.Error()
	lower := strings.ToLower(msg)
	switch {
	case errors.As(err, &rh) || strings.Contains(msg, "first record does not look like a TLS handshake"):
		return fmt.Sprintf("the server does not speak TLS from the first byte on port %d: port 587 (and 25) use tls: starttls, port 465 uses tls: implicit", port)
	case strings.Contains(msg, "does not support STARTTLS"):
		return "the server offers no STARTTLS on this port: use port 465 with tls: implicit (tls: none only for a relay on a trusted LAN)"
	case strings.Contains(msg, "tls:"):
		return fmt.Sprintf("TLS handshake failed: check smtp.tls (%s) against the port (%d): 465 is implicit, 587 is starttls", mode, port)
	case hasCode(msg, "535") || strings.Contains(lower, "authentication failed") || strings.Contains(lower, "invalid credentials"):
		return "the mail server refused the username or password: check smtp.username and smtp.password (Gmail, iCloud and Outlook need an app password)"
	case hasCode(msg, "530") || strings.Contains(msg, "does not support SMTP AUTH"):
		return "the server wants (or does not offer) authentication: set smtp.username and smtp.password, and use tls: starttls or implicit so it offers AUTH"
	case (hasCode(msg, "550") || hasCode(msg, "553") || hasCode(msg, "554")) && strings.Contains(lower, "relay"):
		return "the server refuses to relay: the from address must belong to the account you log in with, and authentication must be set"
	case hasCode(msg, "550") || hasCode(msg, "553"):
		return "the server rejected an address: check from and to"
	}
	refused, timeout := channel.Refused(err), channel.TimedOut(err)
	switch {
	case port == 25 && (refused || timeout):
		return "nothing answers on port 25: most ISPs block outgoing port 25; use your provider's submission port 587 with tls: starttls (or 465 with implicit)"
	case timeout && port == 465 && mode == TLSStartTLS:
		return "port 465 waits for TLS while starttls waits for a greeting: set tls: implicit"
	case timeout && mode == TLSStartTLS && strings.Contains(msg, "read tcp"):
		// Connected, but no "220" greeting: the server waits for a TLS handshake.
		return fmt.Sprintf("connected to port %d but got no SMTP greeting: it probably expects implicit TLS (like port 465): set tls: implicit", port)
	case timeout && mode == TLSImplicit && port != 465:
		return fmt.Sprintf("port %d greets in plain text while implicit TLS waits for a handshake: set tls: starttls, or port 465", port)
	}
	return ""
}

// hasCode reports whether an SMTP reply code appears as a word in msg.
func hasCode(msg, code string) bool {
	for _, f := range strings.FieldsFunc(msg, func(r rune) bool { return r < '0' || r > '9' }) {
		if f == code {
			return true
		}
	}
	return false
}
