// Package yamlcheck walks a YAML node tree beside the Go type it will be
// decoded into and reports every unknown or repeated key and every value of
// the wrong kind or type, each with its full key path (notify.channels[1].url),
// the offending value and a fix. It exists because yaml.v3's own errors name
// only a line number and stop at the first unknown field; the config and the
// provision plan both want all problems, named the way a person reads them.
package yamlcheck

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Kind says what is wrong, so that a caller may word a problem its own way.
type Kind int

// Kinds of problems.
const (
	// UnknownKey is a key the Go type has no field for.
	UnknownKey Kind = iota + 1
	// DuplicateKey is a key given a second time in the same mapping.
	DuplicateKey
	// WrongKind is a list, mapping or single value where another belongs.
	WrongKind
	// BadValue is a single value that does not decode into its Go type.
	BadValue
	// Alias is an alias (*name) where Options.NoAliases refuses them.
	Alias
)

// Problem is one place where the YAML does not fit the Go type.
type Problem struct {
	Kind Kind
	// Path is the full key path, e.g. notify.channels[1].url; "" is the
	// document itself.
	Path string
	Line int
	// Key is the key as written, for UnknownKey and DuplicateKey.
	Key string
	// Value is the offending single value as written; "" when the problem
	// is a key, a list or a mapping.
	Value string
	// Message says what is wrong and how to fix it.
	Message string
	// Keys are the keys valid here, for UnknownKey and for WrongKind where
	// a mapping of fixed keys belongs.
	Keys []string
	// Want and Found describe, for WrongKind, what belongs here and what is
	// there: "a list (- item lines)", "a mapping (key: value lines)", ...
	Want, Found string
}

// Options change what Check accepts.
type Options struct {
	// NoAliases reports every alias (*name) instead of checking what it
	// refers to, for files that should spell everything out.
	NoAliases bool
}

// Check walks n (a document node or the value inside one) beside t and
// returns every problem in document order; none means n decodes into t.
func Check(n *yaml.Node, t reflect.Type, opts Options) []Problem {
	if n != nil && n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	if n == nil || n.Kind == 0 {
		return nil
	}
	w := walker{opts: opts, seen: map[visit]bool{}}
	w.node(n, t, "")
	return w.problems
}

type walker struct {
	opts     Options
	problems []Problem
	// seen holds anchored nodes already checked against a type, so that
	// aliases of aliases (a "billion laughs") are walked in linear time.
	seen map[visit]bool
}

type visit struct {
	n *yaml.Node
	t reflect.Type
}

func (w *walker) node(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		if w.opts.NoAliases {
			w.problems = append(w.problems, Problem{Kind: Alias, Path: path, Line: n.Line,
				Message: fmt.Sprintf("YAML aliases (*%s) are not supported here: write the value out", n.Value)})
			return
		}
		if n.Alias == nil {
			return
		}
		n = n.Alias
	}
	if n.Anchor != "" {
		v := visit{n, t}
		if w.seen[v] {
			return // reported where it is written
		}
		w.seen[v] = true
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // "key:" with nothing: the default, an empty list or mapping
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			w.problems = append(w.problems, Problem{Kind: BadValue, Path: path, Line: n.Line, Value: scalar(n),
				Message: strings.TrimPrefix(err.Error(), "yaml: ")})
		}
		return
	}
	switch t.Kind() {
	case reflect.Interface:
		// Anything goes.
	case reflect.Struct:
		if !w.kind(n, yaml.MappingNode, t, path) {
			return
		}
		fields := Fields(t)
		w.mapping(n, path, func(k, v *yaml.Node, child string) {
			f, ok := fields[k.Value]
			if !ok {
				w.problems = append(w.problems, UnknownKeyAt(child, k, keys(t)))
				return
			}
			w.node(v, f.Type, child)
		})
	case reflect.Map:
		if w.kind(n, yaml.MappingNode, t, path) {
			w.mapping(n, path, func(_, v *yaml.Node, child string) { w.node(v, t.Elem(), child) })
		}
	case reflect.Slice, reflect.Array:
		if !w.kind(n, yaml.SequenceNode, t, path) {
			return
		}
		for i, c := range n.Content {
			w.node(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		if !w.kind(n, yaml.ScalarNode, t, path) {
			return
		}
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			w.problems = append(w.problems, Problem{Kind: BadValue, Path: path, Line: n.Line, Value: n.Value,
				Message: "must be " + describe(t)})
		}
	}
}

// kind reports whether n is of the kind t needs, and a problem if not.
func (w *walker) kind(n *yaml.Node, want yaml.Kind, t reflect.Type, path string) bool {
	if n.Kind == want {
		return true
	}
	p := Problem{Kind: WrongKind, Path: path, Line: n.Line, Value: scalar(n), Want: describe(t), Found: kindName(n.Kind)}
	p.Message = fmt.Sprintf("must be %s, not %s", p.Want, p.Found)
	if t.Kind() == reflect.Struct {
		p.Keys = keys(t)
		p.Message += "; valid keys here: " + strings.Join(p.Keys, ", ")
	}
	w.problems = append(w.problems, p)
	return false
}

// mapping calls each for every key of n given once, and reports the repeats.
func (w *walker) mapping(n *yaml.Node, path string, each func(k, v *yaml.Node, child string)) {
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		child := join(path, k.Value)
		if line, dup := first[k.Value]; dup {
			w.problems = append(w.problems, Problem{Kind: DuplicateKey, Path: child, Line: k.Line, Key: k.Value,
				Message: fmt.Sprintf("given twice (lines %d and %d): keep one", line, k.Line)})
			continue
		}
		first[k.Value] = k.Line
		each(k, v, child)
	}
}

// Fields are the struct fields of t that a YAML mapping may name, by key.
func Fields(t reflect.Type) map[string]reflect.StructField {
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

func keys(t reflect.Type) []string {
	var ks []string
	for k := range Fields(t) {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// UnknownKeyAt is the problem of key k, at path, where only keys are
// valid: said the same way wherever a mapping's keys are checked.
func UnknownKeyAt(path string, k *yaml.Node, keys []string) Problem {
	return Problem{Kind: UnknownKey, Path: path, Line: k.Line, Key: k.Value, Keys: keys,
		Message: fmt.Sprintf("unknown key (line %d)%s; valid keys here: %s", k.Line, Suggest(k.Value, keys), strings.Join(keys, ", "))}
}

// Suggest is a did-you-mean clause for a message about word, such as
// `: did you mean "host"?`, or "" when no known word is close.
func Suggest(word string, known []string) string {
	if c := Closest(word, known); c != "" {
		return fmt.Sprintf(": did you mean %q?", c)
	}
	return ""
}

// Closest is the known word nearest to word, ignoring case, when it is at
// most two edits away (a typo); otherwise "".
func Closest(word string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(strings.ToLower(word), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the Levenshtein edit distance; long words count as far apart,
// so that a huge key in a hostile file costs nothing.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// describe says what a YAML value for t looks like.
func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return kindName(yaml.MappingNode)
	case reflect.Slice, reflect.Array:
		return kindName(yaml.SequenceNode)
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

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "a mapping (key: value lines)"
	case yaml.SequenceNode:
		return "a list (- item lines)"
	case yaml.ScalarNode:
		return "a single value"
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

func scalar(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
