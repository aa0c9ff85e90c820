package zfs

import (
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
type jobject struct {
	keys []string
	vals map[string]any
}

func (o *jobject) get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[k]
	return v, ok
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

// decodeOrdered reads one JSON value keeping object key order.
func decodeOrdered(dec *json.Decoder) (any, error) {
	return decodeValue(dec, 0)
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return decodeObject(dec, depth)
		case '[':
			return decodeArray(dec, depth)
		}
		return nil, fmt.Errorf("unexpected %q", t)
	default:
		return t, nil
	}
}

func decodeObject(dec *json.Decoder, depth int) (*jobject, error) {
	o := &jobject{vals: map[string]any{}}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, ok := kt.(string)
		if !ok {
			return nil, fmt.Errorf("object key is %T", kt)
		}
		v, err := decodeValue(dec, depth+1)
		if err != nil {
			return nil, err
		}
		if _, dup := o.vals[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.vals[k] = v
	}
	if _, err := dec.Token(); err != nil { // closing '}'
		return nil, err
	}
	return o, nil
}

func decodeArray(dec *json.Decoder, depth int) ([]any, error) {
	out := []any{}
	for dec.More() {
		v, err := decodeValue(dec, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if _, err := dec.Token(); err != nil { // closing ']'
		return nil, err
	}
	return out, nil
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
