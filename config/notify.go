package config

import (
	"fmt"
	"iter"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/internal/yamlcheck"
)

// NotifyConfig lists the channels that deliver alerts to people.
type NotifyConfig struct {
	// Console logs every notification to zwatch's own log; on by default so
	// that a fresh install shows what it would send.
	Console bool `yaml:"console"`
	// RetryFor is how long a channel keeps retrying one notification before
	// it is dead-lettered and reported through the other channels.
	RetryFor Duration `yaml:"retry_for"`
	// RetryInitial is how long a failing channel waits before its probe
	// asks the service again; it doubles up to RetryMax.
	RetryInitial Duration `yaml:"retry_initial"`
	RetryMax     Duration `yaml:"retry_max"`
	// SendTimeout bounds one delivery attempt to one service.
	SendTimeout Duration        `yaml:"send_timeout"`
	Channels    []ChannelConfig `yaml:"channels"`
	// Escalation sends a critical incident nobody acknowledged to further
	// channels, step by step (escalation.go).
	Escalation []EscalationStep `yaml:"escalation"`
}

// ChannelType is one kind of channel (email, ntfy, ...), as the catalogue
// lists it. Config knows the keys every channel has; the type owns the rest
// of the entry: its keys, their decoding and what values make sense.
type ChannelType interface {
	// Name is the value of the channel's type key.
	Name() string
	// Keys are the type's own keys, in the order its documentation lists them.
	Keys() []string
	// Decode decodes n, a mapping that holds only the type's own keys, into
	// the type's settings. Every value of the wrong kind or type goes to errs
	// under path (notify.channels[2]); the result is nil when n does not decode.
	Decode(n *yaml.Node, path string, errs *Errors) ChannelSettings
}

// ChannelSettings are one channel's own keys, decoded by its ChannelType.
// check-config prints them as YAML, so secrets must be of type Secret.
type ChannelSettings interface {
	// Validate reports missing and impossible values under path.
	Validate(path string, errs *Errors)
	// HasLiteralSecret reports a secret written in the file itself, for the
	// warning about a config file other users can read.
	HasLiteralSecret() bool
}

// ChannelConfig is one destination: the keys every channel has, and the
// settings its type decoded from the rest of the entry. Keys that belong to
// other types are refused, so a pasted block for the wrong service is noticed.
// A channel may also be written as one URL (url: ntfy://ntfy.sh/mytopic)
// instead of a type and its keys; the type its scheme names decodes it into
// the same settings.
type ChannelConfig struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"`
	// MinSeverity drops alerts below it (info, warning, critical); default warning.
	MinSeverity string `yaml:"min_severity"`
	// SendResolved sends a notice when an alert ends; default true.
	SendResolved *bool       `yaml:"send_resolved"`
	Route        RouteConfig `yaml:"route"`
	// Quiet holds warnings and info back during the night (QuietHours).
	Quiet *QuietHours `yaml:"quiet"`
	// Settings are the type's own keys (smtp, token, url, ...), decoded when
	// the config is validated against the catalogue.
	Settings ChannelSettings `yaml:"-"`

	// entry is the channel as written, kept until the catalogue says which
	// type decodes the rest of it.
	entry *yaml.Node
	// scheme and maskedURL are those of a channel written as a URL: the
	// scheme names it when the entry does not, and check-config shows the
	// URL with its credentials masked.
	scheme, maskedURL string
}

// channelKeys are the keys every channel has, as ChannelConfig holds them.
type channelKeys struct {
	Name         string      `yaml:"name"`
	Type         string      `yaml:"type"`
	MinSeverity  string      `yaml:"min_severity"`
	SendResolved *bool       `yaml:"send_resolved"`
	Route        RouteConfig `yaml:"route"`
	Quiet        *QuietHours `yaml:"quiet,omitempty"`
}

// RouteConfig narrows which alerts a channel receives.
type RouteConfig struct {
	// Pools keeps only alerts about these pools (alerts about no pool pass).
	Pools []string `yaml:"pools"`
	// Alerts keeps only alerts whose name matches one of these globs.
	Alerts []string `yaml:"alerts"`
}

// DefaultNotify is the notification config used when the file sets none.
func DefaultNotify() NotifyConfig {
	return NotifyConfig{
		Console:      true,
		RetryFor:     Duration(7 * 24 * time.Hour),
		RetryInitial: Duration(10 * time.Second),
		RetryMax:     Duration(time.Hour),
		SendTimeout:  Duration(30 * time.Second),
	}
}

// Resolved reports whether the channel sends resolved notices.
func (c ChannelConfig) Resolved() bool { return c.SendResolved == nil || *c.SendResolved }

