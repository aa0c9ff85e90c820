package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// check-config prints channels written as URLs with their credentials
// masked, in the URL and in the keys it decoded to; a wrong URL's error
// names the part without showing them either.
func TestCheckConfigMasksChannelURLs(t *testing.T) {
	secrets := []string{"tk_ntfyS3cret", "azGDORePK8gMaC0QOYAMyEEuzJnyUi", "uQiRzpo4DXghDmr9QzzfQu27cmVRsG",
		"AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "AzyoeNS.D4iJLVa", "JHMHI8qBe7bk2ZwO5U711o3dV_js", "XXXXXXXXXXXXXXXXXXXXXXXX",
		"m4il-pass", "hookS3cret", "envS3cretToken"}
	t.Setenv("ZW_TEST_NTFY_URL", "ntfy://:envS3cretToken@ntfy.example.net/env-topic")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	err := os.WriteFile(good, []byte(`host: nas1
state_dir: `+dir+`
notify:
  channels:
    - url: "ntfy://:tk_ntfyS3cret@ntfy.sh/nas1-alerts?priority=high"
    - url: "pushover://shoutrrr:azGDORePK8gMaC0QOYAMyEEuzJnyUi@uQiRzpo4DXghDmr9QzzfQu27cmVRsG/?priority=1"
    - url: "telegram://110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw@telegram?chats=@nasalerts"
    - url: "gotify://gotify.example.net/AzyoeNS.D4iJLVa"
    - url: "discord://JHMHI8qBe7bk2ZwO5U711o3dV_js@4174216298"
    - url: "slack://hook:T00000000-B00000000-XXXXXXXXXXXXXXXXXXXXXXXX@webhook"
    - url: "smtp://nas%40example.net:m4il-pass@smtp.example.net:587/?from=nas@example.net&to=me@example.net"
    - url: "generic+https://hooks.example.net/zwatch?@Authorization=Bearer+hookS3cret"
    - url: "${ZW_TEST_NTFY_URL}"
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "check-config", good)
	if code != exitOK {
		t.Fatalf("code %d: %s", code, errOut)
	}
	for _, s := range secrets {
		if strings.Contains(out+errOut, s) {
			t.Errorf("check-config shows %q:\n%s", s, out)
		}
	}
	for _, want := range []string{
		"type: ntfy # from url: ntfy://***@ntfy.sh/nas1-alerts?priority=high",
		"type: pushover # from url: pushover://***@***/?priority=1",
		"type: telegram # from url: telegram://***@telegram?chats=@nasalerts",
		"type: gotify # from url: gotify://gotify.example.net/***",
		"type: discord # from url: discord://***@4174216298",
		"type: slack # from url: slack://***@webhook",
		"type: email # from url: smtp://***@smtp.example.net:587/?from=nas@example.net&to=me@example.net",
		"type: webhook # from url: generic+https://hooks.example.net/zwatch?@Authorization=***",
		"name: ntfy-2", "token: '****** (from ${ZW_TEST_NTFY_URL})'", "topic: env-topic",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check-config lacks %q:\n%s", want, out)
		}
	}

	out, _, code = run(t, "check-config", "--json", good)
	if code != exitOK || !strings.Contains(out, `"from_url": "ntfy://***@ntfy.sh/nas1-alerts?priority=high"`) ||
		!strings.Contains(out, `"from_url": "pushover://***@***/?priority=1"`) {
		t.Errorf("check-config --json: code %d\n%s", code, out)
	}
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("check-config --json shows %q", s)
		}
	}

	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("notify:\n  channels:\n    - url: \"ntfy://:tk_ntfyS3cret@ntfy.sh/t?priority=loud\"\n    - url: \"pushover://x:azGDORePK8gMaC0QOYAMyEEuzJnyUi@uQiRzpo4DXghDmr9QzzfQu27cmVRsG/?title=x\"\n"), 0o600)
	_, errOut, code = run(t, "check-config", bad)
	if code != exitUsage || !strings.Contains(errOut, `notify.channels[0].url = "ntfy://***@ntfy.sh/…": query parameter priority`) ||
		!strings.Contains(errOut, `notify.channels[1].url = "pushover://***@***/…": query parameter title`) {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
	for _, s := range secrets {
		if strings.Contains(errOut, s) {
			t.Errorf("the error shows %q: %s", s, errOut)
		}
	}
}

// The same for the newer channels' URL forms: no credential in the text or
// the JSON, the URL masked beside its type.
func TestCheckConfigMasksMoreChannelURLs(t *testing.T) {
	secrets := []string{"syt_matrixS3cret", "bywsw8zt5jgpte3nm65qjiru6h", "teamsSigS3cret", "S3cret-ops-genie-key",
		"e93facc04764012d7bfb002500d5d1a6", "mqttS3cretpw"}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	err := os.WriteFile(good, []byte(`host: nas1
state_dir: `+dir+`
notify:
  channels:
    - url: "matrix://:syt_matrixS3cret@matrix.example.org/?rooms=!nas:example.org"
    - url: "mattermost://zwatch@chat.example.net/bywsw8zt5jgpte3nm65qjiru6h/nas-alerts"
    - url: "teams://?host=https%3A%2F%2Fprod-00.westus.logic.azure.com%3A443%2Fworkflows%2Fabc%2Ftriggers%2Fmanual%2Fpaths%2Finvoke%3Fapi-version%3D1%26sig%3DteamsSigS3cret"
    - url: "teams+https://prod-00.westus.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?api-version=1&sig=teamsSigS3cret"
    - url: "opsgenie://api.eu.opsgenie.com/S3cret-ops-genie-key"
    - url: "pagerduty:///e93facc04764012d7bfb002500d5d1a6"
    - url: "signal://127.0.0.1:8080/+4915112345678/+4915187654321?disabletls=yes"
    - url: "mqtts://zwatch:mqttS3cretpw@broker.example.net/site/nas"
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "check-config", good)
	if code != exitOK {
		t.Fatalf("code %d: %s", code, errOut)
	}
	wants := []string{
		"matrix://***@matrix.example.org/?rooms=!nas:example.org",
		"mattermost://***@chat.example.net/***/nas-alerts",
		"teams://?host=***",
		"teams+https://prod-00.westus.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?api-version=1&sig=***",
		"opsgenie://api.eu.opsgenie.com/***",
		"pagerduty:///***",
		"signal://127.0.0.1:8080/+4915112345678/+4915187654321?disabletls=yes",
		"mqtts://***@broker.example.net/site/nas",
	}
	for _, want := range append(wants, "name: teams-2", "name: mqtts", "topic_prefix: site/nas") {
		if !strings.Contains(out, want) {
			t.Errorf("check-config lacks %q:\n%s", want, out)
		}
	}
	jsonOut, _, code := run(t, "check-config", "--json", good)
	if code != exitOK {
		t.Errorf("check-config --json: code %d\n%s", code, jsonOut)
	}
	for _, want := range wants {
		if !strings.Contains(jsonOut, `"from_url": "`+want+`"`) {
			t.Errorf("check-config --json lacks from_url %q:\n%s", want, jsonOut)
		}
	}
	for _, s := range secrets {
		if strings.Contains(out+errOut+jsonOut, s) {
			t.Errorf("check-config shows %q", s)
		}
	}

	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte(`notify:
  channels:
    - url: "matrix://bot:syt_matrixS3cret@matrix.example.org/?rooms=!nas:example.org"
    - url: "opsgenie://S3cret-ops-genie-key/?tags=x"
    - url: "pagerduty:///e93facc04764012d7bfb002500d5d1a6?severity=critical"
    - url: "exec:///usr/local/bin/page-me"
`), 0o600)
	_, errOut, code = run(t, "check-config", bad)
	for _, want := range []string{
		`notify.channels[0].url = "matrix://***@matrix.example.org/…": user: zwatch does not log in with a user and password`,
		`notify.channels[1].url = "opsgenie://***/…": query parameter tags`,
		`notify.channels[2].url = "pagerduty:///…": query parameter severity`,
		`notify.channels[3].url = "exec://…": scheme: exec channels have no URL form`,
	} {
		if code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("code %d, stderr lacks %q:\n%s", code, want, errOut)
		}
	}
	for _, s := range secrets {
		if strings.Contains(errOut, s) {
			t.Errorf("the error shows %q: %s", s, errOut)
		}
	}
}
