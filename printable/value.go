package printable

import "reflect"

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

func walk(v reflect.Value, text bool) (reflect.Value, bool) {
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
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			nf, changed := walk(v.Field(i), f.Tag.Get("printable") == "text")
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.New(t).Elem()
				out.Set(v)
			}
			out.Field(i).Set(nf)
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
