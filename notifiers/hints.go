package notifiers

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/zwatch/zwatch/config"
)

// Fix names the most likely cure for a delivery error on this channel, or
// "" when zwatch has no better idea than the error itself.
func (c *Channel) Fix(err error) string {
	if err == nil {
		return ""
	}
	var se *ServiceError
	if errors.As(err, &se) {
		return c.serviceFix(se)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Sprintf("the name %q does not resolve: check the host name in %s, and the NAS's DNS settings", dns.Name, c.hostKey())
	}
	port := c.cfg.SMTP.SMTPPort()
	mode := c.cfg.SMTP.Mode()
	isMail := c.Type == config.ChannelEmail
	var rh tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	msg := err.Error()
	switch {
	case errors.As(err, &unknownCA), strings.Contains(msg, "certificate signed by unknown authority"):
		return "the server's certificate is not signed by a trusted CA: for a private relay set smtp.ca_file to its CA (or self-signed certificate)"
	case errors.As(err, &hostErr):
		return "the certificate is for a different name: use the host name printed on the certificate in " + c.hostKey()
	case errors.As(err, &invalid):
		return "the server's certificate is invalid (expired?): renew it on the server"
	case isMail && (errors.As(err, &rh) || strings.Contains(msg, "first record does not look like a TLS handshake")):
		return fmt.Sprintf("the server does not speak TLS from the first byte on port %d: port 587 (and 25) use tls: starttls, port 465 uses tls: implicit", port)
	case isMail && strings.Contains(msg, "does not support STARTTLS"):
		return "the server offers no STARTTLS on this port: use port 465 with tls: implicit (tls: none only for a relay on a trusted LAN)"
	case isMail && strings.Contains(msg, "tls:"):
		return fmt.Sprintf("TLS handshake failed: check smtp.tls (%s) against the port (%d): 465 is implicit, 587 is starttls", mode, port)
	case isMail && (has(msg, "535") || strings.Contains(strings.ToLower(msg), "authentication failed") || strings.Contains(strings.ToLower(msg), "invalid credentials")):
		return "the mail server refused the username or password: check smtp.username and smtp.password (Gmail, iCloud and Outlook need an app password)"
	case isMail && (has(msg, "530") || strings.Contains(msg, "does not support SMTP AUTH")):
		return "the server wants (or does not offer) authentication: set smtp.username and smtp.password, and use tls: starttls or implicit so it offers AUTH"
	case isMail && (has(msg, "550") || has(msg, "553") || has(msg, "554")) && strings.Contains(strings.ToLower(msg), "relay"):
		return "the server refuses to relay: the from address must belong to the account you log in with, and authentication must be set"
	case isMail && (has(msg, "550") || has(msg, "553")):
		return "the server rejected an address: check from and to"
	}
	refused := errors.Is(err, syscall.ECONNREFUSED)
	var ne net.Error
	timeout := errors.As(err, &ne) && ne.Timeout() || strings.Contains(msg, "i/o timeout") || strings.Contains(msg, "context deadline exceeded")
	switch {
	case isMail && port == 25 && (refused || timeout):
		return "nothing answers on port 25: most ISPs block outgoing port 25; use your provider's submission port 587 with tls: starttls (or 465 with implicit)"
	case isMail && timeout && port == 465 && mode == config.TLSStartTLS:
		return "port 465 waits for TLS while starttls waits for a greeting: set tls: implicit"
	case isMail && timeout && mode == config.TLSStartTLS && strings.Contains(msg, "read tcp"):
		// Connected, but no "220" greeting: the server waits for a TLS handshake.
		return fmt.Sprintf("connected to port %d but got no SMTP greeting: it probably expects implicit TLS (like port 465): set tls: implicit", port)
	case isMail && timeout && mode == config.TLSImplicit && port != 465:
		return fmt.Sprintf("port %d greets in plain text while implicit TLS waits for a handshake: set tls: starttls, or port 465", port)
	case refused:
		return fmt.Sprintf("connection refused: nothing listens at %s; check the host and port, and that the server runs", c.hostKey())
	case timeout:
		return fmt.Sprintf("no answer in time from %s: check the address, a firewall, or raise notify.send_timeout", c.hostKey())
	}
	return ""
}

