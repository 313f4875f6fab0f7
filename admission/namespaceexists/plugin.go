// Package namespaceexists is kube's NamespaceExists and
// NamespaceAutoProvision plugins: a write into a namespace that does not
// exist is refused with the namespace's 404, or, with auto-provisioning,
// the namespace is created first.
package namespaceexists

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
)

// Getter reads a namespace, from a cache and then from storage.
type Getter func(ctx context.Context, name string) (*corev1.Namespace, error)

// Creator creates an empty namespace of the name.
type Creator func(ctx context.Context, name string) error

// applies reports whether a is a write of a namespaced object (namespaces
// themselves aside).
func applies(a *admission.Attributes) bool {
	return a.Namespace != "" && !(a.Kind.Group == "" && a.Kind.Kind == "Namespace")
}

// Exists is the NamespaceExists plugin.
type Exists struct {
	get Getter
}

// NewExists returns the plugin reading namespaces with get.
func NewExists(get Getter) *Exists { return &Exists{get: get} }

var (
	_ admission.Validator = (*Exists)(nil)
	_ admission.Handles   = (*Exists)(nil)
)

// Handles creates, updates and deletes.
func (*Exists) Handles(op admission.Operation) bool { return op != admission.Connect }

// Validate refuses a write into a missing namespace with its 404.
func (p *Exists) Validate(ctx context.Context, a *admission.Attributes) error {
	if !applies(a) {
		return nil
	}
	_, err := p.get(ctx, a.Namespace)
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return err
	default:
		return apierrors.NewInternalError(err)
	}
}

// AutoProvision is the NamespaceAutoProvision plugin.
type AutoProvision struct {
	get    Getter
	create Creator
}

// NewAutoProvision returns the plugin.
func NewAutoProvision(get Getter, create Creator) *AutoProvision {
	return &AutoProvision{get: get, create: create}
}

var (
	_ admission.Mutator = (*AutoProvision)(nil)
	_ admission.Handles = (*AutoProvision)(nil)
)

// Handles creates.
func (*AutoProvision) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit creates the namespace of a create into a missing one (not on a
// dry run).
func (p *AutoProvision) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.DryRun || !applies(a) {
		return nil
	}
	_, err := p.get(ctx, a.Namespace)
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return admission.NewForbidden(a, err)
	}
	if err := p.create(ctx, a.Namespace); err != nil && !apierrors.IsAlreadyExists(err) {
		return admission.NewForbidden(a, err)
	}
	return nil
}
