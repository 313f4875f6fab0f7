package generic

import (
	"context"
	"errors"
	"fmt"

	arv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ParamLookup reads param objects, as JSON values.
type ParamLookup interface {
	// Namespaced reports whether objects of gvk live in namespaces.
	Namespaced(gvk schema.GroupVersionKind) (bool, error)
	Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (map[string]any, error)
	List(ctx context.Context, gvk schema.GroupVersionKind, namespace string, sel labels.Selector) ([]map[string]any, error)
}

// CollectParams finds the params a binding's paramRef names: [nil] for a
// policy without paramKind, none when parameterNotFoundAction allows it.
func CollectParams(ctx context.Context, lookup ParamLookup, kind *arv1.ParamKind, ref *arv1.ParamRef, requestNamespace string) ([]any, error) {
	if kind == nil {
		return []any{nil}, nil
	}
	if ref == nil {
		return nil, fmt.Errorf("paramKind kind `%v` is specified but binding does not specify paramRef", kind.Kind)
	}
	gv, err := schema.ParseGroupVersion(kind.APIVersion)
	if err != nil {
		return nil, err
	}
	gvk := gv.WithKind(kind.Kind)
	namespaced, err := lookup.Namespaced(gvk)
	if err != nil {
		return nil, err
	}
	namespace := ""
	if namespaced {
		if namespace = ref.Namespace; namespace == "" {
			namespace = requestNamespace
		}
		if namespace == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	}
	var params []any
	switch {
	case ref.Name != "":
		obj, err := lookup.Get(ctx, gvk, namespace, ref.Name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if err == nil {
			params = append(params, obj)
		}
	case ref.Selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		objs, err := lookup.List(ctx, gvk, namespace, sel)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			params = append(params, o)
		}
	}
	if len(params) == 0 && (ref.ParameterNotFoundAction == nil || *ref.ParameterNotFoundAction == arv1.DenyAction) {
		return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
	}
	return params, nil
}
