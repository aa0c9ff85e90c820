package email

import (
	"net/mail"
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads shoutrrr's SMTP URL
// (https://containrrr.dev/shoutrrr/v0.8/services/email/):
//
//	smtp://[user:password@]host[:port]/?from=zwatch@example.net&to=a@example.net,b@example.net
//	       [&fromname=NAS][&encryption=None|ExplicitTLS|ImplicitTLS|Auto][&usestarttls=no]
//
// fromaddress and toaddresses are shoutrrr's longer names for from and to.
// Without a port, zwatch uses its own default for the TLS mode (587, 465 or
// 25) where shoutrrr always uses 25. Auto (the default) means implicit TLS
// on port 465 and STARTTLS elsewhere, as in shoutrrr. apprise's mailto://
// is not read.
func (Config) URLForm() channel.URLForm[Config] {
	return channel.URLForm[Config]{
		Schemes: []string{"smtp"},
		Refused: map[string]string{
			"subject": "zwatch writes each subject from its alert: remove it", "title": "zwatch writes each subject from its alert: remove it",
			"usehtml":    "zwatch sends every mail as text and HTML: remove it",
			"auth":       "zwatch logs in with the best method the server offers: remove it",
			"clienthost": "zwatch does not set the name it greets the server with: remove it",
		},
		Decode: fromURL,
	}
}

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	user, password, _ := u.User()
	if password != "" {
		c.SMTP.Password = u.Secret(password)
	}
	port, err := u.Port()
	switch {
	case err != nil:
		return c, err
	case u.Host() == "":
		return c, channel.Errorf("host", "empty: write the mail server, smtp://user:password@smtp.example.net:587/?from=…&to=…")
	case len(u.Segments()) > 0:
		return c, channel.Errorf("path", "an smtp URL has none: put from and to in the query, smtp://smtp.example.net:587/?from=…&to=…")
	case user != "" && password == "":
		return c, channel.Errorf("password", "empty: write user:password@ (a : / ? # or @ inside the password as %%3A %%2F %%3F %%23 %%40)")
	case user == "" && password != "":
		return c, channel.Errorf("user", "empty: write user:password@, or leave both out")
	}
	c.SMTP.Host, c.SMTP.Port, c.SMTP.Username = u.Host(), port, user
	from, ok := u.Param("fromaddress", "from")
	if !ok || strings.TrimSpace(from) == "" {
		return c, channel.Errorf("query parameter from", "missing: the sender's address, ?from=zwatch@example.net")
	}
	addr, err := mail.ParseAddress(plus(from))
	if err != nil {
		return c, channel.Errorf("query parameter from", "%q is not an email address", from)
	}
	if name, _ := u.Param("fromname"); name != "" {
		addr.Name = name
	}
	c.From = addr.Address
	if addr.Name != "" {
		c.From = addr.String()
	}
	to, _ := u.Param("toaddresses", "to")
	if strings.TrimSpace(to) == "" {
		return c, channel.Errorf("query parameter to", "missing: the recipients, comma-separated, ?to=me@example.net,jane@example.org")
	}
	for _, a := range strings.Split(to, ",") {
		a = plus(strings.TrimSpace(a))
		if _, err := mail.ParseAddress(a); err != nil {
			return c, channel.Errorf("query parameter to", "%q is not an email address", a)
		}
		c.To = append(c.To, a)
	}
	c.SMTP.TLS, err = tlsMode(u, port, user != "")
	return c, err
}

// plus undoes the query's reading of + as a space in a bare address
// (me+nas@example.net), as shoutrrr does.
func plus(a string) string {
	if strings.Contains(a, "<") {
		return a
	}
	return strings.ReplaceAll(a, " ", "+")
}

// tlsMode is zwatch's smtp.tls for shoutrrr's encryption and usestarttls.
func tlsMode(u *channel.URL, port int, login bool) (string, error) {
	enc, _ := u.Param("encryption")
	starttls, set, err := u.Bool("usestarttls", "starttls")
	if err != nil {
		return "", err
	}
	var mode string
	switch strings.ToLower(enc) {
	case "none":
		mode = TLSNone
	case "explicittls":
		mode = TLSStartTLS
		if set && !starttls {
			return "", channel.Errorf("query parameter usestarttls", "ExplicitTLS is STARTTLS: remove usestarttls=no, or use encryption=None")
		}
	case "implicittls":
		mode = TLSImplicit
	case "auto", "":
		switch {
		case port == 465:
			mode = TLSImplicit
		case set && !starttls:
			mode = TLSNone
		default:
			mode = TLSStartTLS
		}
	default:
		return "", channel.Errorf("query parameter encryption", "%q is not None, ExplicitTLS, ImplicitTLS or Auto", enc)
	}
	switch {
	case mode == TLSImplicit && (port == 587 || port == 25):
		return "", channel.Errorf("query parameter encryption", "port %d starts in plain text: use ExplicitTLS (or Auto), or port 465", port)
	case mode == TLSStartTLS && port == 465:
		return "", channel.Errorf("query parameter encryption", "port 465 speaks TLS from the first byte: use ImplicitTLS (or Auto)")
	case mode == TLSNone && login && enc == "":
		return "", channel.Errorf("query parameter usestarttls", "zwatch does not send a password without TLS: remove usestarttls=no")
	case mode == TLSNone && login:
		return "", channel.Errorf("query parameter encryption", "zwatch does not send a password without TLS: use ExplicitTLS or ImplicitTLS (or Auto)")
	}
	return mode, nil
}
