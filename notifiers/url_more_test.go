package notifiers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/mosquittotest"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/matrix"
)

// answering is a local stand-in for a service that answers every request
// with status and body, as the service documents its success.
func answering(t *testing.T, status int, body string) *notifytest.HTTPSink {
	s := notifytest.StartHTTP(t, "")
	s.Answer(func(w http.ResponseWriter, h notifytest.Hit) {
		s.Record(h)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	})
	return s
}

// The newer channels written as URLs are decoded by config.Parse, shown
// masked by check-config, and delivered by the real outbox to local
// servers that check each service's documented request.
func TestMoreURLChannelsDeliverThroughTheOutbox(t *testing.T) {
	const (
		matrixToken = "syt_matrixS3cret_1"
		mmKey       = "mmhookkey0s3cret6789abcdef"
		teamsSig    = "teamsSig-S3cret_4"
		genieKey    = "0f1e2d3c-S3cret-opsgenie"
		routingKey  = "pdS3cretRoutingKey0123456789abcd"
	)
	// Success as each service documents it: Matrix's event_id
	// (https://spec.matrix.org/v1.11/client-server-api/#put_matrixclientv3roomsroomidsendeventtypetxnid),
	// Mattermost's "ok" (https://developers.mattermost.com/integrate/webhooks/incoming/),
	// Power Automate's 202, Opsgenie's 202 with a requestId
	// (https://docs.opsgenie.com/docs/alert-api), PagerDuty's 202
	// (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/), the
	// signal-cli REST API's 201 (https://bbernhard.github.io/signal-cli-rest-api/#/Messages/post_v2_send).
	matrixSrv := answering(t, 200, `{"event_id":"$ev1:example.org"}`)
	mmSrv := answering(t, 200, "ok")
	teamsSrv := answering(t, 202, "")
	genieSrv := answering(t, 202, `{"result":"Request will be processed","took":0.1,"requestId":"r-1"}`)
	pdSrv := answering(t, 202, `{"status":"success","message":"Event processed","dedup_key":"x"}`)
	signalSrv := answering(t, 201, `{"timestamp":"1700000000000"}`)
	host := func(s *notifytest.HTTPSink) string { return strings.TrimPrefix(s.URL, "http://") }
	workflow := "http://" + host(teamsSrv) + "/workflows/abc/triggers/manual/paths/invoke?api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=" + teamsSig
	l, err := parseConfig(t, fmt.Sprintf(`
notify:
  console: false
  channels:
    - url: "matrix://:%s@%s/?rooms=!nas:example.org&disableTLS=yes"
    - url: "mattermost://zwatch@%s/%s/nas-alerts?disabletls=yes"
    - url: "teams://?host=%s"
    - url: "opsgenie://%s/%s?disabletls=yes"
    - url: "pagerduty://%s/%s?disabletls=yes&client_url=https://nas1.example.net/"
    - url: "signal://%s/+4915112345678/+4915187654321?disabletls=yes"
`, matrixToken, host(matrixSrv), host(mmSrv), mmKey, url.QueryEscape(workflow), host(genieSrv), genieKey, host(pdSrv), routingKey, host(signalSrv)))
	if err != nil {
		t.Fatal(err)
	}
	masked, err := l.Config.Masked()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{matrixToken, mmKey, teamsSig, genieKey, routingKey} {
		if strings.Contains(string(masked), secret) {
			t.Errorf("check-config shows %q:\n%s", secret, masked)
		}
	}
	for _, line := range []string{
		"name: matrix\n      type: matrix # from url: matrix://***@" + host(matrixSrv) + "/?rooms=!nas:example.org&disableTLS=yes",
		"name: mattermost\n      type: mattermost # from url: mattermost://***@" + host(mmSrv) + "/***/nas-alerts?disabletls=yes",
		"name: teams\n      type: teams # from url: teams://?host=***",
		"name: opsgenie\n      type: opsgenie # from url: opsgenie://" + host(genieSrv) + "/***?disabletls=yes",
		"name: pagerduty\n      type: pagerduty # from url: pagerduty://" + host(pdSrv) + "/***?disabletls=yes&client_url=https://nas1.example.net/",
		"name: signal\n      type: signal # from url: signal://" + host(signalSrv) + "/+4915112345678/+4915187654321?disabletls=yes",
		"room: '!nas:example.org'", "homeserver: http://" + host(matrixSrv), "api_url: http://" + host(genieSrv),
		"url: http://" + host(pdSrv) + "/v2/enqueue", "recipients:\n        - \"+4915187654321\"",
	} {
		if !strings.Contains(string(masked), line) {
			t.Errorf("check-config lacks %q:\n%s", line, masked)
		}
	}

	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	stop := notifytest.RunNotifiers(t, b, l.Config.Notify, delivery.Options{})
	defer stop()
	notifytest.Publish(t, b, notifytest.Firing("nas1", "url-2"))
	wait := func(what string, s *notifytest.HTTPSink) notifytest.Hit {
		t.Helper()
		select {
		case h := <-s.Got:
			return h
		case <-time.After(20 * time.Second):
			t.Fatalf("the outbox did not deliver to the %s URL channel", what)
		}
		return notifytest.Hit{}
	}
	h := wait("matrix", matrixSrv)
	if want := "/_matrix/client/v3/rooms/!nas:example.org/send/m.room.message/" + matrix.TxnID("!nas:example.org", "url-2"); h.Method != http.MethodPut ||
		h.Path != want || h.Header.Get("Authorization") != "Bearer "+matrixToken || h.JSON(t)["msgtype"] != "m.text" {
		t.Errorf("matrix got %s %s %v", h.Method, h.Path, h.Header)
	}
	h = wait("mattermost", mmSrv)
	if j := h.JSON(t); h.Method != http.MethodPost || h.Path != "/hooks/"+mmKey || j["channel"] != "nas-alerts" || j["username"] != "zwatch" {
		t.Errorf("mattermost got %s %s %v", h.Method, h.Path, j)
	}
	// The workflow's own URL, query and sig as given
	// (https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using#send-adaptive-cards-using-an-incoming-webhook).
	h = wait("teams", teamsSrv)
	if j := h.JSON(t); h.Method != http.MethodPost || h.Path != "/workflows/abc/triggers/manual/paths/invoke" ||
		h.RawQuery != "api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig="+teamsSig || j["type"] != "message" {
		t.Errorf("teams got %s %s?%s %v", h.Method, h.Path, h.RawQuery, j)
	}
	h = wait("opsgenie", genieSrv)
	if j := h.JSON(t); h.Method != http.MethodPost || h.Path != "/v2/alerts" || h.Header.Get("Authorization") != "GenieKey "+genieKey ||
		j["alias"] == "" || j["priority"] != "P1" {
		t.Errorf("opsgenie got %s %s %v %v", h.Method, h.Path, h.Header, j)
	}
	h = wait("pagerduty", pdSrv)
	if j := h.JSON(t); h.Method != http.MethodPost || h.Path != "/v2/enqueue" || j["routing_key"] != routingKey ||
		j["event_action"] != "trigger" || j["client_url"] != "https://nas1.example.net/" {
		t.Errorf("pagerduty got %s %s %v", h.Method, h.Path, j)
	}
	h = wait("signal", signalSrv)
	if j := h.JSON(t); h.Method != http.MethodPost || h.Path != "/v2/send" || j["number"] != "+4915112345678" ||
		fmt.Sprint(j["recipients"]) != "[+4915187654321]" {
		t.Errorf("signal got %s %s %v", h.Method, h.Path, j)
	}
}

