package replace

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

const docsPath = "../../docs/replacement.md"

// exampleBlock is a generated example in the docs: the marker names a
// guide case, the fenced block holds its output.
var exampleBlock = regexp.MustCompile("(?s)<!-- example: ([a-z0-9-]+) -->\n```text\n(.*?)```\n")

// TestDocsExamplesAreGenerated keeps docs/replacement.md honest: every
// example in it is what the code prints for a real status output (-update
// rewrites them).
func TestDocsExamplesAreGenerated(t *testing.T) {
	b, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]guideCase{}
	for _, c := range guideCases {
		cases[c.name] = c
	}
	doc := string(b)
	found := 0
	out := exampleBlock.ReplaceAllStringFunc(doc, func(block string) string {
		m := exampleBlock.FindStringSubmatch(block)
		c, ok := cases[m[1]]
		if !ok {
			t.Errorf("docs name unknown example %q", m[1])
			return block
		}
		found++
		_, _, text := guideFor(t, c)
		if text != m[2] && !*update {
			t.Errorf("docs example %s is stale; run go test ./replace -update", m[1])
		}
		return "<!-- example: " + m[1] + " -->\n```text\n" + text + "```\n"
	})
	if found == 0 {
		t.Error("docs hold no generated example")
	}
	if *update && out != doc {
		if err := os.WriteFile(docsPath, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range guideCases {
		if !strings.Contains(out, c.replace) {
			t.Errorf("docs lack the replace command of %s: %s", c.name, c.replace)
		}
	}
}
