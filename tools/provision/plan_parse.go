package provision

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/internal/input"
	"github.com/zwatch/zwatch/internal/yamlcheck"
)

// Error is one problem in a plan, named by its key path.
type Error struct {
	Path    string
	Problem string
}

func (e *Error) Error() string { return e.Path + ": " + e.Problem }

// Errors are every problem of a plan, so a person fixes them in one go.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es *Errors) add(path, format string, args ...any) {
	*es = append(*es, &Error{Path: path, Problem: fmt.Sprintf(format, args...)})
}

// LoadPlan reads and validates a plan file.
func LoadPlan(path string) (*Plan, error) {
	// One byte over the limit, so that ParsePlan names the size problem.
	data, err := input.Read(path, maxPlanSize+1)
	if err != nil {
		return nil, fmt.Errorf("plan file: %w", err)
	}
	p, err := ParsePlan(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("plan %s:\n%w", input.Name(path), err)
	}
	return p, nil
}

// maxPlanSize bounds a plan file; real ones are a few KiB.
const maxPlanSize = 1 << 20

// ParsePlan reads and validates a plan. Unknown keys, wrong types and
// impossible values are errors naming the key path.
func ParsePlan(r io.Reader) (*Plan, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPlanSize+1))
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	if len(data) > maxPlanSize {
		return nil, fmt.Errorf("plan larger than %d bytes", maxPlanSize)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("plan is empty: it needs at least pool: and vdevs:")
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("plan is not valid YAML: %w", err)
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("plan must be a YAML mapping with pool: and vdevs:")
	}
	var errs Errors
	for _, pr := range yamlcheck.Check(&root, reflect.TypeFor[Plan](), yamlcheck.Options{NoAliases: true}) {
		errs = append(errs, planError(pr))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var p Plan
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if errs := p.Validate(); len(errs) > 0 {
		return nil, errs
	}
	return &p, nil
}

// planError words a problem yamlcheck found the way the other plan errors
// read (path: problem, "(did you mean compression?)" as for properties).
func planError(p yamlcheck.Problem) *Error {
	path := p.Path
	if path == "" {
		path = "(plan)"
	}
	msg := p.Message
	switch p.Kind {
	case yamlcheck.UnknownKey:
		hint := didYouMean(p.Key, p.Keys)
		if hint == "" {
			hint = ": known keys are " + strings.Join(p.Keys, ", ")
		}
		msg = "unknown key" + hint
	case yamlcheck.WrongKind:
		msg = fmt.Sprintf("want %s, found %s", p.Want, p.Found)
	case yamlcheck.BadValue:
		msg = fmt.Sprintf("%q: %s", p.Value, p.Message)
	}
	return &Error{Path: path, Problem: msg}
}

// didYouMean names the closest known word, when there is a close one.
func didYouMean(word string, known []string) string {
	if c := yamlcheck.Closest(word, known); c != "" {
		return fmt.Sprintf(" (did you mean %s?)", c)
	}
	return ""
}
