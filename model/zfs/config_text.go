package zfs

import (
	"strings"
)

// knownStates are the words zpool prints in the STATE column.
var knownStates = map[string]bool{
	StateOnline: true, StateDegraded: true, StateFaulted: true,
	StateOffline: true, StateRemoved: true, StateUnavail: true,
	StateSuspended: true, StateAvail: true, StateInUse: true,
	"SPLIT": true, "UNKNOWN": true,
}

// classHeaders are the allocation-class lines of the config tree.
var classHeaders = map[string]bool{
	"logs": true, "cache": true, "spares": true, "special": true, "dedup": true,
}

// configLayout describes the header line "NAME STATE READ WRITE CKSUM [SLOW]".
type configLayout struct {
	counters int // READ WRITE CKSUM [SLOW] columns present
	hasSlow  bool
}

// treeLevel is an open node of the tree being built: a vdev, or a class
// header (v == nil) whose members are the next deeper lines.
type treeLevel struct {
	col int
	v   *Vdev
}

// configParser builds the vdev tree of one pool from the config section.
// Nesting follows indentation like an outline: a line indented deeper than
// the previous open node is its child. zpool indents 2 columns per level,
// but pasted and documented outputs often do not, so only order matters.
type configParser struct {
	p      *Pool
	layout configLayout
	class  string // "" for data vdevs, else the current class header
	stack  []treeLevel
	root   *Vdev
}

// parseConfig reads the config section into p; lines it cannot place are
// kept in p.Notes.
func parseConfig(p *Pool, lines []string) {
	cp := &configParser{p: p}
	start := cp.findHeader(lines)
	for _, l := range lines[start:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		cp.line(l)
	}
	if p.State == "" && cp.root != nil {
		p.State = cp.root.State
	}
}

// findHeader reads the NAME/STATE header and returns the index of the first
// tree line (0 when there is no header).
func (cp *configParser) findHeader(lines []string) int {
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "NAME" && f[1] == "STATE" {
			for _, h := range f[2:] {
				if h != "READ" && h != "WRITE" && h != "CKSUM" && h != "SLOW" {
					break
				}
				cp.layout.counters++
				if h == "SLOW" {
					cp.layout.hasSlow = true
				}
			}
			return i + 1
		}
	}
	cp.layout.counters = 3
	return 0
}

// line places one tree line.
func (cp *configParser) line(l string) {
	col, idx := expandIndent(l)
	content := l[idx:]
	v, ok := parseVdevLine(content, cp.layout)
	if !ok {
		if name := strings.TrimSpace(content); cp.root != nil && classHeaders[name] {
			cp.class = name
			cp.stack = append(cp.stack[:0], treeLevel{col: col})
			return
		}
		cp.p.Notes = append(cp.p.Notes, "config: "+strings.TrimSpace(l))
		return
	}
	for len(cp.stack) > 0 && cp.stack[len(cp.stack)-1].col >= col {
		cp.stack = cp.stack[:len(cp.stack)-1]
	}
	if len(cp.stack) == 0 {
		cp.setRoot(v, col)
		return
	}
	parent := cp.stack[len(cp.stack)-1].v
	classify(v)
	switch {
	case parent == nil || parent == cp.root:
		cp.addTop(v)
	default:
		parent.Children = append(parent.Children, v)
		if parent.IsLeaf() {
			// A child proves the parent is interior, whatever its name said.
			parent.Type = VdevUnknown
			parent.Path = ""
		}
	}
	cp.stack = append(cp.stack, treeLevel{col: col, v: v})
}

// setRoot takes the first outermost line as the pool's root vdev.
func (cp *configParser) setRoot(v *Vdev, col int) {
	if cp.root != nil {
		cp.p.Notes = append(cp.p.Notes, "config: unexpected second root "+v.Name)
		return
	}
	v.Type = VdevRoot
	cp.root = v
	cp.p.Root = v
	cp.stack = append(cp.stack[:0], treeLevel{col: col, v: v})
}

// addTop appends a top-level vdev to its class list.
func (cp *configParser) addTop(v *Vdev) {
	cp.p.addClassVdev(cp.class, v)
}

// classify sets the type of a non-root vdev from its name.
func classify(v *Vdev) {
	if !interiorType(v) {
		classifyLeaf(v)
	}
}

// parseVdevLine reads "name STATE [READ WRITE CKSUM [SLOW]] [notes]".
// The name is everything before the state word, so names with spaces survive.
func parseVdevLine(content string, lay configLayout) (*Vdev, bool) {
	toks := tokenize(content)
	if len(toks) == 0 {
		return nil, false
	}
	si := -1
	for i := 1; i < len(toks); i++ {
		if knownStates[toks[i].text] {
			si = i
			break
		}
	}
	if si < 0 {
		return nil, false
	}
	v := &Vdev{
		Name:     strings.TrimSpace(content[:toks[si].start]),
		State:    toks[si].text,
		Notes:    []string{},
		Children: []*Vdev{},
	}
	end := toks[si].end
	for c := 0; c < lay.counters && si+1+c < len(toks); c++ {
		t := toks[si+1+c]
		if !setCounter(v, c, t.text, lay.hasSlow) {
			break
		}
		end = t.end
	}
	addNotes(v, content[end:])
	return v, true
}

// setCounter stores counter column c (READ, WRITE, CKSUM, SLOW) and reports
// false when the token is not a counter (then notes begin there).
func setCounter(v *Vdev, c int, tok string, hasSlow bool) bool {
	if tok == "-" && c == 3 && hasSlow {
		return true // interior vdevs print "-" for slow I/Os
	}
	n, exact, err := parseNiceNum(tok)
	if err != nil || strings.HasSuffix(tok, "B") {
		return false
	}
	if !exact {
		v.ErrorsApproximate = true
	}
	switch c {
	case 0:
		v.ReadErrors = n
	case 1:
		v.WriteErrors = n
	case 2:
		v.ChecksumErrors = n
	case 3:
		v.SlowIOs = &n
	}
	return true
}

// addNotes splits what follows the counters at runs of two or more spaces,
// as zpool separates its notes with two spaces. "was PATH" sets Was.
func addNotes(v *Vdev, rest string) {
	for _, n := range splitNotes(rest) {
		if p, ok := strings.CutPrefix(n, "was "); ok {
			v.Was = strings.TrimSpace(p)
			continue
		}
		v.Notes = append(v.Notes, n)
	}
}

func splitNotes(s string) []string {
	var out []string
	s = strings.ReplaceAll(s, "\t", "  ")
	for _, part := range strings.Split(s, "  ") {
		if t := strings.TrimSpace(part); t != "" {
			out = append(out, t)
		}
	}
	return out
}

type token struct {
	text       string
	start, end int
}

// tokenize splits on blanks and keeps byte offsets.
func tokenize(s string) []token {
	var out []token
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		out = append(out, token{text: s[i:j], start: i, end: j})
		i = j
	}
	return out
}
