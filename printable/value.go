package printable

import (
	"reflect"
	"sync"
)

// Value returns v with every string in it, however deep (struct fields,
// slices, maps' keys and values, pointers, interfaces), made printable:
// Line, or Text for a struct field tagged `printable:"text"` (a block of
// lines, such as a step's output). What needs no change is shared with v,
// not copied; what does is copied first, so v itself is never changed
// (an event read by the console is also the store's). Unexported fields
// are left as they are.
func Value[T any](v T) T {
	rv := reflect.ValueOf(&v).Elem()
	if out, changed := walk(rv, oneLine); changed {
		return out.Interface().(T)
	}
	return v
}

// plan is what walk visits of a type: whether it can hold a string at
// all and, for a struct, the exported fields that can (with whether each
// is text). Made once per type: reading every field's type and tag by
// reflection at every value was most of a report's cost at 26,700
// trials (a trial is mostly numbers and times).
type plan struct {
	strings bool
	fields  []fieldPlan
}

type fieldPlan struct {
	index int
	text  newlines // a `printable:"text"` field keeps its newlines
}

var plans sync.Map // reflect.Type → *plan

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	// While a type is planned it counts as holding strings, so a type
	// that refers to itself is walked rather than wrongly skipped.
	plans.Store(t, &plan{strings: true, fields: allFields(t)})
	p := &plan{}
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		p.strings = true
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && planOf(f.Type).strings {
				p.fields = append(p.fields, fieldPlan{i, f.Tag.Get("printable") == "text"})
			}
		}
		p.strings = len(p.fields) > 0
	case reflect.Slice, reflect.Array, reflect.Pointer:
		p.strings = planOf(t.Elem()).strings
	case reflect.Map:
		p.strings = planOf(t.Key()).strings || planOf(t.Elem()).strings
	}
	plans.Store(t, p)
	return p
}

// allFields is every exported field of a struct type (nil for another).
func allFields(t reflect.Type) []fieldPlan {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []fieldPlan
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() {
			out = append(out, fieldPlan{i, newlines(f.Tag.Get("printable") == "text")})
		}
	}
	return out
}

func walk(v reflect.Value, text newlines) (reflect.Value, bool) {
	p := planOf(v.Type())
	if !p.strings {
		return v, false
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		c := clean(s, text)
		if c == s {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.SetString(c)
		return out, true
	case reflect.Struct:
		var out reflect.Value
		for _, f := range p.fields {
			nf, changed := walk(v.Field(f.index), f.text)
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.New(v.Type()).Elem()
				out.Set(v)
			}
			out.Field(f.index).Set(nf)
		}
		if out.IsValid() {
			return out, true
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			break
		}
		var out reflect.Value
		for i := 0; i < v.Len(); i++ {
			ne, changed := walk(v.Index(i), text)
			if !changed {
				continue
			}
			if !out.IsValid() {
				if v.Kind() == reflect.Slice {
					out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
				} else {
					out = reflect.New(v.Type()).Elem()
				}
				reflect.Copy(out, v)
			}
			out.Index(i).Set(ne)
		}
		if out.IsValid() {
			return out, true
		}
	case reflect.Map:
		if v.IsNil() {
			break
		}
		changed := false
		type kv struct{ k, v reflect.Value }
		entries := make([]kv, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			k, kc := walk(it.Key(), oneLine)
			e, ec := walk(it.Value(), text)
			changed = changed || kc || ec
			entries = append(entries, kv{k, e})
		}
		if changed {
			out := reflect.MakeMapWithSize(v.Type(), len(entries))
			for _, e := range entries {
				out.SetMapIndex(e.k, e.v)
			}
			return out, true
		}
	case reflect.Pointer:
		if v.IsNil() {
			break
		}
		if ne, changed := walk(v.Elem(), text); changed {
			out := reflect.New(v.Type().Elem())
			out.Elem().Set(ne)
			return out, true
		}
	case reflect.Interface:
		if v.IsNil() {
			break
		}
		if ne, changed := walk(v.Elem(), text); changed {
			out := reflect.New(v.Type()).Elem()
			out.Set(ne)
			return out, true
		}
	}
	return v, false
}
