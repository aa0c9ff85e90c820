package signal

import (
	"net"
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads the newer shoutrrr's Signal URL for the signal-cli REST
// API (https://github.com/nicholas-fedor/shoutrrr/blob/main/docs/services/chat/signal/index.md;
// shoutrrr v0.8 has no Signal):
//
//	signal://host[:port]/+SENDER/+RECIPIENT[/+RECIPIENT…][/group.ID][?disabletls=yes]
//
// The port is 8080 unless given, and the scheme https unless disabletls=yes,
// as shoutrrr has them; the REST API itself serves plain http, so one on
// loopback or your own network needs disabletls=yes. Recipients are path
// segments or comma-separated. apprise's signal:// is http where
// shoutrrr's is https, and its @GROUP targets are not read.
func (Config) URLForm() channel.URLForm[Config] {
	const path = "write the sender and the recipients as path segments, signal://host:8080/+SENDER/+RECIPIENT: remove it"
	const login = "zwatch sends no login: the signal-cli REST API has none, so reach it on loopback or a private network: remove it"
	return channel.URLForm[Config]{
		Schemes: []string{"signal"},
		Refused: map[string]string{
			"token": login, "apikey": login,
			"source": path, "recipients": path, "to": path, "from": path,
			"title":       "zwatch titles each message with its alert: remove it",
			"attachments": "zwatch sends the notification as text: remove it",
			"batch":       "zwatch sends one request per group and one for all phone numbers: remove it",
			"status":      "zwatch starts each message with its severity: remove it",
		},
		Decode: fromURL,
	}
}

const shape = "signal://host:8080/+SENDER/+RECIPIENT?disabletls=yes"

func fromURL(u *channel.URL) (Config, error) {
	var c Config
	if _, password, ok := u.User(); ok {
		u.Secret(password)
		return c, channel.Errorf("user", "zwatch sends no login: the signal-cli REST API has none, so reach it on loopback or a private network and leave out user:password@")
	}
	port, err := u.Port()
	if err != nil {
		return c, err
	}
	disable, _, err := u.Bool("disabletls")
	if err != nil {
		return c, err
	}
	scheme := "https"
	if disable {
		scheme = "http"
	}
	host := u.Host()
	if host == "" {
		host = "localhost"
	}
	if port == 0 {
		port = 8080
	}
	c.URL = scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port))
	segs := u.Segments()
	if len(segs) < 2 {
		return c, channel.Errorf("path", "needs the sending number and at least one recipient: %s", shape)
	}
	if problem := phoneProblem(segs[0]); problem != "" {
		return c, channel.Errorf("path segment 1", "the sending number is %s", problem)
	}
	c.Number = segs[0]
	recipients, seg, err := readRecipients(segs[1:])
	if err != nil {
		return c, err
	}
	for i, r := range recipients {
		part := "path segment " + strconv.Itoa(seg[i]+2)
		switch {
		case strings.HasPrefix(r, groupPrefix):
			if !validGroupID(r) {
				return c, channel.Errorf(part, "not a Signal group id: copy the id (group.…) from GET /v1/groups/%s of the REST API", c.Number)
			}
		case strings.HasPrefix(r, "@"):
			return c, channel.Errorf(part, "apprise's @GROUP is not read: write the group's id as the REST API lists it, group.…")
		default:
			if problem := phoneProblem(r); problem != "" {
				return c, channel.Errorf(part, "the recipient is %s, or a group id (group.…)", problem)
			}
		}
	}
	c.Recipients = recipients
	return c, nil
}

// readRecipients splits the path after the sender into recipients, with
// the index of the segment each is in. shoutrrr also joins a group id
// split by a /, but the REST API's ids (base64 of base64) never hold one.
func readRecipients(segs []string) (recipients []string, seg []int, err error) {
	for i, s := range segs {
		for _, piece := range strings.Split(s, ",") {
			if piece != "" {
				recipients, seg = append(recipients, piece), append(seg, i)
			}
		}
	}
	if len(recipients) == 0 {
		return nil, nil, channel.Errorf("path", "no recipient after the sending number: %s", shape)
	}
	return recipients, seg, nil
}
