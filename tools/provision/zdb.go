package provision

import "regexp"

// Fields of a `zdb -l` label.
var (
	reZdbName  = regexp.MustCompile(`(?m)^[ \t]*name: '([^'\n]*)'`)
	reZdbState = regexp.MustCompile(`(?m)^[ \t]*state: (\d+)`)
)

// zdbState reads a label's pool state with zdb -l: " (exported)" etc.
func (s *inspector) zdbState(dev string) string {
	out, _, err := runOut(s.ctx, s.h, "zdb", "-l", dev)
	if err != nil && len(out) == 0 {
		return ""
	}
	name, state := ParseZdbLabel(out)
	if name == "" {
		return ""
	}
	return " (" + state + ")"
}

// ParseZdbLabel takes the pool name and state from `zdb -l` output: state 0
// active (imported on this or another machine), 1 exported, 2 destroyed.
func ParseZdbLabel(b []byte) (name, state string) {
	if m := reZdbName.FindSubmatch(b); m != nil {
		name = string(m[1])
	}
	if m := reZdbState.FindSubmatch(b); m != nil {
		switch string(m[1]) {
		case "0":
			state = "active: in use by this or another machine"
		case "1":
			state = "exported"
		case "2":
			state = "destroyed"
		case "3":
			state = "spare"
		case "4":
			state = "l2cache"
		default:
			state = "state " + string(m[1])
		}
	}
	return name, state
}
