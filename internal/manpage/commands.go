package manpage

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// Extra is a section added to a command's page: its heading and roff body.
type Extra struct {
	Heading string
	Roff    string
}

// CommandPages renders a section 1 page for root and for every command
// under it that a person can run (hidden commands and help are left out),
// keyed by file name (zwatch.1, zwatch-notify-test.1). cobra's doc package
// reads Short, Long and flag usages as Markdown, while zwatch writes them
// as plain text for the terminal: they are escaped first, so the page says
// what --help says. extras adds sections to the page of the command with
// that path ("zwatch"); every page's SEE ALSO also names seeAlso.
//
// It changes the texts of the commands in the tree: give it a tree built
// for this purpose.
func CommandPages(root *cobra.Command, h Header, extras map[string][]Extra, seeAlso []string) (map[string][]byte, error) {
	root.InitDefaultCompletionCmd()
	root.DisableAutoGenTag = true
	prepare(root, map[*pflag.Flag]bool{})
	pages := map[string][]byte{}
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if !c.IsAvailableCommand() && c != root || c.IsAdditionalHelpTopicCommand() {
			return nil
		}
		date := h.Date
		var buf bytes.Buffer
		hdr := &doc.GenManHeader{Section: "1", Date: &date, Source: h.Source, Manual: h.Manual}
		if err := doc.GenMan(c, hdr, &buf); err != nil {
			return fmt.Errorf("man page of %s: %w", c.CommandPath(), err)
		}
		page := addSections(buf.String(), extras[c.CommandPath()], seeAlso)
		pages[strings.ReplaceAll(c.CommandPath(), " ", "-")+".1"] = []byte(page)
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	return pages, walk(root)
}

// prepare makes the plain texts of c and the commands under it Markdown
// that renders as they read. A persistent flag is shared by the commands
// under the one that defines it: done records the flags escaped once.
func prepare(c *cobra.Command, done map[*pflag.Flag]bool) {
	if name, args, ok := strings.Cut(c.Use, " "); ok {
		c.Use = name + " " + markdownLine(args)
	}
	c.Short = markdownLine(c.Short)
	c.Long = markdown(c.Long)
	escape := func(f *pflag.Flag) {
		if !done[f] {
			f.Usage = markdownLine(f.Usage)
			done[f] = true
		}
	}
	c.LocalFlags().VisitAll(escape)
	c.InheritedFlags().VisitAll(escape)
	for _, sub := range c.Commands() {
		prepare(sub, done)
	}
}

// markdownSpecial are the characters Markdown gives a meaning; a
// backslash before one makes it literal.
var markdownSpecial = regexp.MustCompile("[\\\\`*_{}\\[\\]()#+\\-.!:|&<>~]")

func markdownLine(s string) string {
	return markdownSpecial.ReplaceAllString(s, `\$0`)
}

// markdown turns plain text into Markdown: paragraphs stay paragraphs with
// every special character escaped, and lines indented by two or more
// spaces (examples, tables of values) become code blocks, shown as written.
func markdown(s string) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	inCode := false
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		indented := strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "\t")
		// A blank line between two indented lines stays inside the block.
		if strings.TrimSpace(l) == "" && inCode && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  ") {
			indented = true
		}
		switch {
		case indented && !inCode:
			b.WriteString("\n```\n")
			inCode = true
		case !indented && inCode:
			b.WriteString("```\n")
			inCode = false
		}
		if inCode {
			b.WriteString(strings.TrimPrefix(l, "  ") + "\n")
			continue
		}
		b.WriteString(markdownSpecial.ReplaceAllString(l, `\$0`) + "\n")
	}
	if inCode {
		b.WriteString("```\n")
	}
	return b.String()
}

// addSections puts extras before SEE ALSO (or at the end) and names seeAlso
// there too.
func addSections(page string, extras []Extra, seeAlso []string) string {
	var add strings.Builder
	for _, e := range extras {
		add.WriteString(".SH " + e.Heading + "\n" + e.Roff)
		if !strings.HasSuffix(e.Roff, "\n") {
			add.WriteString("\n")
		}
	}
	var refs []string
	for _, s := range seeAlso {
		refs = append(refs, `\fB`+code(s)+`\fP`)
	}
	const seeAlsoHeading = ".SH SEE ALSO\n"
	before, after, found := strings.Cut(page, seeAlsoHeading)
	if !found {
		page = strings.TrimRight(page, "\n") + "\n" + add.String()
		if len(refs) > 0 {
			page += seeAlsoHeading + strings.Join(refs, ", ") + "\n"
		}
		return page
	}
	line, rest, _ := strings.Cut(after, "\n")
	if len(refs) > 0 {
		line += ", " + strings.Join(refs, ", ")
	}
	return strings.TrimRight(before, "\n") + "\n" + add.String() + seeAlsoHeading + line + "\n" + rest
}
