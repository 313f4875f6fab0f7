package expr

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authn"
)

// JSONValue is obj as expressions see it: its JSON form, numbers as
// int64 where they are whole, with apiVersion and kind (gvk's when obj
// does not say); nil for no object. A typed object is converted field by
// field, as kube converts it, not encoded and decoded.
func JSONValue(obj runtime.Object, gvk schema.GroupVersionKind) (any, error) {
	if obj == nil {
		return nil, nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	v, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	if _, ok := v["kind"]; !ok && !gvk.Empty() {
		v["apiVersion"], v["kind"] = gvk.GroupVersion().String(), gvk.Kind
	}
	return v, nil
}

// RequestValue is the request variable of an admission: kube's
// AdmissionRequest without the objects. Like kube's, it has no empty
// optional fields (name, namespace, subResource, requestSubResource and
// the user's): has() is false for them, and reading one is an error.
func RequestValue(a *admission.Attributes, user *authn.User, options any) map[string]any {
	gvk := map[string]any{"group": a.Kind.Group, "version": a.Kind.Version, "kind": a.Kind.Kind}
	gvr := map[string]any{"group": a.Resource.Group, "version": a.Resource.Version, "resource": a.Resource.Resource}
	reqGVK, reqGVR := gvk, gvr
	if r := a.Requested; r != nil {
		reqGVK = map[string]any{"group": r.Kind.Group, "version": r.Kind.Version, "kind": r.Kind.Kind}
		reqGVR = map[string]any{"group": r.Resource.Group, "version": r.Resource.Version, "resource": r.Resource.Resource}
	}
	v := map[string]any{
		"kind": gvk, "resource": gvr, "requestKind": reqGVK, "requestResource": reqGVR,
		"operation": string(a.Operation), "userInfo": userValue(user), "dryRun": a.DryRun, "options": options,
	}
	setNotEmpty(v, "name", a.Name)
	setNotEmpty(v, "namespace", a.Namespace)
	setNotEmpty(v, "subResource", a.Subresource)
	setNotEmpty(v, "requestSubResource", a.Subresource)
	return v
}

// userValue is kube's UserInfo of user, without its empty fields.
func userValue(user *authn.User) map[string]any {
	v := map[string]any{}
	if user == nil {
		return v
	}
	setNotEmpty(v, "username", user.Name)
	setNotEmpty(v, "uid", user.UID)
	if len(user.Groups) > 0 {
		groups := make([]any, len(user.Groups))
		for i, g := range user.Groups {
			groups[i] = g
		}
		v["groups"] = groups
	}
	if len(user.Extra) > 0 {
		extra := map[string]any{}
		for k, vs := range user.Extra {
			list := make([]any, len(vs))
			for i, s := range vs {
				list[i] = s
			}
			extra[k] = list
		}
		v["extra"] = extra
	}
	return v
}

func setNotEmpty(v map[string]any, key, s string) {
	if s != "" {
		v[key] = s
	}
}
