package core

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// redacted replaces the value of a secret in an error: errors are returned to
// clients and logged, secret contents must be neither.
const redacted = "<secret contents redacted>"

// ValidateSecret checks the keys and total size of data and the keys each
// well-known secret type requires.
func ValidateSecret(s *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	dataPath := field.NewPath("data")
	total := 0
	for key, value := range s.Data {
		errs = append(errs, validateDataKey(dataPath, key)...)
		total += len(value)
	}
	if total > MaxSecretSize {
		errs = append(errs, field.TooLong(dataPath, "", MaxSecretSize))
	}
	return append(errs, validateSecretType(s, dataPath)...)
}

// validateSecretType checks the keys required by the type of s. Unknown
// types are allowed, as in kube.
func validateSecretType(s *corev1.Secret, dataPath *field.Path) field.ErrorList {
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		// The token and the uid annotation are filled in later by the
		// token controller; only the account name is needed up front.
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			return field.ErrorList{field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), "")}
		}
	case corev1.SecretTypeDockercfg:
		return requireJSONKey(s, dataPath, corev1.DockerConfigKey)
	case corev1.SecretTypeDockerConfigJson:
		return requireJSONKey(s, dataPath, corev1.DockerConfigJsonKey)
	case corev1.SecretTypeBasicAuth:
		// Either may be empty, but one of them must be present.
		_, hasUser := s.Data[corev1.BasicAuthUsernameKey]
		_, hasPassword := s.Data[corev1.BasicAuthPasswordKey]
		if !hasUser && !hasPassword {
			return field.ErrorList{
				field.Required(dataPath.Key(corev1.BasicAuthUsernameKey), ""),
				field.Required(dataPath.Key(corev1.BasicAuthPasswordKey), ""),
			}
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			return field.ErrorList{field.Required(dataPath.Key(corev1.SSHAuthPrivateKey), "")}
		}
	case corev1.SecretTypeTLS:
		var errs field.ErrorList
		for _, key := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
			if _, ok := s.Data[key]; !ok {
				errs = append(errs, field.Required(dataPath.Key(key), ""))
			}
		}
		return errs
	}
	return nil
}

// requireJSONKey requires data[key] to hold a JSON object.
func requireJSONKey(s *corev1.Secret, dataPath *field.Path, key string) field.ErrorList {
	value, ok := s.Data[key]
	if !ok {
		return field.ErrorList{field.Required(dataPath.Key(key), "")}
	}
	if err := json.Unmarshal(value, &map[string]any{}); err != nil {
		return field.ErrorList{field.Invalid(dataPath.Key(key), redacted, err.Error())}
	}
	return nil
}

// ValidateSecretUpdate forbids a change of type, and any change of data or
// immutable once immutable is true, then validates the new secret.
func ValidateSecretUpdate(s, old *corev1.Secret) field.ErrorList {
	errs := apivalidation.ValidateImmutableField(s.Type, old.Type, field.NewPath("type"))
	if isTrue(old.Immutable) {
		if !isTrue(s.Immutable) {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableMsg))
		}
		if !sameMap(s.Data, old.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableMsg))
		}
	}
	return append(errs, ValidateSecret(s)...)
}
