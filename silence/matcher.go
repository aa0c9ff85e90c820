// Package silence is zwatch's silences, in the manner of Alertmanager's: a
// set of label matchers, a time span, who made it and why. While a silence
// is active, the alerts it matches are not sent (up to the severity it
// covers); it expires by itself at its end. Silences live in the bus's
// state bucket (store.go), so every server of a fleet and every restart
// sees the same ones. The package also holds what the rule engine does
// with them: which silence mutes an alert and the notice that one expired
// (stage.go, asked by the alert pipeline in rules/pipeline), and the
// runner's Feed (feed.go), which reads them, queues expiry notices and
// removes stale ones.
package silence

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MatchType is how a matcher compares a label's value, as in Alertmanager
// and PromQL selectors.
type MatchType string

const (
	MatchEqual     MatchType = "="
	MatchNotEqual  MatchType = "!="
	MatchRegexp    MatchType = "=~"
	MatchNotRegexp MatchType = "!~"
)

// Bounds on what one silence may hold.
const (
	maxMatchers    = 32
	maxValueLength = 1024
)

// Grammar is said in every error about a matcher.
const Grammar = `a matcher is NAME=VALUE, NAME!=VALUE, NAME=~REGEX or NAME!~REGEX ` +
	`(VALUE may be "quoted"; a REGEX is RE2 and must match the whole value), ` +
	`e.g. alertname=VdevState host=nas1 pool=~"tank|backup"`

// labelName is a Prometheus label name, as Alertmanager's classic parser
// takes it; '=~' comes before '=' so that '~' is not read as the value.
var matcherRE = regexp.MustCompile(`^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(=~|=|!=|!~)\s*((?s).*?)\s*$`)

// Matcher selects alerts by one label.
type Matcher struct {
	Name  string    `json:"name"`
	Type  MatchType `json:"type"`
	Value string    `json:"value"`

	re *regexp.Regexp
}

// NewMatcher checks a matcher and compiles its regular expression,
// anchored at both ends as in Alertmanager.
func NewMatcher(t MatchType, name, value string) (Matcher, error) {
	m := Matcher{Name: name, Type: t, Value: value}
	if err := m.compile(); err != nil {
		return Matcher{}, err
	}
	return m, nil
}

func (m *Matcher) compile() error {
	switch {
	case !labelNameOK(m.Name):
		return fmt.Errorf("matcher %s: %q is not a label name (letters, digits, _ and :, not starting with a digit); %s", m, m.Name, Grammar)
	case len(m.Value) > maxValueLength:
		return fmt.Errorf("matcher %.40s…: value longer than %d bytes", m, maxValueLength)
	case !utf8.ValidString(m.Value):
		return fmt.Errorf("matcher %s: value is not valid UTF-8", m)
	}
	switch m.Type {
	case MatchEqual, MatchNotEqual:
		m.re = nil
	case MatchRegexp, MatchNotRegexp:
		if _, err := regexp.Compile(m.Value); err != nil {
			return fmt.Errorf("matcher %s: %q is not an RE2 regular expression: %w; %s", m, m.Value, err, Grammar)
		}
		m.re = regexp.MustCompile("^(?:" + m.Value + ")$")
	default:
		return fmt.Errorf("matcher %s: unknown operator %q; %s", m, string(m.Type), Grammar)
	}
	return nil
}

func labelNameOK(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r == ':' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}

// Matches reports whether v, a label's value ("" when the alert lacks
// the label, as in Alertmanager), satisfies the matcher.
func (m *Matcher) Matches(v string) bool {
	switch m.Type {
	case MatchEqual:
		return v == m.Value
	case MatchNotEqual:
		return v != m.Value
	case MatchRegexp:
		return m.re != nil && m.re.MatchString(v)
	case MatchNotRegexp:
		return m.re != nil && !m.re.MatchString(v)
	}
	return false
}

// String writes the matcher as it is typed: name, operator, quoted value.
func (m Matcher) String() string {
	return m.Name + string(m.Type) + strconv.Quote(m.Value)
}

