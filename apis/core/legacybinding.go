package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
)

// LegacyBindingREST serves the legacy bindings resource: a Binding POSTed
// to a namespace's bindings binds the pod it names, as pods/binding does.
type LegacyBindingREST struct {
	binding *BindingREST
}

var (
	_ rest.Creater = (*LegacyBindingREST)(nil)
	_ rest.Scoper  = (*LegacyBindingREST)(nil)
)

// NewLegacyBindingREST returns the storage of bindings over the pods store.
func NewLegacyBindingREST(pods *registry.Store) *LegacyBindingREST {
	return &LegacyBindingREST{binding: NewBindingREST(pods)}
}

// New returns an empty Binding.
func (*LegacyBindingREST) New() runtime.Object { return &corev1.Binding{} }

// NamespaceScoped is true.
func (*LegacyBindingREST) NamespaceScoped() bool { return true }

// Create binds the pod the Binding names.
func (r *LegacyBindingREST) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	b, ok := obj.(*corev1.Binding)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Binding object: %T", obj))
	}
	return r.binding.Create(ctx, b.Name, obj, validate, opts)
}
