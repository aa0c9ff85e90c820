package metrics

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
)

// descNames are the names of every metric the view collector can send.
func descNames(t *testing.T) map[string]bool {
	t.Helper()
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	out := map[string]bool{"zwatch_build_info": true}
	v := reflect.ValueOf(newDescs()).Elem()
	for i := range v.NumField() {
		f := v.Field(i) // unexported: read through its address
		d, ok := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(*prometheus.Desc)
		if !ok || d == nil {
			t.Fatalf("descs.%s is not set", v.Type().Field(i).Name)
		}
		m := fq.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		out[m[1]] = true
	}
	return out
}

func TestDocsListEveryMetric(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range descNames(t) {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/metrics.md does not list %s", name)
		}
	}
}

type dashboard struct {
	Templating struct {
		List []struct {
			Name, Type string
		}
	}
	Panels []struct {
		Title      string
		Datasource struct{ UID string }
		Targets    []struct {
			Expr       string
			Datasource struct{ UID string }
		}
	}
}

// TestGrafanaDashboard checks the example dashboard: valid JSON, the data
// source a variable, every query over metrics zwatch sends, and every query
// valid PromQL (promtool check rules parses each as a rule's expression).
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "configs", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("configs/grafana-dashboard.json: %v", err)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["datasource"] != "datasource" || vars["host"] != "query" {
		t.Fatalf("variables %v: want datasource (datasource) and host (query)", vars)
	}
	known := descNames(t)
	ident := regexp.MustCompile(`\b(zwatch|zfs|smartctl)_[a-z0-9_]+\b`)
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, p := range d.Panels {
		if p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: datasource %q with %d queries", p.Title, p.Datasource.UID, len(p.Targets))
		}
		for _, q := range p.Targets {
			if q.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: a query's datasource is %q", p.Title, q.Datasource.UID)
			}
			for _, m := range ident.FindAllString(q.Expr, -1) {
				if !known[m] {
					t.Errorf("panel %q queries %s, which zwatch does not send", p.Title, m)
				}
			}
			expr := strings.NewReplacer("$__rate_interval", "5m", "$host", ".*").Replace(q.Expr)
			n++
			fmt.Fprintf(&rules, "      - record: dashboard:query%d\n        expr: %q\n", n, expr)
		}
	}
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("ZW_REQUIRE_TOOLS") == "1" {
			t.Fatal("promtool not found and ZW_REQUIRE_TOOLS=1")
		}
		t.Skip("promtool not found; the dashboard's queries are not parsed")
	}
	file := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "check", "rules", file).CombinedOutput(); err != nil {
		t.Fatalf("the dashboard's queries are not valid PromQL: %v\n%s", err, out)
	}
}
