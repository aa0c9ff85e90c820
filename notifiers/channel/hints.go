package channel

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
)

// Fix names the most likely cure for err, an error from s, or "" when
// zwatch has no better idea than the error itself. What s knows of its
// service (Diagnoser) comes first; then what fits any service: a refusal's
// HTTP status, a name that does not resolve, a certificate, a server that
// does not answer.
func Fix(s Sender, err error) string {
	if err == nil {
		return ""
	}
	d, _ := s.(Diagnoser)
	addr := "the service address"
	if d != nil {
		addr = d.AddressKey()
	}
	hint := func() string {
		if d == nil {
			return ""
		}
		return d.Hint(err)
	}
	var se *ServiceError
	if errors.As(err, &se) {
		if h := hint(); h != "" {
			return h
		}
		return statusFix(se, addr)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Sprintf("the name %q does not resolve: check the host name in %s, and the NAS's DNS settings", dns.Name, addr)
	}
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknownCA), strings.Contains(err.Error(), "certificate signed by unknown authority"):
		return "the server's certificate is not signed by a trusted CA: for a private server set the channel's CA file (smtp.ca_file for email, ca_file for mqtt) to its CA or self-signed certificate"
	case errors.As(err, &hostErr):
		return "the certificate is for a different name: use the host name printed on the certificate in " + addr
	case errors.As(err, &invalid):
		return "the server's certificate is invalid (expired?): renew it on the server"
	}
	if h := hint(); h != "" {
		return h
	}
	switch {
	case Refused(err):
		return fmt.Sprintf("connection refused: nothing listens at %s; check the host and port, and that the server runs", addr)
	case TimedOut(err):
		return fmt.Sprintf("no answer in time from %s: check the address, a firewall, or raise notify.send_timeout", addr)
	}
	return ""
}

func statusFix(se *ServiceError, addr string) string {
	switch {
	case se.Status == 401 || se.Status == 403:
		return fmt.Sprintf("HTTP %d: the service refused the credentials: check the token (and headers)", se.Status)
	case se.Status == 404:
		return "HTTP 404: wrong URL or topic: check " + addr
	case se.Status == 413:
		return "the message is too large for this service"
	case se.Status == 429:
		return "rate limited: the outbox retries later by itself"
	case se.Status >= 500:
		return "the service has trouble right now: the outbox retries by itself"
	}
	return ""
}

// Refused reports a connection the server's host turned away.
func Refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// TimedOut reports an attempt that got no answer in time.
func TimedOut(err error) bool {
	var ne net.Error
	msg := err.Error()
	return errors.As(err, &ne) && ne.Timeout() || strings.Contains(msg, "i/o timeout") || strings.Contains(msg, "context deadline exceeded")
}

// AsServiceError returns the service's refusal inside err, if it is one.
func AsServiceError(err error) (*ServiceError, bool) {
	var se *ServiceError
	ok := errors.As(err, &se)
	return se, ok
}
