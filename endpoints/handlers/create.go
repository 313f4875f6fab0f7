package handlers

import (
	"context"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

// Create serves POST to a collection, or to a subresource of a named
// object (pods/x/binding) when name is set.
func (s *Scope) Create(w http.ResponseWriter, r *http.Request, name string) {
	create, ok := s.creater(name)
	if !ok {
		s.writeError(w, r, MethodNotAllowed())
		return
	}
	opts := &metav1.CreateOptions{}
	obj, err := s.decodeWrite(w, r, opts, func() error { return validateCreateOptions(opts) })
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx := r.Context()
	if err := s.fillNamespace(ctx, obj); err != nil {
		s.writeError(w, r, err)
		return
	}
	wipeSystemFields(obj)
	dryRun := len(opts.DryRun) > 0
	obj = s.trackUpdate(nil, obj, managerName(opts.FieldManager, r))
	if err := s.mutate(ctx, admission.Create, name, obj, nil, dryRun); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := create(ctx, obj, s.createValidation(dryRun), opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// A Status answer (a binding's) carries the code it is sent with, as
	// kube's does.
	if status, ok := out.(*metav1.Status); ok && status.Code == 0 {
		status.Code = http.StatusCreated
	}
	s.writeObject(w, r, http.StatusCreated, out)
}

// wipeSystemFields drops the metadata only the server sets before admission
// and the field manager see the object, as kube's create does, so that no
// manager owns them.
func wipeSystemFields(obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	m.SetCreationTimestamp(metav1.Time{})
	m.SetUID("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
}

// fillNamespace gives a namespaced object without a namespace the
// request's before admission, as kube does, so that webhooks and policies
// see it; a different one is refused.
func (s *Scope) fillNamespace(ctx context.Context, obj runtime.Object) error {
	if !s.Namespaced {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	switch ns := request.NamespaceFrom(ctx); m.GetNamespace() {
	case ns:
	case "":
		m.SetNamespace(ns)
	default:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

type createFunc func(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error)

// creater returns the storage's create for a collection (name empty) or a
// named object's subresource.
func (s *Scope) creater(name string) (createFunc, bool) {
	if name == "" {
		c, ok := s.Storage.(rest.Creater)
		if !ok {
			return nil, false
		}
		return c.Create, true
	}
	c, ok := s.Storage.(rest.NamedCreater)
	if !ok {
		return nil, false
	}
	return func(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
		return c.Create(ctx, name, obj, validate, opts)
	}, true
}
