package archdoc

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Stage is one step of the pipeline and the folders that make it up, in
// the order a fault travels through zwatch; the ownership table follows it.
type Stage struct {
	Title string
	// Folders are paths from the repository's root; a package belongs to
	// the stage of the longest folder that holds it.
	Folders []string
}

// Stages is zwatch's layout as docs/architecture.md explains it. A new
// top-level folder must be placed here, or the table's test fails: the
// layout is meant to be read as the architecture.
func Stages() []Stage {
	return []Stage{
		{"Read: the tools' output, parsed into models", []string{"model", "internal/execx", "internal/mountcheck"}},
		{"Collect: one collector per source publishes typed facts", []string{"collectors", "facts"}},
		{"Carry: the bus, its streams and its state bucket", []string{"bus"}},
		{"Judge: rules turn facts into alerts, and a person answers them", []string{"rules", "silence", "incident"}},
		{"Deliver: the outbox and one folder per channel", []string{"notifiers"}},
		{"Show: what a person looks at and looks back on", []string{"views"}},
		{"Run: the daemon and the fleet", []string{"daemon", "fleet", "cmd", "internal/neighbours"}},
		{"Act: tools that change a box, and the replay that shows what a fault sends", []string{"tools"}},
		{"Configure: the file and the catalogue of extensions it is checked against", []string{"config", "internal/catalog"}},
		{"Helpers", []string{"internal"}},
		{"Tests against reality: harnesses and stand-ins", []string{"e2e", "internal/browsertest", "internal/mantest", "internal/mosquittotest",
			"internal/testutil", "fleet/clustertest", "views/statusview/viewtest", "notifiers/internal/notifytest", "internal/archdoc"}},
	}
}

// Package is one Go package of the repository.
type Package struct {
	// Dir is its folder from the repository's root, with / separators.
	Dir string
	// Name is its package clause; Doc its doc comment as plain text.
	Name, Doc string
	// Lines counts its non-test Go lines.
	Lines int
	// Files are its non-test Go files, parsed with comments.
	Files map[string]*ast.File
}

