package core

import (
	"context"
	"crypto/tls"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// SecretStrategy is the strategy of the secrets resource.
type SecretStrategy struct{}

var (
	_ registry.Strategy         = SecretStrategy{}
	_ registry.Defaulter        = SecretStrategy{}
	_ registry.FieldSelectable  = SecretStrategy{}
	_ registry.WarningsOnCreate = SecretStrategy{}
	_ registry.WarningsOnUpdate = SecretStrategy{}
)

// NamespaceScoped is true.
func (SecretStrategy) NamespaceScoped() bool { return true }

// Default sets the type Opaque when missing and folds stringData into data.
// kube does the latter when it converts a request to its internal type, so
// stringData is never stored nor returned; capstan has no internal types and
// does it where every decoded body passes.
func (SecretStrategy) Default(obj runtime.Object) {
	s := obj.(*corev1.Secret)
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = make(map[string][]byte, len(s.StringData))
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
	}
	s.StringData = nil
}

// PrepareForCreate does nothing: a secret has no status.
func (SecretStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate keeps the old type when the new object has none, as kube
// does, so that a client unaware of the type does not trip its immutability.
func (SecretStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	s := obj.(*corev1.Secret)
	if s.Type == "" {
		s.Type = old.(*corev1.Secret).Type
	}
}

// Validate validates a new secret.
func (SecretStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateSecret(obj.(*corev1.Secret))
}

// ValidateUpdate adds the immutability of type and of immutable secrets.
func (SecretStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateSecretUpdate(obj.(*corev1.Secret), old.(*corev1.Secret))
}

// WarningsOnCreate warns when the key of a TLS secret does not match its
// certificate.
func (SecretStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return secretWarnings(obj.(*corev1.Secret))
}

// WarningsOnUpdate is WarningsOnCreate for the new object.
func (SecretStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return secretWarnings(obj.(*corev1.Secret))
}

func secretWarnings(s *corev1.Secret) []string {
	if s.Type != corev1.SecretTypeTLS {
		return nil
	}
	if _, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]); err != nil {
		return []string{err.Error()}
	}
	return nil
}

// Fields returns the type, the one secret field selector beyond metadata.
func (SecretStrategy) Fields(obj runtime.Object) fields.Set {
	return fields.Set{"type": string(obj.(*corev1.Secret).Type)}
}
