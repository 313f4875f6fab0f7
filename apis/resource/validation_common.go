// Package resource holds the strategies of resource.k8s.io/v1, dynamic
// resource allocation: DeviceClasses, ResourceClaims and their templates,
// ResourceSlices and DeviceTaintRules, with kube's defaults, validation and
// limits.
package resource

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"

	"github.com/capstan-io/capstan/apis/core"
)

// maxSize and its kin bound a list before its items are looked at: a list
// past its bound is reported once, by its length, and not walked.
func tooMany[T any](s []T, maxSize int, path *field.Path) *field.Error {
	if maxSize >= 0 && len(s) > maxSize {
		return field.TooMany(path, len(s), maxSize)
	}
	return nil
}

// eachOf validates every item of a list of at most maxSize items (-1: no
// bound).
func eachOf[T any](s []T, maxSize int, path *field.Path, item func(T, *field.Path) field.ErrorList) field.ErrorList {
	if err := tooMany(s, maxSize, path); err != nil {
		return field.ErrorList{err}
	}
	var errs field.ErrorList
	for i, v := range s {
		errs = append(errs, item(v, path.Index(i))...)
	}
	return errs
}

// setOf is eachOf for a list whose items' keys must differ.
func setOf[T any, K comparable](s []T, maxSize int, path *field.Path, item func(T, *field.Path) field.ErrorList, key func(T) K) field.ErrorList {
	errs := eachOf(s, maxSize, path, item)
	if len(errs) == 1 && errs[0].Type == field.ErrorTypeTooMany {
		return errs
	}
	seen := map[K]bool{}
	for i, v := range s {
		k := key(v)
		if seen[k] {
			errs = append(errs, field.Duplicate(path.Index(i), k))
		}
		seen[k] = true
	}
	return errs
}

func self(s string) string { return s }

// mapOf validates the keys and values of a map of at most maxSize entries;
// a long key is shortened in the path, as kube does.
func mapOf[K ~string, T any](m map[K]T, maxSize, keyLen int, path *field.Path, key func(K, *field.Path) field.ErrorList, item func(T, *field.Path) field.ErrorList) field.ErrorList {
	if maxSize >= 0 && len(m) > maxSize {
		return field.ErrorList{field.TooMany(path, len(m), maxSize)}
	}
	var errs field.ErrorList
	for k, v := range m {
		errs = append(errs, key(k, path)...)
		errs = append(errs, item(v, path.Key(shorten(string(k), keyLen)))...)
	}
	return errs
}

func shorten(s string, maxLen int) string {
	maxLen = max(maxLen, 16)
	if len(s) <= maxLen {
		return s
	}
	const ellipsis = "..."
	rest := maxLen - len(ellipsis)
	return s[:(rest+1)/2] + ellipsis + s[len(s)-rest/2:]
}

func invalidEach(path *field.Path, v string, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, v, msg))
	}
	return errs
}

// Names of DRA objects and their parts, as kube checks them: a driver as a
// CSI driver, a device, request or counter as a DNS label, a class as a
// DNS subdomain.
var (
	validateDriverName = core.ValidateCSIDriverName
	validateDeviceName = dnsLabel
	validateCounter    = dnsLabel
)

func dnsLabel(v string, path *field.Path) field.ErrorList {
	return invalidEach(path, v, validation.IsDNS1123Label(v))
}

func dnsSubdomain(v string, path *field.Path) field.ErrorList {
	return invalidEach(path, v, validation.IsDNS1123Subdomain(v))
}

// validatePoolName requires a name of DNS subdomains separated by "/".
func validatePoolName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	if len(name) > resourcev1.PoolNameMaxLength {
		errs = append(errs, field.TooLong(path, "", resourcev1.PoolNameMaxLength))
	}
	for _, part := range strings.Split(name, "/") {
		errs = append(errs, dnsSubdomain(part, path)...)
	}
	return errs
}

