package facts

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// CheckPart reports where P, a lighter view of a kind's payload T (OnPart),
// reads a JSON field T does not have or with another type: a payload field
// renamed would otherwise leave the view silently empty. An empty struct in
// P matches any object of T (it skips it).
func CheckPart[P, T any]() error {
	return checkPart(reflect.TypeFor[P](), reflect.TypeFor[T](), "")
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func checkPart(p, t reflect.Type, path string) error {
	for p.Kind() == reflect.Pointer {
		p = p.Elem()
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	where := path
	if where == "" {
		where = "the payload"
	}
	switch {
	case t.Kind() == reflect.Interface:
		return nil // any JSON decodes into T's field
	case p == t:
		return nil
	case reflect.PointerTo(p).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType):
		return fmt.Errorf("%s: %s and %s decode themselves and differ", where, p, t)
	case p.Kind() == reflect.Struct && p.NumField() == 0:
		if t.Kind() != reflect.Struct && t.Kind() != reflect.Map {
			return fmt.Errorf("%s: skipped as an object, but is %s", where, t)
		}
		return nil
	case p.Kind() == reflect.Struct:
		if t.Kind() != reflect.Struct {
			return fmt.Errorf("%s: read as an object, but is %s", where, t)
		}
		have := jsonFields(t)
		for name, pf := range jsonFields(p) {
			tf, ok := have[name]
			if !ok {
				return fmt.Errorf("%s: %s has no field %q", where, t, name)
			}
			if err := checkPart(pf, tf, strings.TrimPrefix(path+"."+name, ".")); err != nil {
				return err
			}
		}
		return nil
	case p.Kind() == reflect.Slice || p.Kind() == reflect.Array:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return fmt.Errorf("%s: read as a list, but is %s", where, t)
		}
		return checkPart(p.Elem(), t.Elem(), path+"[]")
	case p.Kind() == reflect.Map:
		if t.Kind() != reflect.Map {
			return fmt.Errorf("%s: read as an object, but is %s", where, t)
		}
		return checkPart(p.Elem(), t.Elem(), path+"{}")
	case p.Kind() != t.Kind():
		return fmt.Errorf("%s: read as %s, but is %s", where, p, t)
	}
	return nil
}

// jsonFields are a struct's fields by JSON name, embedded structs' fields
// included unless a shallower field has the name (encoding/json's rule).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	depth := map[string]int{}
	var walk func(t reflect.Type, d int)
	walk = func(t reflect.Type, d int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				walk(ft, d+1)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if old, ok := depth[name]; !ok || d < old {
				out[name], depth[name] = f.Type, d
			}
		}
	}
	walk(t, 0)
	return out
}
