package channel

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFitJSON(t *testing.T) {
	// The text appears twice, once escaped: as a Matrix event carries it.
	build := func(s string) map[string]string {
		return map[string]string{"body": s, "formatted_body": "<pre>" + strings.ReplaceAll(s, "<", "&lt;") + "</pre>"}
	}
	text := "first line\n" + strings.Repeat("<disk> é ", 20000)
	v, err := FitJSON(60000, text, build)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	if len(b) > 60000 || len(b) < 50000 {
		t.Errorf("encoded %d bytes, want just under 60000", len(b))
	}
	if !strings.HasPrefix(v["body"], "first line\n") || !strings.HasSuffix(v["body"], "…") {
		t.Errorf("body %.40q…", v["body"])
	}
	if short, _ := FitJSON(60000, "short", build); short["body"] != "short" {
		t.Errorf("a short text was changed: %q", short["body"])
	}
	if _, err := FitJSON(10, "x", build); err == nil {
		t.Error("an impossible limit was met")
	}
}

func TestDetailNamesMatrixErrcode(t *testing.T) {
	for raw, want := range map[string]string{
		`{"errcode":"M_LIMIT_EXCEEDED","error":"Too Many Requests","retry_after_ms":2000}`: "M_LIMIT_EXCEEDED: Too Many Requests; retry after 2000 ms",
		`{"errcode":"M_UNKNOWN_TOKEN"}`:       "M_UNKNOWN_TOKEN",
		`{"error":"invalid_auth","ok":false}`: "invalid_auth",
	} {
		if got := Detail([]byte(raw)); got != want {
			t.Errorf("Detail(%s) = %q, want %q", raw, got, want)
		}
	}
}
