package notifiers_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/notifiers"
)

// TestServicesTable pins the channel types, their order (the order of
// "must be one of ...") and their keys (the "its keys: ..." of a foreign
// key), and checks the docs show each.
func TestServicesTable(t *testing.T) {
	want := []struct {
		name string
		keys []string
	}{
		{"email", []string{"smtp", "from", "to"}},
		{"pushover", []string{"token", "user", "api_url", "devices", "priority", "emergency"}},
		{"telegram", []string{"token", "chat_ids", "api_url", "answer_users"}},
		{"ntfy", []string{"url", "topic", "token", "username", "password", "priority"}},
		{"gotify", []string{"url", "token", "priority"}},
		{"discord", []string{"webhook_url"}},
		{"slack", []string{"webhook_url", "token", "channel", "api_url"}},
		{"mattermost", []string{"webhook_url", "channel", "username", "icon_url", "priority"}},
		{"teams", []string{"webhook_url"}},
		{"matrix", []string{"homeserver", "access_token", "room", "answer_users"}},
		{"webhook", []string{"url", "headers"}},
		{"exec", []string{"command", "timeout", "env"}},
		{"mqtt", []string{"broker", "username", "password", "ca_file", "client_id", "topic_prefix", "discovery_prefix", "qos"}},
		{"signal", []string{"url", "number", "recipients", "text_mode", "answer_numbers"}},
		{"pagerduty", []string{"routing_key", "url", "client_url"}},
		{"opsgenie", []string{"api_key", "api_url"}},
	}
	got := notifiers.Services()
	if len(got) != len(want) {
		t.Fatalf("%d services, want %d", len(got), len(want))
	}
	doc, err := os.ReadFile("../docs/notifications.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if got[i].Name() != w.name || !slices.Equal(got[i].Keys(), w.keys) {
			t.Errorf("service %d: %s %v, want %s %v", i, got[i].Name(), got[i].Keys(), w.name, w.keys)
		}
		if !strings.Contains(string(doc), "type: "+w.name) {
			t.Errorf("docs/notifications.md shows no %s channel", w.name)
		}
	}
	if names := catalog.Config().ChannelTypeNames(); len(names) != len(want) || names[0] != "email" {
		t.Errorf("catalogue channel types %v", names)
	}
}
