package handlers

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

// Update serves PUT of one object.
func (s *Scope) Update(w http.ResponseWriter, r *http.Request, name string) {
	updater, ok := s.Storage.(rest.Updater)
	if !ok {
		s.writeError(w, r, MethodNotAllowed())
		return
	}
	opts := &metav1.UpdateOptions{}
	obj, err := s.decodeWrite(w, r, opts, func() error { return validateUpdateOptions(opts) })
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx := r.Context()
	if err := checkName(ctx, obj, name, s.Namespaced); err != nil {
		s.writeError(w, r, err)
		return
	}
	dryRun := len(opts.DryRun) > 0
	info := putInfo{obj: obj, f: func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		newObj := s.trackUpdate(old, obj.DeepCopyObject(), managerName(opts.FieldManager, r))
		op := admission.Update
		if old == nil {
			op = admission.Create
		}
		return newObj, s.mutate(ctx, op, name, newObj, old, dryRun)
	}}
	out, created, err := updater.Update(ctx, name, info, s.createValidation(dryRun), s.updateValidation(dryRun), false, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	s.writeObject(w, r, code, out)
}

// putInfo is the new object of a PUT: obj, the body, through f. As in
// kube, a body that carries a uid updates only the object of that uid.
type putInfo struct {
	obj runtime.Object
	f   rest.UpdatedObjectFunc
}

var _ rest.Preconditioner = putInfo{}

func (p putInfo) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	return p.f(ctx, old)
}

func (p putInfo) Preconditions() *metav1.Preconditions {
	m, err := meta.Accessor(p.obj)
	if err != nil || m.GetUID() == "" {
		return nil
	}
	uid := m.GetUID()
	return &metav1.Preconditions{UID: &uid}
}

// checkName makes sure the body names the object of the URL, filling in
// the namespace when the body has none.
func checkName(ctx context.Context, obj runtime.Object, name string, namespaced bool) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if m.GetName() != name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
	}
	if !namespaced {
		return nil
	}
	ns := request.NamespaceFrom(ctx)
	if m.GetNamespace() == "" {
		m.SetNamespace(ns)
	} else if m.GetNamespace() != ns {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}