// ParseMatcher reads one matcher, with Alertmanager's classic syntax: a
// label name, one of = != =~ !~, and a value, optionally in double quotes
// (inside them \" is a quote, \\ a backslash, \n a line feed).
func ParseMatcher(s string) (Matcher, error) {
	ms := matcherRE.FindStringSubmatch(s)
	if ms == nil {
		return Matcher{}, fmt.Errorf("matcher %q: %s", s, Grammar)
	}
	value, err := unquote(ms[3])
	if err != nil {
		return Matcher{}, fmt.Errorf("matcher %q: %w; %s", s, err, Grammar)
	}
	return NewMatcher(MatchType(ms[2]), ms[1], value)
}

// unquote takes the quotes off a value and reads its escapes; an unquoted
// value is taken as it is, except that it may not hold a quote.
func unquote(raw string) (string, error) {
	if !utf8.ValidString(raw) {
		return "", errors.New("the value is not valid UTF-8")
	}
	quoted := strings.HasPrefix(raw, `"`)
	if !quoted {
		if strings.HasPrefix(raw, "=") || strings.HasPrefix(raw, "~") {
			return "", errors.New("the value starts with = or ~, which looks like a mistyped operator: quote the value if it really does")
		}
		if strings.Contains(raw, `"`) {
			return "", errors.New("the value holds a double quote: put the whole value in quotes and write \\\" for it")
		}
		return raw, nil
	}
	body := raw[1:]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body):
			i++
			switch body[i] {
			case 'n':
				b.WriteByte('\n')
			case '"', '\\':
				b.WriteByte(body[i])
			default:
				// A lone backslash is a backslash, as in Alertmanager (a
				// regular expression's \d stays \d).
				b.WriteByte('\\')
				b.WriteByte(body[i])
			}
		case c == '"':
			if i != len(body)-1 {
				return "", errors.New("text after the closing quote")
			}
			return b.String(), nil
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("the opening quote is not closed")
}

// Matchers are all the matchers of a silence: every one must hold.
type Matchers []Matcher

// ParseMatchers reads the matchers of a command line: each argument holds
// one or more, separated by commas outside quotes, optionally in braces
// ({pool="tank",vdev=~"sd.*"}). As with amtool, a first argument with no
// operator is the alert name: `VdevState pool=tank`.
func ParseMatchers(args []string) (Matchers, error) {
	var out Matchers
	for i, arg := range args {
		if i == 0 && !strings.ContainsAny(arg, "=!~{}") && strings.TrimSpace(arg) != "" {
			m, err := NewMatcher(MatchEqual, "alertname", strings.TrimSpace(arg))
			if err != nil {
				return nil, err
			}
			out = append(out, m)
			continue
		}
		for _, tok := range splitMatchers(arg) {
			m, err := ParseMatcher(tok)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
	}
	return out, out.Validate()
}

// splitMatchers cuts "{a=b, c=\"x,y\"}" at the commas outside quotes.
func splitMatchers(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	var toks []string
	var cur strings.Builder
	quoted, escaped := false, false
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
		case r == '\\':
			escaped = true
		case r == '"':
			quoted = !quoted
		case r == ',' && !quoted:
			toks = append(toks, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	toks = append(toks, cur.String())
	out := toks[:0]
	for _, t := range toks {
		if strings.TrimSpace(t) != "" {
			out = append(out, t)
		}
	}
	return out
}

// Validate checks what a silence needs of its matchers: some, not too
// many, and at least one that does not match the empty value, so that a
// silence cannot silence every alert by accident (Alertmanager's rule).
func (ms Matchers) Validate() error {
	if len(ms) == 0 {
		return fmt.Errorf("no matchers: say which alerts to silence; %s", Grammar)
	}
	if len(ms) > maxMatchers {
		return fmt.Errorf("%d matchers: at most %d", len(ms), maxMatchers)
	}
	for i := range ms {
		if err := ms[i].compile(); err != nil {
			return err
		}
	}
	for i := range ms {
		if !ms[i].Matches("") {
			return nil
		}
	}
	return fmt.Errorf("matchers %s match an alert without any labels, so they would silence everything: "+
		"add one that names something, such as alertname=VdevState or host=nas1", ms)
}

// Matches reports whether every matcher holds for the labels get returns.
func (ms Matchers) Matches(get func(name string) string) bool {
	for i := range ms {
		if !ms[i].Matches(get(ms[i].Name)) {
			return false
		}
	}
	return true
}

// String is the matchers as one brace-less list: alertname="VdevState", pool="tank".
func (ms Matchers) String() string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return strings.Join(parts, ", ")
}
