package matrix_test

// The requests are checked against the Matrix client-server API:
//   send:      https://spec.matrix.org/v1.11/client-server-api/#put_matrixclientv3roomsroomidsendeventtypetxnid
//   alias:     https://spec.matrix.org/v1.11/client-server-api/#get_matrixclientv3directoryroomroomalias
//   m.text, m.notice, formatted_body: https://spec.matrix.org/v1.11/client-server-api/#mroommessage-msgtypes
//   size:      https://spec.matrix.org/v1.11/client-server-api/#size-limits (65536 bytes per event)
//   errors:    https://spec.matrix.org/v1.11/client-server-api/#standard-error-response
//              (M_FORBIDDEN, M_UNKNOWN_TOKEN, M_LIMIT_EXCEEDED with retry_after_ms)

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/matrix"
)

const token = "syt_Ym90_QWxhcm1zRm9yTkFT_0x2Rm3"

func matrixChannel(url, room string) config.ChannelConfig {
	return config.ChannelConfig{Name: "matrix", Type: "matrix",
		Settings: matrix.Config{Homeserver: url, AccessToken: config.Secret{Value: token}, Room: room}}
}

// homeserver answers sends with an event ID and resolves one alias.
func homeserver(t *testing.T) *notifytest.HTTPSink {
	s := notifytest.StartHTTP(t, "")
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		s.Record(h)
		w.Header().Set("Content-Type", "application/json")
		if h.Path == "/_matrix/client/v3/directory/room/#nas-alerts:example.org" {
			_, _ = w.Write([]byte(`{"room_id":"!resolved:example.org","servers":["example.org"]}`))
			return
		}
		_, _ = w.Write([]byte(`{"event_id":"$YUwRidLecu:example.org"}`))
	})
	return s
}

func TestMatrixRequest(t *testing.T) {
	s := homeserver(t)
	cc := matrixChannel(s.URL+"/", "!AbCdEf:example.org")
	if err := notifytest.Send(t, cc, notifytest.Firing("nas1", "m-1")); err != nil {
		t.Fatal(err)
	}
	h := notifytest.Only(t, s)
	txn := matrix.TxnID("!AbCdEf:example.org", "m-1")
	if h.Method != http.MethodPut || h.Path != "/_matrix/client/v3/rooms/!AbCdEf:example.org/send/m.room.message/"+txn {
		t.Errorf("%s %s", h.Method, h.Path)
	}
	if h.Header.Get("Authorization") != "Bearer "+token || h.Header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", h.Header)
	}
	j := h.JSON(t)
	body, _ := j["body"].(string)
	formatted, _ := j["formatted_body"].(string)
	if j["msgtype"] != "m.text" || j["format"] != "org.matrix.custom.html" || !strings.HasPrefix(body, notifytest.WantSummary+"\n") {
		t.Errorf("content %v", j)
	}
	if !strings.HasPrefix(formatted, `<strong><font color="#d00000" data-mx-color="#d00000">[CRITICAL] vault DEGRADED`) ||
		!strings.Contains(formatted, "<br>2. Pull the disk with serial WD-WX32D7088AF1 from bay 3 &lt;left cage&gt;") {
		t.Errorf("formatted_body %s", formatted)
	}

	// A retry of the same notification is the same transaction; another
	// notification is a new one.
	ch := notifytest.BuildOne(t, cc)
	n := notifytest.Firing("nas1", "m-1")
	for _, id := range []string{"m-1", "m-2"} {
		n.ID = id
		if err := ch.Send(context.Background(), notifiers.Render(n)); err != nil {
			t.Fatal(err)
		}
	}
	all := s.All()
	if all[1].Path != all[0].Path || all[2].Path == all[0].Path || !strings.HasSuffix(all[2].Path, matrix.TxnID("!AbCdEf:example.org", "m-2")) {
		t.Errorf("transaction paths %s, %s, %s", all[0].Path, all[1].Path, all[2].Path)
	}
}

