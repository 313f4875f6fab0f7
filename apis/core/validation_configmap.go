package core

import (
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corev1 "k8s.io/api/core/v1"
)

// MaxSecretSize is the largest total size of the values of a secret or a
// configmap, in bytes: both are meant to fit comfortably in one etcd value.
const MaxSecretSize = 1 << 20

// immutableMsg is kube's message for a change of an immutable object.
const immutableMsg = "field is immutable when `immutable` is set"

// ValidateConfigMap checks the keys of data and binaryData, that no key is in
// both, and the total size of the values.
func ValidateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	var errs field.ErrorList
	total := 0
	dataPath := field.NewPath("data")
	for key, value := range cm.Data {
		errs = append(errs, validateDataKey(dataPath, key)...)
		if _, dup := cm.BinaryData[key]; dup {
			errs = append(errs, field.Invalid(dataPath.Key(key), key, "duplicate of key present in binaryData"))
		}
		total += len(value)
	}
	binaryPath := field.NewPath("binaryData")
	for key, value := range cm.BinaryData {
		errs = append(errs, validateDataKey(binaryPath, key)...)
		total += len(value)
	}
	if total > MaxSecretSize {
		// kube reports the size against the whole object, an empty path
		// that prints as "[]".
		errs = append(errs, field.TooLong(field.NewPath(""), "", MaxSecretSize))
	}
	return errs
}

// ValidateConfigMapUpdate forbids any change of data, binaryData and
// immutable once immutable is true, then validates the new configmap.
func ValidateConfigMapUpdate(cm, old *corev1.ConfigMap) field.ErrorList {
	var errs field.ErrorList
	if isTrue(old.Immutable) {
		if !isTrue(cm.Immutable) {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableMsg))
		}
		if !sameMap(cm.Data, old.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableMsg))
		}
		if !sameMap(cm.BinaryData, old.BinaryData) {
			errs = append(errs, field.Forbidden(field.NewPath("binaryData"), immutableMsg))
		}
	}
	return append(errs, ValidateConfigMap(cm)...)
}

// validateDataKey checks one key of a data map of a configmap or a secret.
func validateDataKey(fldPath *field.Path, key string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsConfigMapKey(key) {
		errs = append(errs, field.Invalid(fldPath.Key(key), key, msg))
	}
	return errs
}

func isTrue(b *bool) bool { return b != nil && *b }

// sameMap compares two data maps. Unlike kube's reflect.DeepEqual it holds a
// nil map equal to an empty one: storage drops empty maps, so a client that
// sends {} back must not be told it changed an immutable object.
func sameMap[V string | []byte](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || string(va) != string(vb) {
			return false
		}
	}
	return true
}