// validateQualifiedName accepts a C identifier, optionally after a domain
// and a slash.
func validateQualifiedName(name resourcev1.QualifiedName, path *field.Path) field.ErrorList {
	parts := strings.Split(string(name), "/")
	switch len(parts) {
	case 1:
		return validateCIdentifier(parts[0], path)
	case 2:
		var errs field.ErrorList
		if parts[0] == "" {
			errs = append(errs, field.Invalid(path, "", "the domain must not be empty"))
		} else {
			errs = append(errs, validateDriverName(parts[0], path)...)
		}
		if parts[1] == "" {
			return append(errs, field.Invalid(path, "", "the name must not be empty"))
		}
		return append(errs, validateCIdentifier(parts[1], path)...)
	}
	// kube does not check names with more than one slash.
	return nil
}

func validateFullyQualifiedName(name resourcev1.FullyQualifiedName, path *field.Path) field.ErrorList {
	errs := validateQualifiedName(resourcev1.QualifiedName(name), path)
	if !strings.Contains(string(name), "/") {
		errs = append(errs, field.Invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash"))
	}
	return errs
}

func validateCIdentifier(id string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(id) > resourcev1.DeviceMaxIDLength {
		errs = append(errs, field.TooLong(path, "", resourcev1.DeviceMaxIDLength))
	}
	return append(errs, invalidEach(path, id, validation.IsCIdentifier(id))...)
}

// celFeatures select DRA's CEL environment, from kube's own library for
// the field (k8s.io/dynamic-resource-allocation/cel): device.driver,
// device.attributes and device.capacity typed, kube's cost estimates. The
// features are v1.37's defaults: consumable capacity on, list-typed
// attributes off. The library builds the environment on the first
// GetCompiler and keeps it; asked at package init, it cost every start
// a tenth of init's allocations for a field few clusters use.
var celFeatures = dracel.Features{EnableConsumableCapacity: true}

// validateCELExpression bounds an expression's length and type-checks it
// in DRA's environment, within kube's cost limit; a stored expression was
// valid when written and is not compiled again.
func validateCELExpression(expr string, path *field.Path, stored bool) field.ErrorList {
	if stored {
		return nil
	}
	if len(expr) > resourcev1.CELSelectorExpressionMaxLength {
		return field.ErrorList{field.TooLong(path, "", resourcev1.CELSelectorExpressionMaxLength)}
	}
	envType := environment.NewExpressions
	result := dracel.GetCompiler(celFeatures).CompileCELExpression(expr, dracel.Options{EnvType: &envType})
	if result.Error != nil {
		return field.ErrorList{celFieldError(path, expr, result.Error)}
	}
	if result.MaxCost > resourcev1.CELSelectorExpressionMaxCost {
		return field.ErrorList{field.Forbidden(path, "too complex, exceeds cost limit")}
	}
	return nil
}

// celFieldError is a compilation error as kube reports it.
func celFieldError(path *field.Path, expr string, err error) *field.Error {
	var celErr *apiservercel.Error
	if errors.As(err, &celErr) {
		switch celErr.Type {
		case apiservercel.ErrorTypeRequired:
			return field.Required(path, celErr.Detail)
		case apiservercel.ErrorTypeInvalid:
			return field.Invalid(path, expr, celErr.Detail)
		}
	}
	return field.InternalError(path, fmt.Errorf("unsupported error type: %w", err))
}

func validateSelectors(selectors []resourcev1.DeviceSelector, path *field.Path, stored bool) field.ErrorList {
	return eachOf(selectors, resourcev1.DeviceSelectorsMaxSize, path, func(s resourcev1.DeviceSelector, path *field.Path) field.ErrorList {
		if s.CEL == nil {
			return field.ErrorList{field.Required(path.Child("cel"), "")}
		}
		return validateCELExpression(s.CEL.Expression, path.Child("cel", "expression"), stored)
	})
}

// validateOpaqueConfig requires a driver and parameters that are a JSON
// object within the size limit (a stored one may be larger: the limit is
// newer than some objects).
func validateOpaqueConfig(c *resourcev1.OpaqueDeviceConfiguration, path *field.Path, stored bool) field.ErrorList {
	if c == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	errs := validateDriverName(c.Driver, path.Child("driver"))
	return append(errs, validateRawExtension(c.Parameters, path.Child("parameters"), stored, resourcev1.OpaqueParametersMaxLength)...)
}

func validateRawExtension(raw runtime.RawExtension, path *field.Path, stored bool, maxLength int) field.ErrorList {
	var v any
	switch {
	case len(raw.Raw) == 0:
		return field.ErrorList{field.Required(path, "")}
	case !stored && len(raw.Raw) > maxLength:
		return field.ErrorList{field.TooLong(path, "", maxLength)}
	}
	if err := json.Unmarshal(raw.Raw, &v); err != nil {
		return field.ErrorList{field.Invalid(path, "<value omitted>", fmt.Sprintf("error parsing data as JSON: %v", err.Error()))}
	}
	if v == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	if _, ok := v.(map[string]any); !ok {
		return field.ErrorList{field.Invalid(path, "<value omitted>", "must be a valid JSON object")}
	}
	return nil
}

var deviceTaintEffects = []resourcev1.DeviceTaintEffect{resourcev1.DeviceTaintEffectNoExecute,
	resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNone}

func knownEffect(e resourcev1.DeviceTaintEffect) bool {
	for _, k := range deviceTaintEffects {
		if e == k {
			return true
		}
	}
	return false
}

// validateTaint requires a label-name key, a label-value value and a known
// effect; an unchanged effect is not checked again.
func validateTaint(t resourcev1.DeviceTaint, old *resourcev1.DeviceTaint, path *field.Path) field.ErrorList {
	errs := metavalidation.ValidateLabelName(t.Key, path.Child("key"))
	if t.Value != "" {
		errs = append(errs, labelValue(t.Value, path.Child("value"))...)
	}
	if old == nil || old.Effect != t.Effect {
		switch {
		case t.Effect == "":
			errs = append(errs, field.Required(path.Child("effect"), ""))
		case !knownEffect(t.Effect):
			errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, deviceTaintEffects))
		}
	}
	return errs
}