func TestMatrixAliasIsResolvedOnce(t *testing.T) {
	s := homeserver(t)
	ch := notifytest.BuildOne(t, matrixChannel(s.URL, "#nas-alerts:example.org"))
	for _, id := range []string{"a-1", "a-2"} {
		if err := ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", id))); err != nil {
			t.Fatal(err)
		}
	}
	all := s.All()
	if len(all) != 3 || all[0].Method != http.MethodGet || all[0].Header.Get("Content-Type") != "" || len(all[0].Body) != 0 {
		t.Fatalf("requests %+v", all)
	}
	for _, h := range all[1:] {
		if !strings.HasPrefix(h.Path, "/_matrix/client/v3/rooms/!resolved:example.org/send/m.room.message/zwatch-") {
			t.Errorf("sent to %s", h.Path)
		}
	}

	// Refused in that room, the alias is looked up again: it may have moved.
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		s.Record(h)
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"errcode":"M_FORBIDDEN","error":"not in room"}`))
	})
	if err := ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "a-3"))); err == nil {
		t.Fatal("a refusal was taken for a delivery")
	}
	s.Answer(nil)
	_ = ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "a-3")))
	if all = s.All(); len(all) != 5 || all[4].Method != http.MethodGet {
		t.Errorf("after a refusal: %d requests, the last %s %s", len(all), all[len(all)-1].Method, all[len(all)-1].Path)
	}
}

func TestMatrixResolvedIsANoticeAndLongTextFits(t *testing.T) {
	s := homeserver(t)
	n := notifytest.Firing("nas1", "m-3")
	end := n.Alerts[0].StartsAt.Add(time.Hour)
	n.Alerts[0].State, n.Alerts[0].EndsAt, n.Status = alert.Resolved, &end, alert.Resolved
	n.Alerts[0].Description = strings.Repeat("checksum errors on <sdc> & friends; ", 5000)
	if err := notifytest.Send(t, matrixChannel(s.URL, "!AbCdEf:example.org"), n); err != nil {
		t.Fatal(err)
	}
	h := notifytest.Only(t, s)
	if len(h.Body) > 60000 {
		t.Errorf("content is %d bytes; the whole event must stay under 65536", len(h.Body))
	}
	var c matrix.Content
	if err := json.Unmarshal(h.Body, &c); err != nil {
		t.Fatal(err)
	}
	if c.MsgType != "m.notice" || !strings.HasPrefix(c.Body, "[RESOLVED] vault DEGRADED") || !strings.HasSuffix(c.Body, "…") ||
		!strings.Contains(c.FormattedBody, `color="#2e7d32"`) || !strings.HasSuffix(c.FormattedBody, "…") {
		t.Errorf("msgtype %s, body %.60q…%q", c.MsgType, c.Body, c.Body[len(c.Body)-20:])
	}
}

func TestMatrixRefusalsAndHints(t *testing.T) {
	for _, tc := range []struct {
		status     int
		body, room string
		inErr, fix string
	}{
		{403, `{"errcode":"M_FORBIDDEN","error":"User @zwatch:example.org not in room !AbCdEf:example.org"}`, "!AbCdEf:example.org",
			"HTTP 403 Forbidden: M_FORBIDDEN: User @zwatch:example.org not in room", "invite the bot's user"},
		{401, `{"errcode":"M_UNKNOWN_TOKEN","error":"Invalid access token passed.","soft_logout":false}`, "!AbCdEf:example.org",
			"M_UNKNOWN_TOKEN", "set the new token in access_token"},
		{429, `{"errcode":"M_LIMIT_EXCEEDED","error":"Too Many Requests","retry_after_ms":2000}`, "!AbCdEf:example.org",
			"M_LIMIT_EXCEEDED: Too Many Requests; retry after 2000 ms", "override_ratelimit"},
		{404, `{"errcode":"M_NOT_FOUND","error":"Room alias #gone:example.org not found"}`, "#gone:example.org",
			"resolving room alias #gone:example.org", "knows no room alias #gone:example.org"},
		{404, `{"errcode":"M_UNRECOGNIZED","error":"Unrecognized request"}`, "!AbCdEf:example.org",
			"M_UNRECOGNIZED", ".well-known/matrix/client"},
		{200, `<!doctype html><title>Element</title>`, "!AbCdEf:example.org", "no event_id", ".well-known/matrix/client"},
	} {
		s := notifytest.StartHTTP(t, "")
		s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		})
		ch := notifytest.BuildOne(t, matrixChannel(s.URL, tc.room))
		err := ch.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "m-4")))
		if err == nil || !strings.Contains(err.Error(), tc.inErr) || strings.Contains(err.Error(), token) {
			t.Errorf("HTTP %d: err %v", tc.status, err)
			continue
		}
		if fix := ch.Fix(err); !strings.Contains(fix, tc.fix) {
			t.Errorf("HTTP %d: fix %q, want %q", tc.status, fix, tc.fix)
		}
	}
}

func TestMatrixConfigErrors(t *testing.T) {
	const ok = `homeserver: "https://matrix.example.org", access_token: t`
	for yaml, want := range map[string]string{
		`{name: a, type: matrix, access_token: t, room: "!r:x"}`:                                                    "notify.channels[0].homeserver: empty",
		`{name: a, type: matrix, homeserver: "https://m.example/_matrix/client/v3", room: "!r:x", access_token: t}`: `set only the server's base URL (https://m.example)`,
		`{name: a, type: matrix, homeserver: "https://m.example", room: "!r:x"}`:                                    "notify.channels[0].access_token: empty: set the bot user's access token",
		`{name: a, type: matrix, ` + ok + `}`:                                                                       "notify.channels[0].room: empty",
		`{name: a, type: matrix, ` + ok + `, room: nas-alerts}`:                                                     `notify.channels[0].room = "nas-alerts": must be a room ID`,
		`{name: a, type: matrix, ` + ok + `, room: "#nas-alerts"}`:                                                  "an alias needs its server: #name:server",
		`{name: a, type: matrix, ` + ok + `, room: "@me:example.org"}`:                                              "is a user, not a room",
		`{name: a, type: matrix, ` + ok + `, room: "!r:x", webhook_url: "https://x"}`:                               "not used by type matrix (its keys: homeserver, access_token, room, answer_users)",
	} {
		_, err := config.Parse(strings.NewReader("host: nas1\nstate_dir: /tmp/zw\nnotify:\n  channels:\n    - "+yaml+"\n"), catalog.Config())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n  got  %v\n  want %q", yaml, err, want)
		}
	}
}
