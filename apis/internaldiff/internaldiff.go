// Package internaldiff shows the difference between two API objects as
// kube-apiserver's validation shows it in a Forbidden message ("spec is
// immutable after creation except ...", "pod updates may not change
// fields other than ..."). kube diffs its internal types, which carry no
// JSON tags: their JSON names each field by its Go name and writes every
// field, empty or not. capstan validates the versioned types of
// k8s.io/api, so it renders them the way the untagged types would render.
package internaldiff

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/diff"
)

// Diff is apimachinery's diff.Diff of a and b rendered as kube's internal
// types of the same shape would be.
func Diff(a, b any) string {
	return diff.Diff(json.RawMessage(Marshal(a)), json.RawMessage(Marshal(b)))
}

// Marshal is v's JSON as if its k8s.io/api structs had no tags.
func Marshal(v any) []byte {
	var buf bytes.Buffer
	write(&buf, reflect.ValueOf(v))
	return buf.Bytes()
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

func write(buf *bytes.Buffer, v reflect.Value) {
	if !v.IsValid() {
		buf.WriteString("null")
		return
	}
	t := v.Type()
	// Quantities, times, IntOrStrings write themselves, as they do in kube.
	if t.Implements(marshalerType) || (v.CanAddr() && reflect.PointerTo(t).Implements(marshalerType)) {
		if (t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface) && v.IsNil() {
			buf.WriteString("null")
			return
		}
		standard(buf, v)
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			buf.WriteString("null")
			return
		}
		write(buf, v.Elem())
	case reflect.Struct:
		if !untagged(t) {
			standard(buf, v)
			return
		}
		buf.WriteByte('{')
		first := true
		writeFields(buf, v, &first)
		buf.WriteByte('}')
	case reflect.Map:
		if v.IsNil() {
			buf.WriteString("null")
			return
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			name, _ := json.Marshal(k.String())
			buf.Write(name)
			buf.WriteByte(':')
			write(buf, v.MapIndex(k))
		}
		buf.WriteByte('}')
	case reflect.Slice:
		if v.IsNil() {
			buf.WriteString("null")
			return
		}
		if t.Elem().Kind() == reflect.Uint8 {
			standard(buf, v)
			return
		}
		fallthrough
	case reflect.Array:
		buf.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				buf.WriteByte(',')
			}
			write(buf, v.Index(i))
		}
		buf.WriteByte(']')
	default:
		standard(buf, v)
	}
}

// writeFields writes the exported fields of struct v by their Go names;
// an embedded struct's fields are written in its place, as encoding/json
// promotes the fields of an untagged embedded struct (by their Go names,
// or by their tags for apimachinery's TypeMeta and ObjectMeta).
func writeFields(buf *bytes.Buffer, v reflect.Value, first *bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if untagged(f.Type) {
				writeFields(buf, v.Field(i), first)
				continue
			}
			// kube's internal types embed TypeMeta and ObjectMeta with no
			// tag: their own tagged fields are promoted, as they encode.
			writeMembers(buf, v.Field(i), first)
			continue
		}
		if !*first {
			buf.WriteByte(',')
		}
		*first = false
		name, _ := json.Marshal(f.Name)
		buf.Write(name)
		buf.WriteByte(':')
		write(buf, v.Field(i))
	}
}

// writeMembers writes the members of struct v's standard JSON object in
// place, without its braces.
func writeMembers(buf *bytes.Buffer, v reflect.Value, first *bool) {
	data, err := json.Marshal(v.Interface())
	if err != nil || len(data) <= 2 || data[0] != '{' {
		return
	}
	if !*first {
		buf.WriteByte(',')
	}
	*first = false
	buf.Write(data[1 : len(data)-1])
}

// untagged reports whether kube's internal counterpart of t has no JSON
// tags: the types of k8s.io/api. apimachinery's (ObjectMeta, LabelSelector)
// are shared by both and keep their tags.
func untagged(t reflect.Type) bool {
	return strings.HasPrefix(t.PkgPath(), "k8s.io/api/")
}

func standard(buf *bytes.Buffer, v reflect.Value) {
	data, err := json.Marshal(v.Interface())
	if err != nil {
		buf.WriteString("null")
		return
	}
	buf.Write(data)
}
