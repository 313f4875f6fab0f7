package flowcontrol

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// goNamed shows a value in an error message as kube-apiserver does. kube
// validates its internal types, which have no JSON tags, so a struct in an
// Invalid or NotSupported error reads {"Type":"Limited",...}: Go field
// names, in declaration order, nil pointers and slices as null. The v1
// types declare the same fields in the same order.
type goNamed struct{ v any }

// MarshalJSON writes v with Go field names.
func (g goNamed) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := writeGoNamed(&buf, reflect.ValueOf(g.v)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeGoNamed(buf *bytes.Buffer, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		return writeGoNamed(buf, v.Elem())
	case reflect.Struct:
		buf.WriteByte('{')
		first := true
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if !first {
				buf.WriteByte(',')
			}
			first = false
			name, _ := json.Marshal(f.Name)
			buf.Write(name)
			buf.WriteByte(':')
			if err := writeGoNamed(buf, v.Field(i)); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case reflect.Slice:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		buf.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeGoNamed(buf, v.Index(i)); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	default:
		b, err := json.Marshal(v.Interface())
		buf.Write(b)
		return err
	}
}
