package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// EnforceMountableSecretsAnnotation is the deprecated annotation that limits
// the secrets pods of a service account may mount.
const EnforceMountableSecretsAnnotation = "kubernetes.io/enforce-mountable-secrets"

// ServiceAccountStrategy is the strategy of the serviceaccounts resource.
// kube validates nothing of a service account beyond its metadata; neither
// does capstan, so that every object kube accepts is accepted here.
type ServiceAccountStrategy struct{}

var (
	_ registry.Strategy         = ServiceAccountStrategy{}
	_ registry.WarningsOnCreate = ServiceAccountStrategy{}
	_ registry.WarningsOnUpdate = ServiceAccountStrategy{}
)

// NamespaceScoped is true.
func (ServiceAccountStrategy) NamespaceScoped() bool { return true }

// PrepareForCreate keeps only the name of each referenced secret: the secret
// is always in the namespace of the service account.
func (ServiceAccountStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	cleanSecretReferences(obj.(*corev1.ServiceAccount))
}

// PrepareForUpdate is PrepareForCreate for the new object.
func (ServiceAccountStrategy) PrepareForUpdate(_ context.Context, obj, _ runtime.Object) {
	cleanSecretReferences(obj.(*corev1.ServiceAccount))
}

func cleanSecretReferences(sa *corev1.ServiceAccount) {
	for i, ref := range sa.Secrets {
		sa.Secrets[i] = corev1.ObjectReference{Name: ref.Name}
	}
}

// Validate returns nothing: see ServiceAccountStrategy.
func (ServiceAccountStrategy) Validate(context.Context, runtime.Object) field.ErrorList {
	return nil
}

// ValidateUpdate returns nothing: see ServiceAccountStrategy.
func (ServiceAccountStrategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}

// WarningsOnCreate warns about the deprecated mountable-secrets annotation.
func (ServiceAccountStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return mountableSecretsWarning(obj.(*corev1.ServiceAccount), nil)
}

// WarningsOnUpdate warns only when the update adds the annotation.
func (ServiceAccountStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	return mountableSecretsWarning(obj.(*corev1.ServiceAccount), old.(*corev1.ServiceAccount))
}

func mountableSecretsWarning(sa, old *corev1.ServiceAccount) []string {
	if old != nil {
		if _, ok := old.Annotations[EnforceMountableSecretsAnnotation]; ok {
			return nil
		}
	}
	if _, ok := sa.Annotations[EnforceMountableSecretsAnnotation]; !ok {
		return nil
	}
	return []string{fmt.Sprintf("metadata.annotations[%s]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets",
		EnforceMountableSecretsAnnotation)}
}
