package schema

import (
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// Default applies, in place, the defaults of s to x as kube's structural
// defaulting does: a missing property with a default gets a deep copy of
// it, and so does a property, an array item or an additionalProperties
// value that is null although its schema is not nullable; then defaulting
// goes on into every property, item and additionalProperties value (so
// that defaults nest). A nullable null stays null. kube runs this after
// decoding a request and again on every read from storage.
func Default(x any, s *Structural) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, prop := range s.Properties {
			if prop.Default == nil {
				continue
			}
			if v, ok := x[k]; !ok || isNonNullableNull(v, &prop) {
				x[k] = runtime.DeepCopyJSONValue(prop.Default)
			}
		}
		for k, v := range x {
			if prop, ok := s.Properties[k]; ok {
				Default(v, &prop)
			} else if s.AdditionalProperties != nil {
				if isNonNullableNull(v, s.AdditionalProperties) {
					x[k] = copyJSON(s.AdditionalProperties.Default)
				}
				Default(x[k], s.AdditionalProperties)
			}
		}
	case []any:
		for i := range x {
			if isNonNullableNull(x[i], s.Items) {
				x[i] = copyJSON(s.Items.Default)
			}
			Default(x[i], s.Items)
		}
	}
}

func isNonNullableNull(x any, s *Structural) bool {
	return x == nil && s != nil && !s.Nullable
}

// PruneNonNullableNullsWithoutDefaults removes, in place, the object
// fields that are null although their schema is neither nullable nor
// defaulted, as kube does after pruning (Default would otherwise leave
// them null and validation reject them). Nulls in arrays stay.
func PruneNonNullableNullsWithoutDefaults(x any, s *Structural) {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			fs := fieldSchema(k, s)
			if v == nil && fs != nil && !fs.Nullable && fs.Default == nil {
				delete(x, k)
			} else {
				PruneNonNullableNullsWithoutDefaults(v, fs)
			}
		}
	case []any:
		var items *Structural
		if s != nil {
			items = s.Items
		}
		for _, v := range x {
			PruneNonNullableNullsWithoutDefaults(v, items)
		}
	}
}

// fieldSchema is the schema of an object's field k: its property, else
// its additionalProperties schema.
func fieldSchema(k string, s *Structural) *Structural {
	if s == nil {
		return nil
	}
	if p, ok := s.Properties[k]; ok {
		return &p
	}
	return s.AdditionalProperties
}

// PruneDefaults prunes, in place, every default of s as kube does before
// serving a CRD version: each default is put at its place in an otherwise
// empty resource, which is then coerced (metadata through ObjectMeta,
// malformed fields dropped) and pruned against the whole schema. A
// ValidateSchema-valid schema has nothing to prune, except for what kube
// tolerates on update of CRDs that had unpruned defaults already.
func PruneDefaults(s *Structural) error {
	_, err := pruneDefaults(s, s, nil)
	return err
}

func pruneDefaults(root, s *Structural, at surround) (changed bool, err error) {
	if s == nil {
		return false, nil
	}
	if s.Default != nil {
		orig := runtime.DeepCopyJSONValue(s.Default)
		obj, err := at.wrap(s.Default, false)
		if err != nil {
			return false, fmt.Errorf("failed to prune default value: %v", err)
		}
		if ferr, _ := CoerceEmbeddedMeta(nil, obj, root, true, CoerceOptions{DropInvalidFields: true}); ferr != nil {
			return false, fmt.Errorf("failed to prune default value: %v", ferr)
		}
		Prune(obj, root, true)
		v, found, err := at.unwrap(obj)
		if err != nil {
			return false, fmt.Errorf("failed to prune default value: %v", err)
		}
		if !found {
			v = nil
		}
		s.Default = v
		s.HasDefault = v != nil
		changed = !reflect.DeepEqual(orig, s.Default)
	}
	if s.AdditionalProperties != nil {
		c, err := pruneDefaults(root, s.AdditionalProperties, at.key("*"))
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	if s.Items != nil {
		c, err := pruneDefaults(root, s.Items, at.index())
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	for _, k := range sortedKeys(s.Properties) {
		p := s.Properties[k]
		c, err := pruneDefaults(root, &p, at.key(k))
		if err != nil {
			return false, err
		}
		if c {
			s.Properties[k] = p
			changed = true
		}
	}
	return changed, nil
}

// surround is the way from a resource root down to a schema node: object
// keys, and "" for an array index. It builds the smallest resource around
// a default value and finds the value in it again.
type surround []string

const indexStep = ""

func (a surround) key(k string) surround {
	return append(a[:len(a):len(a)], k)
}

func (a surround) index() surround {
	return append(a[:len(a):len(a)], indexStep)
}

// wrap puts x at its place; with typeMeta, the resource gets kube's
// placeholder apiVersion and kind (validation/v1, Validation) unless it
// has its own.
func (a surround) wrap(x any, typeMeta bool) (map[string]any, error) {
	for i := len(a) - 1; i >= 0; i-- {
		if a[i] == indexStep {
			x = []any{x}
		} else {
			x = map[string]any{a[i]: x}
		}
	}
	obj, ok := x.(map[string]any)
	if !ok {
		return nil, errors.New("object root default value must be of object type")
	}
	if typeMeta {
		if _, ok := obj["kind"]; !ok {
			obj["kind"] = "Validation"
		}
		if _, ok := obj["apiVersion"]; !ok {
			obj["apiVersion"] = "validation/v1"
		}
	}
	return obj, nil
}

// unwrap finds the value at a's place in obj again.
func (a surround) unwrap(obj map[string]any) (any, bool, error) {
	var x any = obj
	for i, step := range a {
		if step == indexStep {
			l, ok := x.([]any)
			if !ok {
				return nil, false, fmt.Errorf("%s[] must be of array type", a.prefix(i))
			}
			if len(l) == 0 {
				return nil, false, nil
			}
			x = l[0]
			continue
		}
		m, ok := x.(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("%s.%s must be of object type", a.prefix(i), step)
		}
		v, ok := m[step]
		if !ok {
			return nil, false, nil
		}
		x = v
	}
	return x, true, nil
}

// prefix renders the first n steps the way kube's messages do.
func (a surround) prefix(n int) string {
	out := ""
	for _, step := range a[:n] {
		if step == indexStep {
			out += "[]"
		} else {
			out += "." + step
		}
	}
	return out
}
