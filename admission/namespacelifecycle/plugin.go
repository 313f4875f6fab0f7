// Package namespacelifecycle is the admission plugin that keeps objects
// out of namespaces that do not exist or are being deleted, and keeps the
// system namespaces from being deleted.
package namespacelifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-io/capstan/admission"
)

// immortal namespaces cannot be deleted.
var immortal = sets.New(metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic)

// accessReviews are created in namespaces that need not exist: they store
// nothing, as kube lets them.
var accessReviews = sets.New(schema.GroupResource{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"})

// NamespaceGetter reads a namespace.
type NamespaceGetter func(ctx context.Context, name string) (*corev1.Namespace, error)

// Plugin is the NamespaceLifecycle admission plugin. Like kube's, it is a
// mutating plugin, which runs before the other plugins of the mutating
// phase: a write into a missing namespace is refused before anything else
// looks into that namespace.
type Plugin struct {
	get NamespaceGetter
}

// New returns the plugin reading namespaces with get.
func New(get NamespaceGetter) *Plugin { return &Plugin{get: get} }

var _ admission.Mutator = (*Plugin)(nil)

// Admit refuses creates in missing or terminating namespaces and the
// deletion of immortal namespaces. It changes nothing.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	isNamespace := a.Resource.Group == "" && a.Resource.Resource == "namespaces"
	if a.Operation == admission.Delete && isNamespace && a.Subresource == "" && immortal.Has(a.Name) {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, fmt.Errorf("this namespace may not be deleted"))
	}
	if a.Operation != admission.Create || a.Namespace == "" || isNamespace || accessReviews.Has(a.Resource.GroupResource()) {
		return nil
	}
	ns, err := p.get(ctx, a.Namespace)
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(corev1.Resource("namespaces"), a.Namespace)
	}
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if ns.Status.Phase != corev1.NamespaceTerminating {
		return nil
	}
	forbidden := admission.NewForbidden(a, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	if status, ok := forbidden.(*apierrors.StatusError); ok {
		status.ErrStatus.Details.Causes = append(status.ErrStatus.Details.Causes, metav1.StatusCause{
			Type: corev1.NamespaceTerminatingCause, Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace), Field: "metadata.namespace",
		})
	}
	return forbidden
}
