package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Version is one group version a resource is served at, with the kind its
// endpoint takes: one of kube's equivalent resources.
type Version struct {
	Resource schema.GroupVersionResource
	Kind     schema.GroupVersionKind
}

// Versions are every version a write's resource (with its subresource)
// is served at, the request's own among them, and how its objects convert
// between them: what matchPolicy Equivalent matches and converts by.
type Versions struct {
	List []Version
	// Convert returns obj (not changed) at kind to.
	Convert func(ctx context.Context, obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error)
}

// Equivalent finds the first version of a's resource, other than the
// requested one, that selects reports a rule of a webhook or policy
// selects, trying the rules in order (kube's matchPolicy Equivalent).
func Equivalent[R any](a *Attributes, rules []R, selects func(*R, *Attributes) bool) (Version, bool) {
	if a.Versions == nil || len(a.Versions.List) < 2 {
		return Version{}, false
	}
	as := *a
	for i := range rules {
		for _, v := range a.Versions.List {
			if v.Resource == a.Resource {
				continue
			}
			as.Resource = v.Resource
			if selects(&rules[i], &as) {
				return v, true
			}
		}
	}
	return Version{}, false
}

// AsVersion is the write as seen at version v of its resource (kube's
// versioned attributes): v's kind and resource, its objects converted,
// Requested pointing back at a. It is a itself when v is a's version.
// Its objects are copies: a mutation of them reaches the write only
// through ReplaceFromVersion.
func (a *Attributes) AsVersion(ctx context.Context, v Version) (*Attributes, error) {
	if v.Kind == a.Kind && v.Resource == a.Resource {
		return a, nil
	}
	if a.Versions == nil || a.Versions.Convert == nil {
		return nil, fmt.Errorf("unable to convert to %v: no conversion", v.Kind)
	}
	out := *a
	out.Kind, out.Resource, out.Requested = v.Kind, v.Resource, a
	out.Defaulter, out.Pruner = nil, nil
	var err error
	if a.Object != nil {
		if out.Object, err = a.Versions.Convert(ctx, a.Object, v.Kind); err != nil {
			return nil, err
		}
	}
	if a.OldObject != nil {
		if out.OldObject, err = a.Versions.Convert(ctx, a.OldObject, v.Kind); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// RequestKind and RequestResource are the kind and resource the write
// was requested at: a's own unless a is another version's view of it.
func (a *Attributes) RequestKind() schema.GroupVersionKind {
	if a.Requested != nil {
		return a.Requested.Kind
	}
	return a.Kind
}

// RequestResource: see RequestKind.
func (a *Attributes) RequestResource() schema.GroupVersionResource {
	if a.Requested != nil {
		return a.Requested.Resource
	}
	return a.Resource
}

// ReplaceJSON makes data, the JSON of an object of a's kind changed by a
// mutating webhook or policy, the write's object: directly, or when a is
// another version's view of the write (from AsVersion) through
// ReplaceFromVersion.
func (a *Attributes) ReplaceJSON(ctx context.Context, data []byte) error {
	if a.Requested == nil {
		return a.ReplaceObject(data)
	}
	var obj runtime.Object
	if _, ok := a.Object.(*unstructured.Unstructured); ok {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return err
		}
		obj = u
	} else {
		obj = reflect.New(reflect.TypeOf(a.Object).Elem()).Interface().(runtime.Object)
		if err := json.Unmarshal(data, obj); err != nil {
			return err
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(a.Kind)
	return a.ReplaceFromVersion(ctx, obj)
}

// ReplaceFromVersion makes obj, an object of a's kind changed by a
// webhook or policy that saw the write at another version (a is from
// AsVersion), the write's object: converted back to the requested
// version, then pruned and defaulted there.
func (a *Attributes) ReplaceFromVersion(ctx context.Context, obj runtime.Object) error {
	r := a.Requested
	if r == nil {
		return fmt.Errorf("not another version's view of the write")
	}
	back, err := r.Versions.Convert(ctx, obj, r.Kind)
	if err != nil {
		return err
	}
	data, err := jsonOf(back)
	if err != nil {
		return err
	}
	if err := r.ReplaceObject(data); err != nil {
		return err
	}
	a.Object = obj
	return nil
}
