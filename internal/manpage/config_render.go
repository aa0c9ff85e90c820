package manpage

import (
	"strings"

	"github.com/zwatch/zwatch/config"
)

// ConfigPage is zwatch.yaml(5): every key of the example config with its
// default and its comment, every channel type with its keys, and the alert
// names rules.for and rules.disabled take.
func ConfigPage(example []byte, cat config.Catalog, h Header) ([]byte, error) {
	preamble, sections, err := ConfigEntries(example)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(h.th("zwatch.yaml", "5"))
	b.WriteString(".SH NAME\nzwatch.yaml \\- configuration of zwatch, the ZFS and disk health monitor\n")
	b.WriteString(".SH SYNOPSIS\n.B " + code(config.DefaultPath) + "\n")
	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString(".BR zwatch (1)\nreads one YAML file, " + code(config.DefaultPath) +
		" unless\n.B \\-\\-config\nnames another.\n" +
		"A key it does not know, a value of the wrong type, a bad duration or an impossible value\n" +
		"stops it with an error that names the key, the value and the fix.\n" +
		"A key left out has the default shown below.\n" +
		"Durations are written like 30s, 10m, 4h, 7d.\n.PP\n")
	blocks(&b, preamble, ".PP")
	b.WriteString(".SH KEYS\n")
	for _, s := range sections {
		name := s.Name
		if name == "" {
			name = "Top level"
		}
		b.WriteString(".SS " + code(name) + "\n")
		blocks(&b, s.Intro, ".PP")
		for _, e := range s.Entries {
			entry(&b, e)
		}
	}
	channelTypes(&b, cat)
	b.WriteString(".SH ALERT NAMES\n" +
		"The names\n.B rules.for\nand\n.B rules.disabled\ntake;\n.B zwatch rules eval\nprints the ones a saved output raises:\n.PP\n")
	list(&b, cat.Rules, "", ".")
	b.WriteString(".SH FILES\n.TP\n.B " + code(config.DefaultPath) + "\n" +
		"The configuration. When it holds a secret written literally, keep it readable by root alone (chmod 600);\n" +
		"zwatch warns otherwise. A secret may instead be written as ${ENV_VAR} or file:/path/to/file.\n" +
		".TP\n.B /var/lib/zwatch\nThe default\n.BR state_dir :\nthe embedded bus, the outbox of notifications, the alert state and the history.\n")
	b.WriteString(".SH SEE ALSO\n.BR zwatch (1),\n.BR zwatch\\-check\\-config (1),\n.BR zwatch\\-notify\\-test (1),\n.BR zwatch\\-run (1)\n")
	return []byte(b.String()), nil
}

// entry writes one key as a tagged paragraph: the path, its default, its text.
func entry(b *strings.Builder, e Entry) {
	b.WriteString(".TP\n.B \\%" + code(e.Path) + "\n")
	switch {
	case len(e.Keys) > 0:
		b.WriteString("Default: \\fB" + code(e.Default) + "\\fR; its keys:\n")
		list(b, e.Keys, e.Path+".", ".")
	case e.Default != "":
		b.WriteString("Default: \\fB" + code(e.Default) + "\\fR\n")
	default:
		b.WriteString("A mapping of the keys below.\n")
	}
	b.WriteString(".br\n")
	blocks(b, e.Text, ".IP")
}

// blocks writes prose as paragraphs and examples as they are written; brk
// starts a paragraph (.PP at the left margin, .IP within a tagged one).
func blocks(b *strings.Builder, bs []Block, brk string) {
	for i, bl := range bs {
		if bl.Example {
			example(b, bl.Lines)
			continue
		}
		if i > 0 {
			b.WriteString(brk + "\n")
		}
		paragraphs(b, bl.Lines, brk)
	}
}

// channelTypes lists the keys every channel has and each type's own keys.
func channelTypes(b *strings.Builder, cat config.Catalog) {
	b.WriteString(".SH CHANNEL TYPES\n" +
		"Each entry of\n.B notify.channels\nhas the keys\n")
	list(b, ChannelKeys(), "", ",")
	b.WriteString("and those of its\n.BR type .\n" +
		"A key of another type is refused, so that a block pasted for the wrong service is noticed.\n" +
		".B zwatch notify test\nsends a test alert through each channel.\n")
	for _, ct := range cat.Channels {
		b.WriteString(".TP\n.B type: " + code(ct.Name()) + "\n")
		list(b, ct.Keys(), "", ".")
	}
}

// list writes prefix+item for each item in bold, never hyphenated, as
// "a, b and c" followed by end.
func list(b *strings.Builder, items []string, prefix, end string) {
	for i, it := range items {
		sep := ","
		switch i {
		case len(items) - 1:
			sep = end
		case len(items) - 2:
			sep = `" and"`
		}
		b.WriteString(".BR \\%" + code(prefix+it) + " " + sep + "\n")
	}
}