func (c *Channel) serviceFix(se *ServiceError) string {
	d := strings.ToLower(se.Detail)
	switch c.Type {
	case config.ChannelTelegram:
		switch {
		case se.Status == 401 || se.Status == 404:
			return "Telegram does not know this bot token: copy it again from @BotFather (digits:letters)"
		case strings.Contains(d, "chat not found"):
			return "Telegram does not know this chat id: send the bot a message first (or add it to the group), then take the id from getUpdates"
		case se.Status == 403:
			return "the bot may not write to this chat: unblock it, or add it to the group/channel with permission to post"
		}
	case config.ChannelPushover:
		switch {
		case strings.Contains(d, "token"):
			return "Pushover refused the application token: copy the API token of your zwatch application from https://pushover.net/apps"
		case strings.Contains(d, "user"):
			return "Pushover refused the user key: copy the user (or group) key from the Pushover dashboard"
		}
	case config.ChannelSlack:
		switch {
		case strings.Contains(d, "invalid_auth"), strings.Contains(d, "not_authed"), strings.Contains(d, "invalid_token"), strings.Contains(d, "token_revoked"):
			return "Slack refused the token: use a bot token (xoxb-...) with the chat:write scope"
		case strings.Contains(d, "channel_not_found"), strings.Contains(d, "not_in_channel"):
			return "the bot cannot post there: invite it to the channel (/invite @bot) and check the channel id"
		case strings.Contains(d, "no_service"), se.Status == 404:
			return "Slack does not know this webhook URL (deleted or mistyped): create a new incoming webhook"
		}
	case config.ChannelDiscord:
		if se.Status == 401 || se.Status == 404 {
			return "Discord does not know this webhook (deleted, or URL mistyped): copy the webhook URL again"
		}
	case config.ChannelNtfy:
		if se.Status == 401 || se.Status == 403 {
			return "ntfy refused access to this topic: set token to an access token (tk_...) allowed to publish to it"
		}
	case config.ChannelGotify:
		if se.Status == 401 || se.Status == 403 {
			return "Gotify refused the token: use an application token (Apps), not a client token"
		}
	}
	switch {
	case se.Status == 401 || se.Status == 403:
		return fmt.Sprintf("HTTP %d: the service refused the credentials: check the token (and headers)", se.Status)
	case se.Status == 404:
		return "HTTP 404: wrong URL or topic: check " + c.hostKey()
	case se.Status == 413:
		return "the message is too large for this service"
	case se.Status == 429:
		return "rate limited: the outbox retries later by itself"
	case se.Status >= 500:
		return "the service has trouble right now: the outbox retries by itself"
	}
	return ""
}

func (c *Channel) hostKey() string {
	switch c.Type {
	case config.ChannelEmail:
		return fmt.Sprintf("smtp.host/smtp.port (%s:%d)", c.cfg.SMTP.Host, c.cfg.SMTP.SMTPPort())
	case config.ChannelNtfy, config.ChannelGotify, config.ChannelWebhook:
		return "url"
	case config.ChannelDiscord, config.ChannelSlack:
		if c.cfg.WebhookURL.IsSet() {
			return "webhook_url"
		}
	}
	if c.cfg.APIURL != "" {
		return "api_url"
	}
	return "the service address"
}

// has reports whether an SMTP reply code appears as a word in msg.
func has(msg, code string) bool {
	for _, f := range strings.FieldsFunc(msg, func(r rune) bool { return r < '0' || r > '9' }) {
		if f == code {
			return true
		}
	}
	return false
}
