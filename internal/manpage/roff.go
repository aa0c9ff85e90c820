// Package manpage writes zwatch's manual pages: one per command from the
// cobra command tree (through cobra's doc package), and zwatch.yaml(5) from
// the commented example config and the catalogue of channel types and alert
// names. Both are generated at build time, so they cannot drift from what
// the binary accepts.
package manpage

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Header is what the .TH line of every page says besides its name.
type Header struct {
	// Date is the date of the source the pages were made from (the commit
	// date for a package build), so that a rebuild gives the same bytes.
	Date time.Time
	// Source is the program and its version, e.g. "zwatch 1.2.0".
	Source string
	// Manual is the title of the collection, e.g. "zwatch manual".
	Manual string
}

// th is the title line: .TH NAME SECTION DATE SOURCE MANUAL.
func (h Header) th(name, section string) string {
	return fmt.Sprintf(".TH %q %q %q %q %q\n", strings.ToUpper(name), section, h.Date.UTC().Format("Jan 2006"), h.Source, h.Manual)
}

// text escapes prose for roff: backslashes, a leading control character
// (. or ') and every non-ASCII character as a \[uXXXX] glyph, which groff
// renders in any locale. Hyphens stay hyphens.
func text(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case (r == '.' || r == '\'') && i == 0:
			b.WriteString(`\&`)
			b.WriteRune(r)
		case r > 0x7e || (r < 0x20 && r != '\t'):
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// code escapes a literal a person types (a key, a value, a command): like
// text, and every '-' becomes \- so that it prints and copies as the
// ASCII hyphen-minus.
func code(s string) string {
	return strings.ReplaceAll(text(s), "-", `\-`)
}

// backticks is a `literal` in a comment, shown in bold.
var backticks = regexp.MustCompile("`([^`]+)`")

// paragraphs writes prose lines as roff text lines, one input line per
// output line; an empty line starts a new paragraph with brk (.PP at the
// left margin, .IP within a tagged paragraph).
func paragraphs(b *strings.Builder, lines []string, brk string) {
	first := true
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			if !first {
				b.WriteString(brk + "\n")
				first = true
			}
			continue
		}
		l = text(l)
		l = backticks.ReplaceAllStringFunc(l, func(m string) string {
			return `\fB` + strings.ReplaceAll(m[1:len(m)-1], "-", `\-`) + `\fR`
		})
		b.WriteString(l + "\n")
		first = false
	}
}

// example writes lines as they are written, indented, as a paragraph of its
// own at the current indent.
func example(b *strings.Builder, lines []string) {
	b.WriteString(".IP\n.EX\n")
	for _, l := range lines {
		b.WriteString(code("  "+l) + "\n")
	}
	b.WriteString(".EE\n")
}
