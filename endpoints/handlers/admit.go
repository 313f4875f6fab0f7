package handlers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

func (s *Scope) attributes(ctx context.Context, op admission.Operation, name string, obj, old runtime.Object, dryRun bool) *admission.Attributes {
	// A create or update names its object in it, as kube's handlers take
	// the name from the object. A deletecollection's deletes stay unnamed,
	// as kube's: a refusal names them "Unknown", a webhook sees no name.
	if name == "" && obj != nil {
		if m, err := meta.Accessor(obj); err == nil {
			name = m.GetName()
		}
	}
	return &admission.Attributes{
		Operation: op, Kind: s.Kind, Resource: s.Resource, Subresource: s.Subresource,
		Namespace: request.NamespaceFrom(ctx), Name: name, Object: obj, OldObject: old, DryRun: dryRun,
		Defaulter: s.Defaulter, Pruner: s.Pruner, Types: s.Types, Versions: s.Versions,
	}
}

// mutate runs mutating admission on a write's object.
func (s *Scope) mutate(ctx context.Context, op admission.Operation, name string, obj, old runtime.Object, dryRun bool) error {
	if s.Admission == nil {
		return nil
	}
	return s.Admission.Admit(ctx, s.attributes(ctx, op, name, obj, old, dryRun))
}

// createValidation is validating admission for a create, handed to storage.
func (s *Scope) createValidation(dryRun bool) rest.ValidateObjectFunc {
	if s.Admission == nil {
		return nil
	}
	return func(ctx context.Context, obj runtime.Object) error {
		return s.Admission.Validate(ctx, s.attributes(ctx, admission.Create, "", obj, nil, dryRun))
	}
}

// updateValidation is validating admission for an update.
func (s *Scope) updateValidation(dryRun bool) rest.ValidateObjectUpdateFunc {
	if s.Admission == nil {
		return nil
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		return s.Admission.Validate(ctx, s.attributes(ctx, admission.Update, "", obj, old, dryRun))
	}
}

// deleteValidation is admission for a delete, mutating then validating,
// run by storage on each object it deletes (each of a deletecollection's
// too) with the object and the delete's options, as kube runs it.
func (s *Scope) deleteValidation(name string, opts *metav1.DeleteOptions) rest.ValidateObjectFunc {
	if s.Admission == nil {
		return nil
	}
	return func(ctx context.Context, old runtime.Object) error {
		a := s.attributes(ctx, admission.Delete, name, nil, old, len(opts.DryRun) > 0)
		a.Options = opts
		if err := s.Admission.Admit(ctx, a); err != nil {
			return err
		}
		return s.Admission.Validate(ctx, a)
	}
}

// admitConnect runs mutating, then validating admission on a connect
// request: kube's CONNECT of the options object, without old object or
// operation options. A mutation of the options is what Connect gets.
func (s *Scope) admitConnect(ctx context.Context, name string, opts runtime.Object) error {
	if s.Admission == nil {
		return nil
	}
	a := s.attributes(ctx, admission.Connect, name, opts, nil, false)
	if err := s.Admission.Admit(ctx, a); err != nil {
		return err
	}
	return s.Admission.Validate(ctx, a)
}
