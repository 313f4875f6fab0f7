package endpoints

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// withoutResetFields is the object convertor of the field manager of
// non-apply writes (updates, creates, patches) to an endpoint with reset
// fields: it converts the object without them. The managed fields of such
// a write come from comparing the old and new objects, typed, and the
// field manager leaves the reset fields out of that comparison anyway;
// dropping them before the conversion spares copying and typing them
// (the spec of a CRD's status write: its schemas, most of the object).
// Server-side apply keeps the full objects: its result is made from them.
type withoutResetFields struct {
	runtime.ObjectConvertor
	fields map[string]bool // top-level JSON field names
}

func (c withoutResetFields) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	return c.ObjectConvertor.ConvertToVersion(withoutFields(in, c.fields), gv)
}

// resetFieldsToDrop returns the reset fields the convertor may drop:
// metadata holds the managed fields themselves and always stays.
func resetFieldsToDrop(reset []string) map[string]bool {
	out := map[string]bool{}
	for _, f := range reset {
		if f != "metadata" && f != "apiVersion" && f != "kind" {
			out[f] = true
		}
	}
	return out
}

// withoutFields returns a shallow copy of obj without the top-level fields
// of those JSON names, or obj itself if it has none of them. The copy
// shares everything else with obj: it is for reading only.
func withoutFields(obj runtime.Object, fields map[string]bool) runtime.Object {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		out := &unstructured.Unstructured{Object: make(map[string]any, len(u.Object))}
		for k, v := range u.Object {
			if !fields[k] {
				out.Object[k] = v
			}
		}
		return out
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return obj
	}
	t := v.Elem().Type()
	var drop []int
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if fields[name] {
			drop = append(drop, i)
		}
	}
	if len(drop) == 0 {
		return obj
	}
	out := reflect.New(t)
	out.Elem().Set(v.Elem())
	for _, i := range drop {
		out.Elem().Field(i).SetZero()
	}
	copied, ok := out.Interface().(runtime.Object)
	if !ok {
		return obj
	}
	return copied
}

var _ runtime.ObjectConvertor = withoutResetFields{}
