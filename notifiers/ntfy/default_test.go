package ntfy

import (
	"net/http"
	"testing"

	"github.com/zwatch/zwatch/notifiers/channel"
)

func TestNtfyDefaultsToPublicServer(t *testing.T) {
	n := New(Config{Topic: "x"}, channel.Env{HTTP: http.DefaultClient})
	if n.url != "https://ntfy.sh" {
		t.Errorf("default url %q", n.url)
	}
}