// An MQTT channel written as a URL logs in with the URL's user and
// password and publishes under the URL's path, to a real Mosquitto.
func TestMQTTURLChannelThroughTheOutbox(t *testing.T) {
	br := mosquittotest.Start(t, mosquittotest.Options{Users: map[string]string{"zwatch": "mqttS3cretpw"}})
	w := mosquittotest.Watch(t, br.Addr(br.Port), "zwatch", "mqttS3cretpw", "site/nas/#")
	l, err := parseConfig(t, fmt.Sprintf(`
notify:
  console: false
  channels:
    - url: "mqtt://zwatch:mqttS3cretpw@%s/site/nas?qos=2"
`, br.Addr(br.Port)))
	if err != nil {
		t.Fatal(err)
	}
	masked, err := l.Config.Masked()
	if err != nil {
		t.Fatal(err)
	}
	if s := string(masked); strings.Contains(s, "mqttS3cretpw") || !strings.Contains(s, "type: mqtt # from url: mqtt://***@"+br.Addr(br.Port)+"/site/nas?qos=2") ||
		!strings.Contains(s, "topic_prefix: site/nas") || !strings.Contains(s, "password: '******'") {
		t.Errorf("check-config:\n%s", s)
	}
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	stop := notifytest.RunNotifiers(t, b, l.Config.Notify, delivery.Options{})
	defer stop()
	notifytest.Publish(t, b, notifytest.Firing("nas1", "url-mqtt"))
	if e := w.On(t, 0, "site/nas/nas1/notification", nil).JSON(t); e["id"] != "url-mqtt" {
		t.Errorf("event %v", e)
	}
}