// Severity is the channel's minimum severity with the default applied.
func (c ChannelConfig) Severity() string {
	if c.MinSeverity == "" {
		return "warning"
	}
	return strings.ToLower(c.MinSeverity)
}

// UnmarshalYAML takes the common keys and keeps the entry for its type.
// It never fails: checkChannels, which knows the catalogue, reports every
// problem with its key path before the file is decoded, and yamlcheck, which
// runs before that, decodes every entry through here.
func (c *ChannelConfig) UnmarshalYAML(n *yaml.Node) error {
	var k channelKeys
	if n.Kind == yaml.MappingNode {
		_ = n.Decode(&k)
	}
	*c = ChannelConfig{Name: k.Name, Type: k.Type, MinSeverity: k.MinSeverity, SendResolved: k.SendResolved, Route: k.Route, Quiet: k.Quiet, entry: n}
	return nil
}

// MarshalYAML writes the common keys followed by the type's own, as one
// mapping the way the file has them; Secret values print masked.
func (c ChannelConfig) MarshalYAML() (any, error) {
	var out yaml.Node
	if err := out.Encode(channelKeys{Name: c.Name, Type: c.Type, MinSeverity: c.MinSeverity, SendResolved: c.SendResolved, Route: c.Route, Quiet: c.Quiet}); err != nil {
		return nil, fmt.Errorf("channel %s: %w", c.Name, err)
	}
	if c.maskedURL != "" {
		for i := 0; i+1 < len(out.Content); i += 2 {
			if out.Content[i].Value == "type" {
				out.Content[i+1].LineComment = "from url: " + c.maskedURL
			}
		}
	}
	if c.Settings != nil {
		var own yaml.Node
		if err := own.Encode(c.Settings); err != nil {
			return nil, fmt.Errorf("channel %s settings: %w", c.Name, err)
		}
		if own.Kind == yaml.MappingNode {
			out.Content = append(out.Content, own.Content...)
		}
	}
	return &out, nil
}

// ChannelToken turns a channel name into the token used for its durable
// consumer and dead-letter subject: [A-Za-z0-9_-] only, never empty.
func ChannelToken(name string) string { return bus.Token(name) }

// Add records a problem with the key at path; value, when not nil, is
// quoted after the path. Channel types report through it.
func (es *Errors) Add(path string, value any, format string, args ...any) {
	es.add(path, value, format, args...)
}

// DecodeChannelSettings checks n against the struct dst points to, the way
// the rest of the file is checked (kinds, types, secrets that cannot be
// resolved), and decodes it into dst. It reports false, with the problems in
// errs under path, when n does not fit.
func DecodeChannelSettings(n *yaml.Node, path string, dst any, errs *Errors) bool {
	problems := yamlcheck.Check(n, reflect.TypeOf(dst).Elem(), yamlcheck.Options{})
	for _, p := range problems {
		errs.addProblem(under(path, p))
	}
	if len(problems) > 0 {
		return false
	}
	if err := n.Decode(dst); err != nil {
		errs.add(path, nil, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		return false
	}
	return true
}

// commonChannelKeys are the keys of channelKeys, which every channel has.
var commonChannelKeys = []string{"name", "type", "min_severity", "send_resolved", "route", "quiet"}

// checkChannels does for notify.channels what yamlcheck does for the rest
// of the file, at the same stage and in document order among its problems:
// an entry that is not a mapping, a repeated key, a key no channel type has
// (with a did-you-mean over all of them), and a value that does not fit its
// key. Each key is checked against the type that owns it: the entry's own
// type, or for another type's key the first that has it, so that its value
// (an unset ${ENV}, a wrong kind) reads as it would there; validate then
// says the key does not belong.
func checkChannels(root *yaml.Node, cat Catalog, errs *Errors) {
	seq := lookup(root, "notify", "channels")
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return // absent, null, or a wrong kind yamlcheck reported
	}
	all := cat.allChannelKeys()
	var found Errors
	for i, e := range seq.Content {
		p := fmt.Sprintf("notify.channels[%d]", i)
		e = resolve(e)
		if e == nil || e.Kind == yaml.ScalarNode && e.Tag == "!!null" {
			continue // an empty entry: validate asks for its name
		}
		if e.Kind != yaml.MappingNode {
			for _, pr := range yamlcheck.Check(e, reflect.TypeFor[map[string]any](), yamlcheck.Options{}) {
				pr.Keys = all
				pr.Message += "; valid keys here: " + strings.Join(all, ", ")
				found.addProblem(under(p, pr))
			}
			continue
		}
		typ, _ := cat.ChannelType(scalarAt(e, "type"))
		asURL := urlForm(e) != nil
		first := map[string]int{}
		for j := 0; j+1 < len(e.Content); j += 2 {
			k, v := e.Content[j], e.Content[j+1]
			if line, dup := first[k.Value]; dup {
				found.addProblem(yamlcheck.Problem{Kind: yamlcheck.DuplicateKey, Path: p + "." + k.Value, Line: k.Line, Key: k.Value,
					Message: fmt.Sprintf("given twice (lines %d and %d): keep one", line, k.Line)})
				continue
			}
			first[k.Value] = k.Line
			one := mappingLike(e)
			one.Content = []*yaml.Node{k, v}
			if asURL && k.Value == "url" {
				for _, pr := range yamlcheck.Check(one, reflect.TypeFor[urlKey](), yamlcheck.Options{}) {
					found.addProblem(under(p, pr))
				}
				continue
			}
			if slices.Contains(commonChannelKeys, k.Value) {
				for _, pr := range yamlcheck.Check(one, reflect.TypeFor[channelKeys](), yamlcheck.Options{}) {
					found.addProblem(under(p, pr))
				}
				continue
			}
			owner := typ
			if owner == nil || !slices.Contains(owner.Keys(), k.Value) {
				owner = cat.channelTypeWithKey(k.Value)
			}
			if owner == nil {
				found.addProblem(yamlcheck.UnknownKeyAt(p+"."+k.Value, k, all))
				continue
			}
			from := len(found)
			owner.Decode(one, p, &found)
			found.placeAt(from, k.Line)
		}
	}
	*errs = mergeByLine(*errs, found)
}

