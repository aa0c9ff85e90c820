package config

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/internal/yamlcheck"
)

// ChannelURLType is a ChannelType that may also be written as one URL
// (url: ntfy://ntfy.sh/mytopic), the way shoutrrr, apprise and Scrutiny
// write channels. A type without a URL form returns no Schemes.
type ChannelURLType interface {
	ChannelType
	// Schemes are the URL schemes that name the type, in lower case; the
	// first is its own.
	Schemes() []string
	// DecodeURL decodes u, a URL of one of the type's schemes, into the
	// type's settings. Each problem goes to errs under path (the url key),
	// naming the part of the URL that is wrong, with the URL's secrets
	// masked; settings is nil when u does not decode. masked is u with its
	// credentials replaced by ***, for check-config.
	DecodeURL(u Secret, path string, errs *Errors) (settings ChannelSettings, masked string)
}

// urlKey is the key of a channel written as a URL: a Secret, since the URL
// usually holds a token (${ENV} and file: work as for any secret).
type urlKey struct {
	URL Secret `yaml:"url"`
}

// urlForm returns the url value of a channel written as a URL: an entry
// with a url and no type. An entry with a type keeps the type's own url
// key (webhook, gotify, ntfy).
func urlForm(e *yaml.Node) *yaml.Node {
	if e == nil || e.Kind != yaml.MappingNode {
		return nil
	}
	var u *yaml.Node
	for k, v := range firstKeys(e) {
		switch k.Value {
		case "type":
			if isSet(v) {
				return nil
			}
		case "url":
			u = resolve(v)
		}
	}
	return u
}

// urlKeysBeside are the keys a channel written as a URL may have beside it.
var urlKeysBeside = []string{"name", "min_severity", "send_resolved", "route", "quiet"}

// decodeURL has the type its scheme names decode the channel's URL into
// Settings, and validates them.
func (c *ChannelConfig) decodeURL(p string, e, v *yaml.Node, errs *Errors, cat Catalog) {
	for k, val := range firstKeys(e) {
		if k.Value != "url" && !slices.Contains(urlKeysBeside, k.Value) && isSet(val) {
			errs.add(p+"."+k.Value, nil, "not used beside url: a channel written as a URL takes only %s beside it; put this setting into the URL, or write the channel with type: and its keys",
				strings.Join(urlKeysBeside, ", "))
		}
	}
	up := p + ".url"
	if v.Kind != yaml.ScalarNode {
		errs.add(up, nil, "must be a single URL such as ntfy://ntfy.sh/mytopic, not a list or mapping")
		return
	}
	var u Secret
	if u.UnmarshalYAML(v) != nil {
		return // checkChannels has said why
	}
	raw := strings.TrimSpace(u.Value)
	schemes := cat.channelSchemes()
	if raw == "" {
		errs.add(up, nil, "empty: write the channel as one URL such as ntfy://ntfy.sh/mytopic (schemes: %s), or give it a type", strings.Join(schemes, ", "))
		return
	}
	scheme, _, ok := strings.Cut(raw, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/?#@ ") {
		errs.add(up, nil, "scheme: missing: a channel URL starts with its service and ://, one of %s", strings.Join(schemes, ", "))
		return
	}
	scheme = strings.ToLower(scheme)
	ct, known := cat.channelTypeForScheme(scheme)
	if t, typed := cat.ChannelType(scheme); !known && typed {
		if ut, ok := t.(ChannelURLType); ok && len(ut.Schemes()) > 0 {
			errs.add(up, scheme+"://…", "scheme: %s channels are written %s://…, as shoutrrr writes them", scheme, ut.Schemes()[0])
		} else {
			// A type such as exec, which no other tool writes as a URL.
			errs.add(up, scheme+"://…", "scheme: %s channels have no URL form: write the channel with type: %s and its keys", scheme, scheme)
		}
		return
	}
	if !known {
		errs.add(up, scheme+"://…", "scheme: %q is not a service zwatch knows%s; use one of %s, or write the channel with type:",
			scheme, yamlcheck.Suggest(scheme, schemes), strings.Join(schemes, ", "))
		return
	}
	c.scheme, _, _ = strings.Cut(scheme, "+")
	settings, masked := ct.DecodeURL(u, up, errs)
	if settings == nil {
		return
	}
	c.Type, c.Settings, c.maskedURL = ct.Name(), settings, masked
	// The settings check what the URL said as they check the typed keys;
	// the problem is told against the URL with the key it decoded to.
	var own Errors
	settings.Validate("", &own)
	for _, e := range own {
		key := strings.TrimPrefix(e.Path, ".")
		if e.Value != "" {
			key += " = " + e.Value
		}
		errs.add(up, masked, "decodes to %s: %s", key, e.Problem)
	}
}

// MaskedURL is the URL a channel was written as, with its credentials
// replaced by ***; "" for a channel written with a type and its keys.
func (c ChannelConfig) MaskedURL() string { return c.maskedURL }

// nameURLChannels names each channel written as a URL without a name after
// its scheme, made unique: ntfy, ntfy-2, ...
func (n *NotifyConfig) nameURLChannels() {
	taken := map[string]bool{"console": true}
	for _, c := range n.Channels {
		if strings.TrimSpace(c.Name) != "" {
			taken[ChannelToken(c.Name)] = true
		}
	}
	for i := range n.Channels {
		c := &n.Channels[i]
		if strings.TrimSpace(c.Name) != "" || c.scheme == "" {
			continue
		}
		name := c.scheme
		for k := 2; taken[ChannelToken(name)]; k++ {
			name = fmt.Sprintf("%s-%d", c.scheme, k)
		}
		taken[ChannelToken(name)] = true
		c.Name = name
	}
}

// channelTypeForScheme is the catalogue's type that a URL scheme names.
func (c Catalog) channelTypeForScheme(scheme string) (ChannelURLType, bool) {
	for _, t := range c.Channels {
		if ut, ok := t.(ChannelURLType); ok && slices.Contains(ut.Schemes(), scheme) {
			return ut, true
		}
	}
	return nil, false
}

// channelSchemes lists every URL scheme of the catalogue's types in order.
func (c Catalog) channelSchemes() []string {
	var out []string
	for _, t := range c.Channels {
		if ut, ok := t.(ChannelURLType); ok {
			out = append(out, ut.Schemes()...)
		}
	}
	return out
}
