package zfs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxJSONDepth bounds nesting so hostile input cannot exhaust the stack;
// real vdev trees are a handful of levels deep.
const maxJSONDepth = 64

// jobject is a JSON object that remembers key order: zpool emits pools and
// vdevs as objects keyed by name, and their order is the display order.
// Values sit in a slice beside the keys; small objects are searched
// linearly, which is cheaper than a map for zpool's dozen-field objects.
type jobject struct {
	keys []string
	vals []any
	idx  map[string]int // built on first lookup for large objects
}

// linearMax is the size up to which lookups scan the keys.
const linearMax = 16

func (o *jobject) get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	if len(o.keys) <= linearMax {
		for i, kk := range o.keys {
			if kk == k {
				return o.vals[i], true
			}
		}
		return nil, false
	}
	if o.idx == nil {
		o.idx = make(map[string]int, len(o.keys))
		for i, kk := range o.keys {
			if _, dup := o.idx[kk]; !dup {
				o.idx[kk] = i
			}
		}
	}
	i, ok := o.idx[k]
	if !ok {
		return nil, false
	}
	return o.vals[i], true
}

// keysOrNil returns the keys of o, or nil for a nil object.
func (o *jobject) keysOrNil() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// obj returns the object under k, or nil.
func (o *jobject) obj(k string) *jobject {
	v, _ := o.get(k)
	ov, _ := v.(*jobject)
	return ov
}

// str returns the value under k as text: strings as is, numbers as printed.
func (o *jobject) str(k string) string {
	v, ok := o.get(k)
	if !ok {
		return ""
	}
	return scalarText(v)
}

func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// uint reads a count that --json-int prints as a number and plain -j as a
// string, possibly abbreviated ("1.2K"); exact is false for abbreviations.
func (o *jobject) uint(k string) (n uint64, exact, ok bool) {
	v, present := o.get(k)
	if !present {
		return 0, true, false
	}
	switch x := v.(type) {
	case json.Number:
		if u, err := strconv.ParseUint(x.String(), 10, 64); err == nil {
			return u, true, true
		}
		if f, err := x.Float64(); err == nil && f >= 0 && f < 1.8e19 {
			return uint64(f), true, true
		}
	case string:
		if u, ex, err := parseNiceNum(x); err == nil {
			return u, ex, true
		}
	case bool:
		if x {
			return 1, true, true
		}
		return 0, true, true
	}
	return 0, true, false
}

// decodeOrdered reads one JSON document keeping object key order. It is a
// small recursive-descent scanner: json.Decoder.Token is an order of
// magnitude slower on 1,000-disk pools.
func decodeOrdered(data []byte) (any, error) {
	sc := &jscanner{b: data, intern: map[string]string{}}
	v, err := sc.value(0)
	if err != nil {
		return nil, err
	}
	sc.ws()
	if sc.i != len(sc.b) {
		return nil, sc.errf("trailing data")
	}
	return v, nil
}

type jscanner struct {
	b      []byte
	i      int
	intern map[string]string // short strings repeat in every vdev object
}

func (s *jscanner) errf(msg string) error {
	return fmt.Errorf("JSON offset %d: %s", s.i, msg)
}

func (s *jscanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jscanner) value(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	s.ws()
	if s.i >= len(s.b) {
		return nil, s.errf("unexpected end")
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.array(depth)
	case c == '"':
		return s.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	default:
		return s.literal()
	}
}

func (s *jscanner) object(depth int) (*jobject, error) {
	s.i++ // '{'
	o := &jobject{}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return o, nil
	}
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return nil, s.errf("object key expected")
		}
		k, err := s.str()
		if err != nil {
			return nil, err
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return nil, s.errf("':' expected")
		}
		s.i++
		v, err := s.value(depth + 1)
		if err != nil {
			return nil, err
		}
		o.keys = append(o.keys, k)
		o.vals = append(o.vals, v)
		s.ws()
		if s.i >= len(s.b) {
			return nil, s.errf("unexpected end in object")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return o, nil
		default:
			return nil, s.errf("',' or '}' expected")
		}
	}
}

func (s *jscanner) array(depth int) ([]any, error) {
	s.i++ // '['
	out := []any{}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return out, nil
	}
	for {
		v, err := s.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		s.ws()
		if s.i >= len(s.b) {
			return nil, s.errf("unexpected end in array")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return out, nil
		default:
			return nil, s.errf("',' or ']' expected")
		}
	}
}

// str reads a string; escaped strings are rare in zpool output and are
// handed to encoding/json for exact unescaping.
func (s *jscanner) str() (string, error) {
	start := s.i
	s.i++ // opening quote
	escaped := false
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '\\':
			escaped = true
			s.i += 2
			continue
		case c == '"':
			s.i++
			if !escaped {
				return s.text(s.b[start+1 : s.i-1]), nil
			}
			var out string
			if err := json.Unmarshal(s.b[start:s.i], &out); err != nil {
				return "", s.errf("bad string")
			}
			return out, nil
		case c < 0x20:
			return "", s.errf("control character in string")
		}
		s.i++
	}
	return "", s.errf("unterminated string")
}

// text returns b as a string, sharing one copy of short repeated strings
// (keys, states, types); the map lookup with string(b) does not allocate.
func (s *jscanner) text(b []byte) string {
	if len(b) > 24 {
		return string(b)
	}
	if t, ok := s.intern[string(b)]; ok {
		return t
	}
	t := string(b)
	s.intern[t] = t
	return t
}

func (s *jscanner) number() (json.Number, error) {
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			s.i++
			continue
		}
		break
	}
	n := json.Number(s.b[start:s.i])
	if _, err := strconv.ParseFloat(string(n), 64); err != nil {
		return "", s.errf("bad number")
	}
	return n, nil
}

func (s *jscanner) literal() (any, error) {
	for _, l := range []struct {
		text string
		val  any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if bytes.HasPrefix(s.b[s.i:], []byte(l.text)) {
			s.i += len(l.text)
			return l.val, nil
		}
	}
	return nil, s.errf("unexpected character")
}

// stringList reads an array of strings (other element kinds are printed).
func stringList(v any) []string {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		if s := strings.TrimSpace(scalarText(e)); s != "" {
			out = append(out, s)
		}
	}
	return out
}
