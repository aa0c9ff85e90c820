package email_test

import (
	"testing"

	"github.com/zwatch/zwatch/notifiers/email"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
)

// The URL form is shoutrrr's: https://containrrr.dev/shoutrrr/v0.8/services/email/
// (smtp://username:password@host:port/?from=fromAddress&to=recipient1[,recipient2],
// encryption None/ExplicitTLS/ImplicitTLS/Auto, usestarttls).
func TestEmailURL(t *testing.T) {
	const pw = "s3cret:p@ss/word"
	const esc = "s3cret%3Ap%40ss%2Fword"
	mail := func(host string, port int, tls, user, pass string, from string, to ...string) email.Config {
		c := email.Config{SMTP: email.SMTP{Host: host, Port: port, TLS: tls, Username: user}, From: from, To: to}
		if pass != "" {
			c.SMTP.Password = notifytest.Lit(pass)
		}
		return c
	}
	notifytest.CheckURLs(t, email.Service, []string{pw, esc, "s3cret"}, []notifytest.URLCase{
		{URL: "smtp://me%40example.net:" + esc + "@smtp.fastmail.com:587/?from=zwatch@example.net&to=me@example.net,jane+nas@example.org",
			Want:   mail("smtp.fastmail.com", 587, "starttls", "me@example.net", pw, "zwatch@example.net", "me@example.net", "jane+nas@example.org"),
			Masked: "smtp://***@smtp.fastmail.com:587/?from=zwatch@example.net&to=me@example.net,jane+nas@example.org"},
		{URL: "smtp://u:" + esc + "@mail.example.net:465/?fromAddress=a@example.net&toAddresses=b@example.net&fromname=NAS+one",
			Want:   mail("mail.example.net", 465, "implicit", "u", pw, `"NAS one" <a@example.net>`, "b@example.net"),
			Masked: "smtp://***@mail.example.net:465/?fromAddress=a@example.net&toAddresses=b@example.net&fromname=NAS+one"},
		{URL: "smtp://relay.lan:25/?from=a@example.net&to=b@example.net&encryption=None",
			Want: mail("relay.lan", 25, "none", "", "", "a@example.net", "b@example.net"), Masked: "smtp://relay.lan:25/?from=a@example.net&to=b@example.net&encryption=None"},
		{URL: "smtp://relay.lan/?from=a@example.net&to=b@example.net&usestarttls=no",
			Want: mail("relay.lan", 0, "none", "", "", "a@example.net", "b@example.net"), Masked: "smtp://relay.lan/?from=a@example.net&to=b@example.net&usestarttls=no"},
		{URL: "smtp://u:" + esc + "@mail.example.net:2525/?from=a@example.net&to=b@example.net&encryption=ExplicitTLS&starttls=yes",
			Want:   mail("mail.example.net", 2525, "starttls", "u", pw, "a@example.net", "b@example.net"),
			Masked: "smtp://***@mail.example.net:2525/?from=a@example.net&to=b@example.net&encryption=ExplicitTLS&starttls=yes"},
		{URL: "smtp://mail.example.net:8465/?from=a@example.net&to=b@example.net&Encryption=implicittls",
			Want: mail("mail.example.net", 8465, "implicit", "", "", "a@example.net", "b@example.net"), Masked: "smtp://mail.example.net:8465/?from=a@example.net&to=b@example.net&Encryption=implicittls"},

		{URL: "smtp://:587/?from=a@example.net&to=b@example.net", Err: "host: empty: write the mail server"},
		{URL: "smtp://mail.example.net:70000/?from=a@example.net&to=b@example.net", Err: `port: "70000" is not a port`},
		{URL: "smtp://mail.example.net/inbox?from=a@example.net&to=b@example.net", Err: "path: an smtp URL has none"},
		{URL: "smtp://me@mail.example.net/?from=a@example.net&to=b@example.net", Err: "password: empty: write user:password@"},
		{URL: "smtp://:" + esc + "@mail.example.net/?from=a@example.net&to=b@example.net", Err: "user: empty"},
		{URL: "smtp://mail.example.net/?to=b@example.net", Err: "query parameter from: missing"},
		{URL: "smtp://mail.example.net/?from=nas&to=b@example.net", Err: `query parameter from: "nas" is not an email address`},
		{URL: "smtp://mail.example.net/?from=a@example.net", Err: "query parameter to: missing"},
		{URL: "smtp://mail.example.net/?from=a@example.net&to=b@example.net,,c", Err: `query parameter to: "" is not an email address`},
		{URL: "smtp://mail.example.net/?from=a@example.net&to=b@example.net&encryption=SSL", Err: `query parameter encryption: "SSL" is not None, ExplicitTLS, ImplicitTLS or Auto`},
		{URL: "smtp://mail.example.net:587/?from=a@example.net&to=b@example.net&encryption=ImplicitTLS", Err: "query parameter encryption: port 587 starts in plain text"},
		{URL: "smtp://mail.example.net:465/?from=a@example.net&to=b@example.net&encryption=ExplicitTLS", Err: "query parameter encryption: port 465 speaks TLS"},
		{URL: "smtp://mail.example.net/?from=a@example.net&to=b@example.net&encryption=ExplicitTLS&usestarttls=no", Err: "query parameter usestarttls: ExplicitTLS is STARTTLS"},
		{URL: "smtp://u:" + esc + "@mail.example.net/?from=a@example.net&to=b@example.net&encryption=None", Err: "query parameter encryption: zwatch does not send a password without TLS"},
		{URL: "smtp://u:" + esc + "@mail.example.net/?from=a@example.net&to=b@example.net&usestarttls=no", Err: "query parameter usestarttls: zwatch does not send a password without TLS"},
		{URL: "smtp://u:" + esc + "@mail.example.net/?from=a@example.net&to=b@example.net&usestarttls=perhaps", Err: `query parameter usestarttls: "perhaps" is not yes or no`},
		{URL: "smtp://mail.example.net/?from=a@example.net&to=b@example.net&subject=NAS", Err: "query parameter subject: zwatch writes each subject from its alert"},
		{URL: "smtp://mail.example.net/?from=a@example.net&to=b@example.net&auth=Plain", Err: "query parameter auth: zwatch logs in with the best method"},
		{URL: "smtp://u:" + esc + "@mail.example.net/?from=a@example.net&tto=b@example.net", Err: `query parameter tto: not read by smtp URLs: did you mean "to"?`},
	})
}