// mergeByLine merges two lists of problems, each in document order.
func mergeByLine(a, b Errors) Errors {
	out := make(Errors, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if b[0].line < a[0].line {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// mappingLike is an empty mapping at e's place in the file.
func mappingLike(e *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: e.Line, Column: e.Column}
}

func (n *NotifyConfig) validate(p string, errs *Errors, cat Catalog) {
	if n.RetryFor.D() < time.Second {
		errs.add(p+".retry_for", FormatDuration(n.RetryFor.D()), "too short: must be at least 1s (default 7d)")
	}
	positive(errs, p+".retry_initial", n.RetryInitial, 10*time.Millisecond)
	if n.RetryMax.D() < n.RetryInitial.D() {
		errs.add(p+".retry_max", FormatDuration(n.RetryMax.D()), "must be at least retry_initial (%s)", FormatDuration(n.RetryInitial.D()))
	}
	positive(errs, p+".send_timeout", n.SendTimeout, 100*time.Millisecond)
	for i := range n.Channels {
		n.Channels[i].validate(fmt.Sprintf("%s.channels[%d]", p, i), errs, cat)
	}
	n.nameURLChannels()
	n.validateEscalation(p, errs)
	seen := map[string]string{}
	for i := range n.Channels {
		c := &n.Channels[i]
		cp := fmt.Sprintf("%s.channels[%d]", p, i)
		if strings.TrimSpace(c.Name) == "" {
			continue
		}
		tok := ChannelToken(c.Name)
		if tok == "console" {
			errs.add(cp+".name", c.Name, "reserved for notify.console: pick another name")
		}
		if prev, ok := seen[tok]; ok {
			errs.add(cp+".name", c.Name, "clashes with %s: channel names must differ in letters, digits, - or _", prev)
		}
		seen[tok] = cp + ".name"
	}
}

// validate checks the common keys, then has the channel's type decode and
// validate the rest of the entry into Settings; a channel written as a URL
// is decoded by the type its scheme names.
func (c *ChannelConfig) validate(p string, errs *Errors, cat Catalog) {
	if e := resolve(c.entry); urlForm(e) != nil {
		c.validateCommon(p, errs)
		c.decodeURL(p, e, urlForm(e), errs, cat)
		return
	}
	if strings.TrimSpace(c.Name) == "" {
		errs.add(p+".name", nil, "empty: name the channel, e.g. ops-mail (it names its delivery queue)")
	}
	ct, known := cat.ChannelType(c.Type)
	if !known {
		if c.Type == "" && len(cat.channelSchemes()) > 0 {
			errs.add(p+".type", nil, "empty: set one of %s, or write the channel as one url: such as ntfy://ntfy.sh/mytopic", strings.Join(cat.ChannelTypeNames(), ", "))
			return
		}
		errs.add(p+".type", c.Type, "must be one of %s", strings.Join(cat.ChannelTypeNames(), ", "))
		return
	}
	c.validateCommon(p, errs)
	if c.entry != nil {
		own := c.rejectForeignKeys(p, errs, ct)
		c.Settings = ct.Decode(own, p, errs)
	}
	if c.Settings != nil {
		c.Settings.Validate(p, errs)
	}
}

// validateCommon checks the keys every channel has besides its name.
func (c *ChannelConfig) validateCommon(p string, errs *Errors) {
	if c.MinSeverity != "" {
		oneOf(errs, p+".min_severity", strings.ToLower(c.MinSeverity), "info", "warning", "critical")
	}
	for i, g := range c.Route.Alerts {
		if _, err := path.Match(g, ""); err != nil || strings.TrimSpace(g) == "" {
			errs.add(fmt.Sprintf("%s.route.alerts[%d]", p, i), g, "not a valid alert name or glob (e.g. PoolDegraded, Smart*)")
		}
	}
	for i, pool := range c.Route.Pools {
		if strings.TrimSpace(pool) == "" {
			errs.add(fmt.Sprintf("%s.route.pools[%d]", p, i), nil, "empty: name a pool")
		}
	}
	if c.Quiet != nil {
		c.Quiet.validate(p+".quiet", errs)
	}
}

// rejectForeignKeys names keys set on the entry that its type does not use,
// and returns the mapping of the keys it does use.
func (c *ChannelConfig) rejectForeignKeys(p string, errs *Errors, ct ChannelType) *yaml.Node {
	e := resolve(c.entry)
	if e == nil || e.Kind != yaml.MappingNode {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	own := mappingLike(e)
	keys := ct.Keys()
	for k, v := range firstKeys(e) {
		switch {
		case slices.Contains(commonChannelKeys, k.Value):
		case slices.Contains(keys, k.Value):
			own.Content = append(own.Content, k, v)
		case isSet(v):
			errs.add(p+"."+k.Value, nil, "not used by type %s (its keys: %s)", c.Type, strings.Join(keys, ", "))
		}
	}
	return own
}

func (n *NotifyConfig) hasLiteralSecret() bool {
	for _, c := range n.Channels {
		if c.Settings != nil && c.Settings.HasLiteralSecret() {
			return true
		}
	}
	return false
}

// ChannelType is the catalogue's type called name.
func (c Catalog) ChannelType(name string) (ChannelType, bool) {
	for _, t := range c.Channels {
		if t.Name() == name {
			return t, true
		}
	}
	return nil, false
}

// channelTypeWithKey is the first type in the catalogue that has key.
func (c Catalog) channelTypeWithKey(key string) ChannelType {
	for _, t := range c.Channels {
		if slices.Contains(t.Keys(), key) {
			return t
		}
	}
	return nil
}

// ChannelTypeNames lists the catalogue's channel types in order.
func (c Catalog) ChannelTypeNames() []string {
	out := make([]string, len(c.Channels))
	for i, t := range c.Channels {
		out[i] = t.Name()
	}
	return out
}

// allChannelKeys is every key some channel may have, sorted: the common
// keys and those of every type.
func (c Catalog) allChannelKeys() []string {
	all := slices.Clone(commonChannelKeys)
	for _, t := range c.Channels {
		all = append(all, t.Keys()...)
	}
	sort.Strings(all)
	return slices.Compact(all)
}

// lookup follows keys down from the document root; nil when one is absent.
func lookup(n *yaml.Node, keys ...string) *yaml.Node {
	n = resolve(n)
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = resolve(n.Content[0])
	}
	for _, key := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for k, v := range firstKeys(n) {
			if k.Value == key {
				next = resolve(v)
				break
			}
		}
		n = next
	}
	return n
}

// firstKeys yields a mapping's pairs, each key once (yamlcheck reports the
// repeats).
func firstKeys(m *yaml.Node) iter.Seq2[*yaml.Node, *yaml.Node] {
	return func(yield func(k, v *yaml.Node) bool) {
		seen := map[string]bool{}
		for i := 0; i+1 < len(m.Content); i += 2 {
			k := m.Content[i]
			if seen[k.Value] {
				continue
			}
			seen[k.Value] = true
			if !yield(k, m.Content[i+1]) {
				return
			}
		}
	}
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func scalarAt(m *yaml.Node, key string) string {
	for k, v := range firstKeys(m) {
		if v = resolve(v); k.Value == key && v != nil && v.Kind == yaml.ScalarNode {
			return v.Value
		}
	}
	return ""
}

// isSet reports whether a value says anything: not null, not "", not an
// empty list or mapping.
func isSet(v *yaml.Node) bool {
	v = resolve(v)
	switch {
	case v == nil:
		return false
	case v.Kind == yaml.ScalarNode:
		return v.Tag != "!!null" && v.Value != ""
	}
	return len(v.Content) > 0
}

// under moves a problem found in a part of the file to that part's path.
func under(base string, p yamlcheck.Problem) yamlcheck.Problem {
	switch {
	case p.Path == "":
		p.Path = base
	case strings.HasPrefix(p.Path, "["):
		p.Path = base + p.Path
	default:
		p.Path = base + "." + p.Path
	}
	return p
}
