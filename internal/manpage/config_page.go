package manpage

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/config"
)

// Block is a run of comment lines: prose, or an example to show as written.
type Block struct {
	Example bool
	Lines   []string
}

// Entry is one key of the config as the example file shows it.
type Entry struct {
	// Path is the full key path, e.g. zfs.list_interval.
	Path string
	// Default is the value as the example writes it ("10s", `""`, "[]",
	// "{warning: 1, critical: 50}"); empty for a mapping of keys below.
	Default string
	// Keys are the keys of a mapping written in flow style on one line
	// ({warning: 1, critical: 50}), which get no entries of their own.
	Keys []string
	// Text is the comment above the key, then the one beside it, then the
	// one below its value (an example such as the channel blocks).
	Text []Block
}

// Section is a top-level key with the entries under it; the keys at the top
// level that are not mappings (host, role, ...) form a section named "".
type Section struct {
	Name    string
	Intro   []Block
	Entries []Entry
}

// ConfigEntries reads the commented example config (the reference of every
// key with its default) into sections of entries, in the file's order.
func ConfigEntries(example []byte) (preamble []Block, sections []Section, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(example, &doc); err != nil {
		return nil, nil, fmt.Errorf("example config: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, errors.New("example config: not a mapping of keys")
	}
	root := doc.Content[0]
	preamble = comment(doc.HeadComment)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 {
			s := Section{Name: k.Value, Intro: comments(k.HeadComment, k.LineComment, v.LineComment)}
			s.Entries = entries(v, k.Value)
			if k.FootComment != "" || v.FootComment != "" {
				s.Intro = append(s.Intro, comments(k.FootComment, v.FootComment)...)
			}
			sections = append(sections, s)
			continue
		}
		e, err := leaf(k, v, k.Value)
		if err != nil {
			return nil, nil, err
		}
		if n := len(sections); n == 0 || sections[n-1].Name != "" {
			sections = append(sections, Section{})
		}
		sections[len(sections)-1].Entries = append(sections[len(sections)-1].Entries, e)
	}
	return preamble, sections, nil
}

// entries lists the keys of the block mapping m under prefix, depth first.
func entries(m *yaml.Node, prefix string) []Entry {
	var out []Entry
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		p := prefix + "." + k.Value
		if v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 {
			if text := comments(k.HeadComment, k.LineComment, v.LineComment, k.FootComment, v.FootComment); len(text) > 0 {
				out = append(out, Entry{Path: p, Text: text})
			}
			out = append(out, entries(v, p)...)
			continue
		}
		e, err := leaf(k, v, p)
		if err != nil {
			// A value that cannot be written back is shown as the example has it.
			e = Entry{Path: p, Default: v.Value, Text: comments(k.HeadComment, k.LineComment, v.LineComment, k.FootComment, v.FootComment)}
		}
		out = append(out, e)
	}
	return out
}

// leaf is the entry of key k whose value v is a scalar, a list or a flow mapping.
func leaf(k, v *yaml.Node, path string) (Entry, error) {
	e := Entry{Path: path, Text: comments(k.HeadComment, k.LineComment, v.LineComment, k.FootComment, v.FootComment)}
	if v.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.Content); i += 2 {
			e.Keys = append(e.Keys, v.Content[i].Value)
		}
	}
	out, err := yaml.Marshal(bare(v))
	if err != nil {
		return e, fmt.Errorf("example config: %s: %w", path, err)
	}
	e.Default = strings.TrimSpace(string(out))
	return e, nil
}

// bare copies n without its comments, lists and mappings in flow style, so
// that it marshals back to the one-line value the example shows.
func bare(n *yaml.Node) *yaml.Node {
	c := *n
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		c.Style |= yaml.FlowStyle
	}
	c.Content = nil
	for _, ch := range n.Content {
		c.Content = append(c.Content, bare(ch))
	}
	return &c
}

// comments turns the comments of one key into blocks, in the order given.
func comments(cs ...string) []Block {
	var out []Block
	for _, c := range cs {
		out = append(out, comment(c)...)
	}
	return out
}

// yamlKeyLine is a commented-out key alone on its line (devices:); with an
// indented line after it, it starts an example.
var yamlKeyLine = regexp.MustCompile(`^[a-z_][a-z0-9_]*:$`)

// comment splits a YAML comment ("# a\n# b") into prose and examples: a line
// indented past "# ", a list item, or a commented-out key followed by such
// a line is an example line; every other line is prose; "#" alone
// separates paragraphs.
func comment(c string) []Block {
	var out []Block
	add := func(ex bool, line string) {
		if n := len(out); n > 0 && out[n-1].Example == ex {
			out[n-1].Lines = append(out[n-1].Lines, line)
			return
		}
		out = append(out, Block{Example: ex, Lines: []string{line}})
	}
	var lines []string
	for _, l := range strings.Split(c, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, strings.TrimPrefix(l, "#"))
		}
	}
	indented := func(l string) bool {
		return strings.HasPrefix(l, "  ") || strings.HasPrefix(l, " - ") || strings.HasPrefix(l, "- ")
	}
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
			add(false, "")
		case indented(l):
			add(true, strings.TrimPrefix(l, " "))
		case yamlKeyLine.MatchString(strings.TrimSpace(l)) && i+1 < len(lines) && indented(lines[i+1]):
			add(true, strings.TrimPrefix(l, " "))
		default:
			add(false, strings.TrimPrefix(l, " "))
		}
	}
	return out
}

// ChannelKeys are the keys every channel has, in the order of
// config.ChannelConfig's fields; a mapping's keys follow as key.sub.
func ChannelKeys() []string {
	return structKeys(reflect.TypeFor[config.ChannelConfig](), "")
}

func structKeys(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		name := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if name == "-" || name == "" || !f.IsExported() {
			continue
		}
		out = append(out, prefix+name)
		if f.Type.Kind() == reflect.Struct {
			out = append(out, structKeys(f.Type, prefix+name+".")...)
		}
	}
	return out
}
