package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// exampleCommentColumn is where the example config starts the comment
// beside a key; a longer line pushes it right (see layOut).
const exampleCommentColumn = 25

// exampleLine is one line of the example: a key with its value, or a
// comment of its own (comment only).
type exampleLine struct {
	text, comment string
}

// RulesExample is the rules: section of configs/zwatch.example.yaml, which
// zwatch.yaml(5) is made from: the shared keys, then each of sections, each
// key with its default and the comments its field's tags give — doc, the
// comment beside the key; note, comment lines above it (\n between lines).
// So the example and the manual cannot state other keys or defaults than
// the code has.
func RulesExample(sections []RuleSection) (string, error) {
	lines := []exampleLine{{text: "rules:"}}
	shared, err := exampleKeys(reflect.ValueOf(DefaultRules()), "  ")
	if err != nil {
		return "", fmt.Errorf("rules: %w", err)
	}
	lines = append(lines, shared...)
	for _, s := range sections {
		v := reflect.ValueOf(s.Default())
		if v.Kind() != reflect.Struct {
			return "", fmt.Errorf("rules.%s: its default is a %s, not a struct of keys", s.Key(), v.Type())
		}
		own, err := exampleKeys(v, "    ")
		if err != nil {
			return "", fmt.Errorf("rules.%s: %w", s.Key(), err)
		}
		lines = append(lines, exampleLine{text: "  " + s.Key() + ":"})
		lines = append(lines, own...)
	}
	return layOut(lines), nil
}

// exampleKeys are the lines of the keys of struct v, indented.
func exampleKeys(v reflect.Value, indent string) ([]exampleLine, error) {
	var out []exampleLine
	for i := range v.NumField() {
		f := v.Type().Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "-" || !f.IsExported() {
			continue
		}
		if key == "" {
			key = strings.ToLower(f.Name)
		}
		if note := f.Tag.Get("note"); note != "" {
			for _, l := range strings.Split(note, "\n") {
				out = append(out, exampleLine{comment: strings.TrimRight(indent+"# "+l, " ")})
			}
		}
		value, err := flowValue(v.Field(i).Interface())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		out = append(out, exampleLine{text: indent + key + ": " + value, comment: f.Tag.Get("doc")})
	}
	return out, nil
}

// flowValue writes v on one line, lists and mappings in flow style.
func flowValue(v any) (string, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return "", err
	}
	flow(&n)
	out, err := yaml.Marshal(&n)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(out))
	if strings.Contains(s, "\n") {
		return "", errors.New("its default does not fit on one line")
	}
	return s, nil
}

func flow(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style |= yaml.FlowStyle
	}
	for _, c := range n.Content {
		flow(c)
	}
}

// layOut joins the lines, each key's comment at exampleCommentColumn. In a
// run of keys with comments, those too long for it have theirs line up two
// spaces past the longest of them.
func layOut(lines []exampleLine) string {
	var b strings.Builder
	for i := 0; i < len(lines); {
		end, overflow := i, 0
		for ; end < len(lines) && lines[end].text != "" && lines[end].comment != ""; end++ {
			if w := width(lines[end].text); w >= exampleCommentColumn {
				overflow = max(overflow, w+2)
			}
		}
		if end == i {
			b.WriteString(lines[i].text + lines[i].comment + "\n")
			i++
			continue
		}
		for _, l := range lines[i:end] {
			column := exampleCommentColumn
			if width(l.text) >= exampleCommentColumn {
				column = overflow
			}
			b.WriteString(l.text + strings.Repeat(" ", column-width(l.text)) + "# " + l.comment + "\n")
		}
		i = end
	}
	return b.String()
}

func width(s string) int { return utf8.RuneCountInString(s) }
