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
	if out, changed := walk(rv, false); changed {
		return out.Interface().(T)
	}
	return v
}

// field is an exported field of a struct that can hold a string, and
// whether it is text (a block of lines).
type field struct {
	index int
	text  bool
}

// types keeps, by type, whether a value of it can hold a string (bool)
// and, for a struct, the fields that can ([]field): a console opening
// 100,000 trials walked every field of every record, times and counters
// included, and read each field's tag every time (a third of the open).
var types sync.Map

type typeInfo struct {
	strings bool
	fields  []field
}

// infoOf is what walk needs of t. A type met again while its own info is
// being worked out (a tree of processes) is taken to hold strings: the
// answer errs towards walking, never towards leaving text unchecked.
func infoOf(t reflect.Type) typeInfo {
	if i, ok := types.Load(t); ok {
		return i.(typeInfo)
	}
	return learn(t, map[reflect.Type]bool{})
}

func learn(t reflect.Type, open map[reflect.Type]bool) typeInfo {
	if i, ok := types.Load(t); ok {
		return i.(typeInfo)
	}
	if open[t] {
		return typeInfo{strings: true}
	}
	open[t] = true
	defer delete(open, t)
	var info typeInfo
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		info.strings = true
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.IsExported() && learn(f.Type, open).strings {
				info.fields = append(info.fields, field{index: i, text: f.Tag.Get("printable") == "text"})
			}
		}
		info.strings = len(info.fields) > 0
	case reflect.Slice, reflect.Array, reflect.Pointer:
		info.strings = learn(t.Elem(), open).strings
	case reflect.Map:
		info.strings = learn(t.Key(), open).strings || learn(t.Elem(), open).strings
	}
	types.Store(t, info)
	return info
}

func walk(v reflect.Value, text bool) (reflect.Value, bool) {
	switch k := v.Kind(); {
	case k == reflect.String, k == reflect.Interface:
	case !infoOf(v.Type()).strings:
		return v, false // no string in it: nothing to make printable
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
		return walkStruct(v, infoOf(v.Type()).fields)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			break
		}
		var out reflect.Value
		elem := v.Type().Elem()
		fields := infoOf(elem).fields // a struct's, looked up once
		for i := 0; i < v.Len(); i++ {
			var ne reflect.Value
			var changed bool
			if elem.Kind() == reflect.Struct {
				ne, changed = walkStruct(v.Index(i), fields)
			} else {
				ne, changed = walk(v.Index(i), text)
			}
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
			k, kc := walk(it.Key(), false)
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

// walkStruct is walk of a struct whose fields that can hold a string are
// fields.
func walkStruct(v reflect.Value, fields []field) (reflect.Value, bool) {
	var out reflect.Value
	for _, f := range fields {
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
	return v, false
}
