package config_test

import (
	"os"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/internal/yamlcheck"
)

// TestExampleConfigIsValidAndComplete keeps configs/zwatch.example.yaml
// honest: it loads, and it shows every key zwatch knows — those of the
// config's structs and those of every section the rules own (rules.kernel,
// ...), which is why it runs with the real catalogue.
func TestExampleConfigIsValidAndComplete(t *testing.T) {
	const path = "../configs/zwatch.example.yaml"
	cat := catalog.Config()
	if _, err := config.Load(path, cat); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	join := func(path, k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	unmarshalerType := reflect.TypeFor[yaml.Unmarshaler]()
	rulesType := reflect.TypeFor[config.RulesConfig]()
	var walkNode func(n *yaml.Node, prefix string)
	walkNode = func(n *yaml.Node, prefix string) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := join(prefix, n.Content[i].Value)
			have[p] = true
			walkNode(n.Content[i+1], p)
		}
	}
	walkNode(root.Content[0], "")
	var walkType func(tp reflect.Type, prefix string)
	walkType = func(tp reflect.Type, prefix string) {
		for name, f := range yamlcheck.Fields(tp) {
			p := join(prefix, name)
			if !have[p] {
				t.Errorf("configs/zwatch.example.yaml does not show key %s", p)
			}
			if f.Type == rulesType || f.Type.Kind() == reflect.Struct && !reflect.PointerTo(f.Type).Implements(unmarshalerType) {
				walkType(f.Type, p)
			}
		}
	}
	walkType(reflect.TypeFor[config.Config](), "")
	if len(cat.RuleSections) == 0 {
		t.Fatal("the catalogue has no rule sections")
	}
	for _, s := range cat.RuleSections {
		p := "rules." + s.Key()
		if !have[p] {
			t.Errorf("configs/zwatch.example.yaml does not show key %s", p)
		}
		walkType(reflect.TypeOf(s.Default()), p)
	}
}