func validateToleration(t resourcev1.DeviceToleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, metavalidation.ValidateLabelName(t.Key, path.Child("key"))...)
	}
	switch t.Operator {
	case resourcev1.DeviceTolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(path.Child("value"), t.Value, "must be empty for operator `Exists`"))
		}
	case resourcev1.DeviceTolerationOpEqual:
		errs = append(errs, labelValue(t.Value, path.Child("value"))...)
	case "":
		errs = append(errs, field.Required(path.Child("operator"), ""))
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator,
			[]resourcev1.DeviceTolerationOperator{resourcev1.DeviceTolerationOpEqual, resourcev1.DeviceTolerationOpExists}))
	}
	if t.Effect != "" && !knownEffect(t.Effect) {
		errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, deviceTaintEffects))
	}
	return errs
}

func labelValue(v string, path *field.Path) field.ErrorList {
	return invalidEach(path, v, validation.IsValidLabelValue(v))
}

// validateBindingConditions bounds both lists, refuses duplicates and
// overlap, and requires both or neither.
func validateBindingConditions(conditions, failures []string, path *field.Path) field.ErrorList {
	condPath, failPath := path.Child("bindingConditions"), path.Child("bindingFailureConditions")
	labelName := func(s string, p *field.Path) field.ErrorList { return metavalidation.ValidateLabelName(s, p) }
	errs := eachOf(conditions, resourcev1.BindingConditionsMaxSize, condPath, labelName)
	errs = append(errs, eachOf(failures, resourcev1.BindingFailureConditionsMaxSize, failPath, labelName)...)
	seen := map[string]bool{}
	for i, c := range conditions {
		if seen[c] {
			errs = append(errs, field.Duplicate(condPath.Index(i), c))
		}
		seen[c] = true
	}
	seenFailure := map[string]bool{}
	for i, c := range failures {
		if seenFailure[c] {
			errs = append(errs, field.Duplicate(failPath.Index(i), c))
		}
		seenFailure[c] = true
		if seen[c] {
			errs = append(errs, field.Invalid(failPath.Index(i), c, "bindingFailureConditions must not overlap with bindingConditions"))
		}
	}
	if len(conditions) == 0 && len(failures) > 0 {
		errs = append(errs, field.Invalid(condPath, conditions, "bindingConditions are required to use bindingFailureConditions"))
	}
	if len(failures) == 0 && len(conditions) > 0 {
		errs = append(errs, field.Invalid(failPath, failures, "bindingFailureConditions are required to use bindingConditions"))
	}
	return errs
}

func validateNodeName(name string, path *field.Path) field.ErrorList {
	return invalidEach(path, name, apivalidation.NameIsDNSSubdomain(name, false))
}
