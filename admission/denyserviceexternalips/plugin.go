// Package denyserviceexternalips is kube's DenyServiceExternalIPs plugin:
// no Service may take on an external IP it did not have (CVE-2020-8554).
package denyserviceexternalips

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
)

// Plugin refuses new external IPs.
type Plugin struct{}

var (
	_ admission.Validator = Plugin{}
	_ admission.Handles   = Plugin{}
)

// Handles creates and updates.
func (Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate refuses a Service with an external IP its previous state lacked.
func (Plugin) Validate(_ context.Context, a *admission.Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "services" || a.Subresource != "" {
		return nil
	}
	svc, ok := a.Object.(*corev1.Service)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("Expected Service resource, got: %v", a.Kind))
	}
	var oldIPs []string
	if a.OldObject != nil {
		old, ok := a.OldObject.(*corev1.Service)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("Expected Service resource, got: %v", a.Kind))
		}
		oldIPs = old.Spec.ExternalIPs
	}
	for _, ip := range svc.Spec.ExternalIPs {
		if !slices.Contains(oldIPs, ip) {
			return admission.NewForbidden(a, errors.New("Use of external IPs is denied by admission control"))
		}
	}
	return nil
}
