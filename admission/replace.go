package admission

import (
	"encoding/json"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// ReplaceObject replaces what the write's object holds (in place: the
// handler holds it) by the JSON data a mutating webhook or policy made,
// keeping its type meta, then prunes and defaults it as the handler did
// the body.
func (a *Attributes) ReplaceObject(data []byte) error {
	if u, ok := a.Object.(*unstructured.Unstructured); ok {
		var m map[string]any
		if err := utiljson.Unmarshal(data, &m); err != nil {
			return err
		}
		u.Object = m
	} else {
		typeMeta := a.Object.GetObjectKind().GroupVersionKind()
		fresh := reflect.New(reflect.TypeOf(a.Object).Elem())
		if err := json.Unmarshal(data, fresh.Interface()); err != nil {
			return err
		}
		reflect.ValueOf(a.Object).Elem().Set(fresh.Elem())
		a.Object.GetObjectKind().SetGroupVersionKind(typeMeta)
	}
	if a.Pruner != nil {
		if _, err := a.Pruner(a.Object); err != nil {
			return err
		}
	}
	if a.Defaulter != nil {
		a.Defaulter(a.Object)
	}
	return nil
}

// jsonOf encodes obj as JSON, an unstructured object by its content.
func jsonOf(obj runtime.Object) ([]byte, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return json.Marshal(u.Object)
	}
	return json.Marshal(obj)
}
