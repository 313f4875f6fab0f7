package mutating

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"google.golang.org/protobuf/types/known/structpb"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	celmutation "k8s.io/apiserver/pkg/cel/mutation"
	"k8s.io/apiserver/pkg/cel/mutation/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/capstan-io/capstan/internal/safejsonpatch"
)

// applyConfiguration merges the Object an ApplyConfiguration made into
// obj as server-side apply merges (list types and map keys from the
// kind's schema), and returns the result as JSON. Atomic lists, maps and
// structs may not be set: kube refuses them rather than replace them.
func applyConfiguration(tc managedfields.TypeConverter, obj map[string]any, gvk schema.GroupVersionKind, val ref.Val) ([]byte, error) {
	objVal, ok := val.(*dynamic.ObjectVal)
	if !ok {
		return nil, fmt.Errorf("unsupported return type from ApplyConfiguration expression: %v", val.Type())
	}
	if err := objVal.CheckTypeNamesMatchFieldPathNames(); err != nil {
		return nil, fmt.Errorf("type mismatch: %w", err)
	}
	fields, ok := objVal.Value().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("invalid return type: %T", val)
	}
	if tc == nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("Resource kind %s not found. There can be a delay between when CustomResourceDefinitions are created and when they are available.", gvk))
	}
	patch := &unstructured.Unstructured{Object: fields}
	patch.SetGroupVersionKind(gvk)
	merged, err := merge(tc, obj, patch)
	if err != nil {
		return nil, fmt.Errorf("error applying patch: %w", err)
	}
	return json.Marshal(merged)
}

func merge(tc managedfields.TypeConverter, obj map[string]any, patch *unstructured.Unstructured) (any, error) {
	patchTyped, err := tc.ObjectToTyped(patch)
	if err != nil {
		return nil, fmt.Errorf("failed to convert patch object to typed object: %w", err)
	}
	if atomics := atomicPaths(nil, patchTyped.Schema(), patchTyped.TypeRef(), patchTyped.AsValue()); len(atomics) > 0 {
		return nil, fmt.Errorf("invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: %v", strings.Join(atomics, ", "))
	}
	live, err := tc.ObjectToTyped(&unstructured.Unstructured{Object: obj}, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("failed to convert original object to typed object: %w", err)
	}
	merged, err := live.Merge(patchTyped)
	if err != nil {
		return nil, fmt.Errorf("failed to merge patch: %w", err)
	}
	out, err := tc.TypedToObject(merged)
	if err != nil {
		return nil, fmt.Errorf("failed to convert typed object to object: %w", err)
	}
	return out, nil
}

// atomicPaths lists the paths of v, typed by tr, whose schema makes them
// atomic.
func atomicPaths(path fieldpath.Path, s *smdschema.Schema, tr smdschema.TypeRef, v value.Value) []string {
	atom, ok := s.Resolve(tr)
	if !ok {
		return nil
	}
	var out []string
	switch {
	case v.IsMap() && atom.Map != nil:
		if atom.Map.ElementRelationship == smdschema.Atomic {
			out = append(out, path.String())
		}
		v.AsMap().Iterate(func(key string, item value.Value) bool {
			if f, ok := atom.Map.FindField(key); ok {
				out = append(out, atomicPaths(append(path.Copy(), fieldpath.PathElement{FieldName: &key}), s, f.Type, item)...)
			}
			return true
		})
	case v.IsList() && atom.List != nil:
		if atom.List.ElementRelationship == smdschema.Atomic {
			out = append(out, path.String())
		}
		list := v.AsList()
		for i := 0; i < list.Length(); i++ {
			out = append(out, atomicPaths(append(path.Copy(), fieldpath.PathElement{Index: &i}), s, atom.List.ElementType, list.At(i))...)
		}
	}
	return out
}

// jsonPatch applies the JSONPatch operations a mutation made to obj and
// returns the result as JSON; a failed test operation leaves obj as it is.
func jsonPatch(obj map[string]any, val ref.Val) ([]byte, error) {
	ops, err := patchOperations(val)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	patched, err := safejsonpatch.Apply(ops, data)
	if errors.Is(err, jsonpatch.ErrTestFailed) {
		return data, nil
	}
	if err != nil {
		return nil, fmt.Errorf("JSON Patch: %w", err)
	}
	return patched, nil
}

func patchOperations(val ref.Val) (jsonpatch.Patch, error) {
	list, ok := val.(traits.Lister)
	if !ok {
		return nil, errors.New("type mismatch: JSONPatchType.expression should evaluate to array")
	}
	var ops jsonpatch.Patch
	for it := list.Iterator(); it.HasNext() == types.True; {
		native, err := it.Next().ConvertToNative(reflect.TypeOf(&celmutation.JSONPatchVal{}))
		if err != nil {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch: %w", err)
		}
		p, ok := native.(*celmutation.JSONPatchVal)
		if !ok {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of %T", native)
		}
		op := jsonpatch.Operation{"op": raw(strconv.Quote(p.Op)), "path": raw(strconv.Quote(p.Path))}
		if p.From != "" {
			op["from"] = raw(strconv.Quote(p.From))
		}
		if p.Val != nil {
			v, err := patchValue(p.Val)
			if err != nil {
				return nil, err
			}
			op["value"] = raw(string(v))
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// patchValue is a JSONPatch value as JSON: any CEL literal, or an Object.
func patchValue(v ref.Val) ([]byte, error) {
	if o, ok := v.(*dynamic.ObjectVal); ok {
		if err := o.CheckTypeNamesMatchFieldPathNames(); err != nil {
			return nil, fmt.Errorf("type mismatch: %w", err)
		}
	}
	pb, err := v.ConvertToNative(reflect.TypeOf(&structpb.Value{}))
	if err == nil {
		var data []byte
		if data, err = json.Marshal(pb); err == nil {
			return data, nil
		}
	}
	return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
}

func raw(s string) *json.RawMessage {
	m := json.RawMessage(s)
	return &m
}