// Packages parses every Go package under root (tests left out), skipping
// testdata and hidden folders.
func Packages(root string) ([]*Package, error) {
	byDir := map[string]*Package{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("parse %s: %w", path, err)
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		p := byDir[rel]
		if p == nil {
			p = &Package{Dir: rel, Name: f.Name.Name, Files: map[string]*ast.File{}}
			byDir[rel] = p
		}
		p.Files[name] = f
		p.Lines += strings.Count(string(src), "\n")
		if f.Doc != nil && p.Doc == "" {
			p.Doc = f.Doc.Text()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*Package, 0, len(byDir))
	for _, p := range byDir {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

// stageOf is the index in stages of the stage holding dir, or -1.
func stageOf(stages []Stage, dir string) int {
	best, bestLen := -1, -1
	for i, s := range stages {
		for _, f := range s.Folders {
			if (dir == f || strings.HasPrefix(dir, f+"/")) && len(f) > bestLen {
				best, bestLen = i, len(f)
			}
		}
	}
	return best
}

// firstParagraph is a doc comment's first paragraph on one line.
func firstParagraph(text string) string {
	para, _, _ := strings.Cut(strings.TrimSpace(text), "\n\n")
	return strings.Join(strings.Fields(para), " ")
}

// channelFolder reports whether dir is one channel's folder
// (notifiers/<service>), which the table lists together.
func channelFolder(dir string) bool {
	rest, ok := strings.CutPrefix(dir, "notifiers/")
	return ok && !strings.Contains(rest, "/") && rest != "channel" && rest != "internal" && rest != "delivery"
}

// OwnershipTable is the "who owns what" table: every package, by stage,
// with its doc comment's first paragraph. It fails for a package without a
// doc comment or outside every stage.
func OwnershipTable(pkgs []*Package, stages []Stage) (string, error) {
	rows := make([][]string, len(stages))
	var channels []string
	var problems []string
	for _, p := range pkgs {
		st := stageOf(stages, p.Dir)
		switch {
		case st < 0:
			problems = append(problems, fmt.Sprintf("%s: in no stage of archdoc.Stages(); put its folder where the pipeline needs it", p.Dir))
			continue
		case strings.TrimSpace(p.Doc) == "":
			problems = append(problems, fmt.Sprintf("%s: no package doc comment; say in one paragraph what it owns", p.Dir))
			continue
		case channelFolder(p.Dir):
			channels = append(channels, strings.TrimPrefix(p.Dir, "notifiers/"))
			continue
		}
		rows[st] = append(rows[st], fmt.Sprintf("| `%s` | %s |", p.Dir, escapeCell(firstParagraph(p.Doc))))
	}
	if len(problems) > 0 {
		return "", fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	if len(channels) > 0 {
		st := stageOf(stages, "notifiers/x")
		rows[st] = append(rows[st], fmt.Sprintf("| `notifiers/<service>` | one folder per channel (%d): %s; each with its config, validation, limits and sender, listed once in `notifiers.Services()` |",
			len(channels), strings.Join(channels, ", ")))
	}
	var b strings.Builder
	b.WriteString("| package | what it owns (its doc comment) |\n|---|---|\n")
	for i, s := range stages {
		if len(rows[i]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| **%s** | |\n", s.Title)
		for _, r := range rows[i] {
			b.WriteString(r + "\n")
		}
	}
	return b.String(), nil
}

// escapeCell keeps a table cell in its cell.
func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// KindUse is one kind of fact and where the code names it.
type KindUse struct {
	// Ident is the kind's identifier in package facts.
	Ident string
	// Users are the non-test files (collectors/<file>.go) and packages that
	// name it, sorted.
	Users []string
}

// KindUses finds, for each identifier in facts whose value is a string
// literal or a call whose first argument is one (a kind's declaration), the
// files of collectors and the other packages that name it as facts.<Ident>.
func KindUses(pkgs []*Package) map[string]*KindUse {
	uses := map[string]*KindUse{} // by kind name
	byIdent := map[string]string{}
	for _, p := range pkgs {
		if p.Dir != "facts" {
			continue
		}
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				vs, ok := n.(*ast.ValueSpec)
				if !ok {
					return true
				}
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if kind, ok := kindLiteral(vs.Values[i]); ok && name.IsExported() {
						byIdent[name.Name] = kind
						uses[kind] = &KindUse{Ident: name.Name}
					}
				}
				return true
			})
		}
	}
	for _, p := range pkgs {
		if p.Dir == "facts" {
			continue
		}
		for file, f := range p.Files {
			alias := importName(f, "github.com/zwatch/zwatch/facts")
			if alias == "" {
				continue
			}
			user := p.Dir
			if p.Dir == "collectors" {
				user = "collectors/" + file
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == alias {
					if kind, ok := byIdent[sel.Sel.Name]; ok && !slices.Contains(uses[kind].Users, user) {
						uses[kind].Users = append(uses[kind].Users, user)
					}
				}
				return true
			})
		}
	}
	for _, u := range uses {
		sort.Strings(u.Users)
	}
	return uses
}

// kindLiteral is the string a kind's declaration names.
func kindLiteral(e ast.Expr) (string, bool) {
	if call, ok := e.(*ast.CallExpr); ok && len(call.Args) > 0 {
		e = call.Args[0]
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil && s != ""
}

// importName is the name f uses for the package at path, "" if none.
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == path {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return path[strings.LastIndex(path, "/")+1:]
		}
	}
	return ""
}

// SubjectsTable lists every kind of fact (kinds, in facts.Kinds() order)
// with its subject, schema and the code that names it (uses, by kind).
func SubjectsTable(kinds []KindRow, uses map[string]*KindUse) string {
	var b strings.Builder
	b.WriteString("| subject | schema | payload | named in (collectors' files, other packages) |\n|---|---|---|---|\n")
	for _, k := range kinds {
		subject := "zwatch.v1.<host>." + k.Name
		if k.PerTarget {
			subject += ".<target>"
		}
		var users []string
		if u := uses[k.Name]; u != nil {
			for _, s := range u.Users {
				users = append(users, "`"+s+"`")
			}
		}
		fmt.Fprintf(&b, "| `%s` | `zwatch.v1.%s` | `%s` | %s |\n", subject, k.Name, k.Payload, strings.Join(users, ", "))
	}
	return b.String()
}

// KindRow is one kind of fact as the subjects table shows it.
type KindRow struct {
	Name      string
	PerTarget bool
	// Payload is the Go type its data decodes into.
	Payload string
}
