package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

func typeOf(v any) reflect.Type { return reflect.TypeOf(v).Elem() }

// checkNode walks the YAML tree beside the Go type it will decode into and
// reports, with the full key path, every unknown key and every value that
// does not fit its type. yaml.v3's own errors name only a line number.
func checkNode(n *yaml.Node, t reflect.Type, path string, errs *Errors) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			errs.add(orRoot(path), n.Value, "%s", cleanYAMLError(err))
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			errs.add(orRoot(path), nodeValue(n), "must be a mapping of keys (%s)", strings.Join(keysOf(t), ", "))
			return
		}
		fields := fieldsByTag(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if !ok {
				errs.add(join(path, k.Value), nil, "unknown key (line %d)%s; valid keys here: %s", k.Line, suggest(k.Value, keysOf(t)), strings.Join(keysOf(t), ", "))
				continue
			}
			checkNode(v, f.Type, join(path, k.Value), errs)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			errs.add(orRoot(path), nodeValue(n), "must be a list")
			return
		}
		for i, c := range n.Content {
			checkNode(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), errs)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			errs.add(orRoot(path), nodeValue(n), "must be a mapping")
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			checkNode(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), errs)
		}
	default:
		if n.Kind != yaml.ScalarNode {
			errs.add(orRoot(path), nil, "must be a single %s value, not a list or mapping", kindName(t))
			return
		}
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			errs.add(orRoot(path), n.Value, "must be %s", kindName(t))
		}
	}
}

func fieldsByTag(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f
	}
	return out
}

func keysOf(t reflect.Type) []string {
	var ks []string
	for k := range fieldsByTag(t) {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// suggest proposes the nearest valid key for a typo.
func suggest(k string, valid []string) string {
	best, bestD := "", 3
	for _, v := range valid {
		if d := distance(k, v); d < bestD {
			best, bestD = v, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(": did you mean %q?", best)
}

// distance is the Levenshtein edit distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	return t.String()
}

func nodeValue(n *yaml.Node) any {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return nil
}

func cleanYAMLError(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "yaml: ")
	return s
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func orRoot(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}
