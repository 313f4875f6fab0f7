package apiextensions

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// MaxSelectableFields is how many selectable fields a version may declare.
const MaxSelectableFields = 8

var (
	printerColumnTypes   = []string{"boolean", "date", "integer", "number", "string"}
	printerColumnFormats = []string{"byte", "date", "date-time", "double", "float", "int32", "int64", "password"}
	// conversionReviewVersions are the ConversionReview versions a webhook
	// may be sent; one of them must be accepted.
	conversionReviewVersions = []string{"v1", "v1beta1"}
)

// options are the switches with which a CRD is validated. Create uses the
// strictest; an update relaxes a rule the old CRD already broke, so that
// an object stored under older rules can still be updated.
type options struct {
	requireRecognizedConversionReviewVersion bool
	// requireImmutableNames makes scope and names.kind immutable (once the
	// CRD is established).
	requireImmutableNames bool
	requireOpenAPISchema  bool

	schema schemaOptions

	// allowInvalidCABundle skips the check of the webhook's caBundle.
	allowInvalidCABundle bool
	// allowTooManySelectableFields lists the versions ("" for the shared
	// spec-level list) whose unchanged selectable fields were already more
	// than MaxSelectableFields.
	allowTooManySelectableFields map[string]bool
}

func createOptions(ctx context.Context) options {
	return options{
		requireRecognizedConversionReviewVersion: true,
		requireOpenAPISchema:                     true,
		schema:                                   createSchemaOptions(ctx),
		// The CRD is not established yet: a bad caBundle only fails
		// conversion calls.
		allowInvalidCABundle: true,
	}
}

func updateOptions(ctx context.Context, crd, old *apiextv1.CustomResourceDefinition) options {
	return options{
		requireRecognizedConversionReviewVersion: old.Spec.Conversion == nil || validOrNoConversionReviewVersions(reviewVersions(old.Spec.Conversion)),
		requireImmutableNames:                    IsEstablished(old),
		requireOpenAPISchema:                     allVersionsHaveSchemas(&old.Spec),
		schema:                                   updateSchemaOptions(ctx, &crd.Spec, &old.Spec),
		allowInvalidCABundle:                     allowInvalidCABundle(old),
		allowTooManySelectableFields:             tooManySelectableFieldsAllowed(&crd.Spec, &old.Spec),
	}
}

// ValidateCustomResourceDefinition returns the errors of a new CRD, as
// kube's validation reports them. metadata.name must be
// <spec.names.plural>.<spec.group>; the rest of metadata is the Store's.
func ValidateCustomResourceDefinition(ctx context.Context, crd *apiextv1.CustomResourceDefinition) field.ErrorList {
	var errs field.ErrorList
	required := crd.Spec.Names.Plural + "." + crd.Spec.Group
	const msg = `must be spec.names.plural+"."+spec.group`
	if crd.GenerateName != "" && crd.GenerateName != required {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "generateName"), crd.GenerateName, msg))
	}
	if crd.Name != "" && crd.Name != required {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), crd.Name, msg))
	}
	errs = append(errs, validateSpec(&crd.Spec, createOptions(ctx), field.NewPath("spec"))...)
	errs = append(errs, ValidateCustomResourceDefinitionStatus(&crd.Status, field.NewPath("status"))...)
	errs = append(errs, ValidateStoredVersions(crd.Status.StoredVersions, crd.Spec.Versions, field.NewPath("status", "storedVersions"))...)
	errs = append(errs, validateAPIApproval(crd, nil)...)
	errs = append(errs, validatePreserveUnknownFields(crd, nil)...)
	return errs
}

// ValidateCustomResourceDefinitionUpdate returns the errors of an update
// of the main resource: those of a new CRD, relaxed where old already broke
// a rule, and the immutable fields (group, names.plural; scope and
// names.kind once established).
func ValidateCustomResourceDefinitionUpdate(ctx context.Context, crd, old *apiextv1.CustomResourceDefinition) field.ErrorList {
	opts := updateOptions(ctx, crd, old)
	specPath := field.NewPath("spec")
	errs := validateSpec(&crd.Spec, opts, specPath)
	if opts.requireImmutableNames {
		errs = append(errs, apivalidation.ValidateImmutableField(crd.Spec.Scope, old.Spec.Scope, specPath.Child("scope"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(crd.Spec.Names.Kind, old.Spec.Names.Kind, specPath.Child("names", "kind"))...)
	}
	errs = append(errs, apivalidation.ValidateImmutableField(crd.Spec.Group, old.Spec.Group, specPath.Child("group"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(crd.Spec.Names.Plural, old.Spec.Names.Plural, specPath.Child("names", "plural"))...)
	errs = append(errs, ValidateCustomResourceDefinitionStatus(&crd.Status, field.NewPath("status"))...)
	errs = append(errs, ValidateStoredVersions(crd.Status.StoredVersions, crd.Spec.Versions, field.NewPath("status", "storedVersions"))...)
	errs = append(errs, validateAPIApproval(crd, old)...)
	errs = append(errs, validatePreserveUnknownFields(crd, old)...)
	return errs
}

// ValidateUpdateCustomResourceDefinitionStatus returns the errors of an
// update of the status subresource: only the accepted names are checked,
// as in kube (storedVersions may be pruned by a storage migration).
func ValidateUpdateCustomResourceDefinitionStatus(crd, _ *apiextv1.CustomResourceDefinition) field.ErrorList {
	return ValidateCustomResourceDefinitionStatus(&crd.Status, field.NewPath("status"))
}

// ValidateCustomResourceDefinitionStatus validates the accepted names.
func ValidateCustomResourceDefinitionStatus(status *apiextv1.CustomResourceDefinitionStatus, fldPath *field.Path) field.ErrorList {
	return ValidateNames(&status.AcceptedNames, fldPath.Child("acceptedNames"))
}

// ValidateStoredVersions checks status.storedVersions against the versions:
// at least one, the storage version among them, and each still a version.
func ValidateStoredVersions(stored []string, versions []apiextv1.CustomResourceDefinitionVersion, fldPath *field.Path) field.ErrorList {
	if len(stored) == 0 {
		return field.ErrorList{field.Invalid(fldPath, stored, "must have at least one stored version")}
	}
	var errs field.ErrorList
	// The last index of each stored version, as kube reports it.
	index := map[string]int{}
	for i, v := range stored {
		index[v] = i
	}
	for _, v := range versions {
		_, ok := index[v.Name]
		if v.Storage && !ok {
			errs = append(errs, field.Invalid(fldPath, stored, "must have the storage version "+v.Name))
		}
		delete(index, v.Name)
	}
	for i, v := range stored {
		if j, ok := index[v]; ok && j == i {
			errs = append(errs, field.Invalid(fldPath.Index(i), v, fmt.Sprintf("missing from spec.versions; %[1]s was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in %[1]s and removes %[1]s from status.storedVersions", v)))
		}
	}
	return errs
}

// validateSpec validates a spec the way kube validates its internal form
// (see specView for the paths of fields shared by all versions).
func validateSpec(spec *apiextv1.CustomResourceDefinitionSpec, opts options, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	view := newSpecView(spec)

	switch {
	case spec.Group == "":
		errs = append(errs, field.Required(fldPath.Child("group"), ""))
	case len(validation.IsDNS1123Subdomain(spec.Group)) > 0:
		errs = append(errs, field.Invalid(fldPath.Child("group"), spec.Group, strings.Join(validation.IsDNS1123Subdomain(spec.Group), ",")))
	case !strings.Contains(spec.Group, "."):
		errs = append(errs, field.Invalid(fldPath.Child("group"), spec.Group, "should be a domain with at least one dot"))
	}

	switch spec.Scope {
	case "":
		errs = append(errs, field.Required(fldPath.Child("scope"), ""))
	case apiextv1.ClusterScoped, apiextv1.NamespaceScoped:
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("scope"), spec.Scope, []string{string(apiextv1.ClusterScoped), string(apiextv1.NamespaceScoped)}))
	}

	errs = append(errs, validateVersions(spec, view, opts, fldPath)...)
	namesPath := fldPath.Child("names")
	for _, n := range []struct{ name, value string }{
		{"plural", spec.Names.Plural}, {"singular", spec.Names.Singular},
		{"kind", spec.Names.Kind}, {"listKind", spec.Names.ListKind},
	} {
		if n.value == "" {
			errs = append(errs, field.Required(namesPath.Child(n.name), ""))
		}
	}
	errs = append(errs, ValidateNames(&spec.Names, namesPath)...)

	// The fields shared by all versions, at their spec-level paths.
	errs = append(errs, validateSchema(view.topSchema(), view.anyStatus(), opts.schema.forVersion(view.topVersion()), fldPath.Child("validation"))...)
	errs = append(errs, ValidateSubresources(view.topSubresources(), fldPath.Child("subresources"))...)
	for i := range view.topColumns() {
		errs = append(errs, ValidatePrinterColumn(&view.topColumns()[i], fldPath.Child("additionalPrinterColumns").Index(i))...)
	}
	if fields := view.topSelectable(); len(fields) > 0 {
		if s := view.topSchema(); s == nil || s.OpenAPIV3Schema == nil {
			errs = append(errs, field.Invalid(fldPath.Child("selectableFields"), "", "may only be set when validations.schema is included"))
		} else {
			// kube names this path spec.schema.openAPIV3Schema.
			errs = append(errs, validateSelectableFields(fields, s.OpenAPIV3Schema, fldPath.Child("schema.openAPIV3Schema"), fldPath.Child("selectableFields"), opts.allowTooManySelectableFields[""])...)
		}
	}

	if spec.Conversion != nil && spec.Conversion.Strategy != apiextv1.NoneConverter && spec.PreserveUnknownFields {
		errs = append(errs, field.Invalid(fldPath.Child("conversion").Child("strategy"), spec.Conversion.Strategy, "must be None if spec.preserveUnknownFields is true"))
	}
	errs = append(errs, validateConversion(spec.Conversion, opts, fldPath.Child("conversion"))...)
	return errs
}

// validateVersions validates the versions: a schema where one is needed,
// unique valid names, one storage version.
func validateVersions(spec *apiextv1.CustomResourceDefinitionSpec, view specView, opts options, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	versionsPath := fldPath.Child("versions")
	if opts.requireOpenAPISchema {
		for i, v := range spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				errs = append(errs, field.Required(versionsPath.Index(i).Child("schema", "openAPIV3Schema"), ""))
			}
		}
	} else if !spec.PreserveUnknownFields {
		for i, v := range spec.Versions {
			if v.Served && (v.Schema == nil || v.Schema.OpenAPIV3Schema == nil) {
				errs = append(errs, field.Required(versionsPath.Index(i).Child("schema", "openAPIV3Schema"), "because otherwise all fields are pruned"))
			}
		}
	}
	if spec.PreserveUnknownFields && specHasSchemaWith(spec, schemaHasDefault) {
		errs = append(errs, field.Invalid(fldPath.Child("preserveUnknownFields"), true, "must be false in order to use defaults in the schema"))
	}

	storageVersions := 0
	seen := map[string]bool{}
	unique := true
	for i := range spec.Versions {
		v := &spec.Versions[i]
		if v.Storage {
			storageVersions++
		}
		if seen[v.Name] {
			unique = false
		}
		seen[v.Name] = true
		if msgs := validation.IsDNS1035Label(v.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(versionsPath.Index(i).Child("name"), v.Name, strings.Join(msgs, ",")))
		}
		errs = append(errs, validateVersion(view, i, opts, versionsPath.Index(i))...)
	}
	if !unique {
		errs = append(errs, field.Invalid(versionsPath, view.internalVersions(), "must contain unique version names"))
	}
	if storageVersions != 1 {
		errs = append(errs, field.Invalid(versionsPath, view.internalVersions(), "must have exactly one version marked as storage version"))
	}
	// kube's internal spec.version is the first version's name and is
	// checked once more under its own path.
	if top := view.topVersion(); top != "" {
		if msgs := validation.IsDNS1035Label(top); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fldPath.Child("version"), top, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// validateVersion validates version i's own fields.
func validateVersion(view specView, i int, opts options, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	v := &view.spec.Versions[i]
	for _, msg := range validateDeprecationWarning(v.Deprecated, v.DeprecationWarning) {
		errs = append(errs, field.Invalid(fldPath.Child("deprecationWarning"), v.DeprecationWarning, msg))
	}
	statusEnabled := v.Subresources != nil && v.Subresources.Status != nil
	errs = append(errs, validateSchema(view.versionSchema(i), statusEnabled, opts.schema.forVersion(v.Name), fldPath.Child("schema"))...)
	errs = append(errs, ValidateSubresources(view.versionSubresources(i), fldPath.Child("subresources"))...)
	columns := view.versionColumns(i)
	for j := range columns {
		errs = append(errs, ValidatePrinterColumn(&columns[j], fldPath.Child("additionalPrinterColumns").Index(j))...)
	}
	if fields := view.versionSelectable(i); len(fields) > 0 {
		// As in kube, a schema shared by all versions does not count here.
		if s := view.versionSchema(i); s == nil || s.OpenAPIV3Schema == nil {
			errs = append(errs, field.Invalid(fldPath.Child("selectableFields"), "", "may only be set when `version.schema.openAPIV3Schema` is not included"))
		} else {
			errs = append(errs, validateSelectableFields(fields, s.OpenAPIV3Schema, fldPath.Child("schema.openAPIV3Schema"), fldPath.Child("selectableFields"), opts.allowTooManySelectableFields[v.Name])...)
		}
	}
	return errs
}

func validateDeprecationWarning(deprecated bool, warning *string) []string {
	if !deprecated && warning != nil {
		return []string{"can only be set for deprecated versions"}
	}
	if warning == nil {
		return nil
	}
	var msgs []string
	if len(*warning) > 256 {
		msgs = append(msgs, "must be <= 256 characters long")
	}
	if len(*warning) == 0 {
		msgs = append(msgs, "must not be an empty string")
	}
	for i, r := range *warning {
		if !unicode.IsPrint(r) {
			msgs = append(msgs, fmt.Sprintf("must only contain printable UTF-8 characters; non-printable character found at index %d", i))
			break
		}
		if unicode.IsControl(r) {
			msgs = append(msgs, fmt.Sprintf("must only contain printable UTF-8 characters; control character found at index %d", i))
			break
		}
	}
	if !utf8.ValidString(*warning) {
		msgs = append(msgs, "must only contain printable UTF-8 characters")
	}
	return msgs
}

// ValidateNames validates the formats of names, in the spec or as
// accepted in the status; emptiness is the caller's.
func ValidateNames(names *apiextv1.CustomResourceDefinitionNames, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	label := func(name, value string) {
		if value == "" {
			return
		}
		if msgs := validation.IsDNS1035Label(value); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fldPath.Child(name), value, strings.Join(msgs, ",")))
		}
	}
	mixedCase := func(name, value string) {
		if value == "" {
			return
		}
		if msgs := validation.IsDNS1035Label(strings.ToLower(value)); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fldPath.Child(name), value, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
		}
	}
	label("plural", names.Plural)
	label("singular", names.Singular)
	mixedCase("kind", names.Kind)
	mixedCase("listKind", names.ListKind)
	for i, s := range names.ShortNames {
		if msgs := validation.IsDNS1035Label(s); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fldPath.Child("shortNames").Index(i), s, strings.Join(msgs, ",")))
		}
	}
	if names.Kind != "" && names.Kind == names.ListKind {
		errs = append(errs, field.Invalid(fldPath.Child("listKind"), names.ListKind, "kind and listKind may not be the same"))
	}
	for i, c := range names.Categories {
		if msgs := validation.IsDNS1035Label(c); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fldPath.Child("categories").Index(i), c, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// ValidateSubresources validates the scale subresource's paths: replicas
// under .spec, status replicas under .status, the label selector under
// either. As in kube, the paths are not looked up in the schema.
func ValidateSubresources(sub *apiextv1.CustomResourceSubresources, fldPath *field.Path) field.ErrorList {
	if sub == nil || sub.Scale == nil {
		return nil
	}
	var errs field.ErrorList
	scale := sub.Scale
	under := func(name, value, msg string, prefixes ...string) {
		p := fldPath.Child("scale." + name)
		if e := validateSimpleJSONPath(value, p); len(e) > 0 {
			errs = append(errs, e...)
			return
		}
		for _, prefix := range prefixes {
			if strings.HasPrefix(value, prefix) {
				return
			}
		}
		errs = append(errs, field.Invalid(p, value, msg))
	}
	if scale.SpecReplicasPath == "" {
		errs = append(errs, field.Required(fldPath.Child("scale.specReplicasPath"), ""))
	} else {
		under("specReplicasPath", scale.SpecReplicasPath, "should be a json path under .spec", ".spec.")
	}
	if scale.StatusReplicasPath == "" {
		errs = append(errs, field.Required(fldPath.Child("scale.statusReplicasPath"), ""))
	} else {
		under("statusReplicasPath", scale.StatusReplicasPath, "should be a json path under .status", ".status.")
	}
	if scale.LabelSelectorPath != nil && *scale.LabelSelectorPath != "" {
		under("labelSelectorPath", *scale.LabelSelectorPath, "should be a json path under either .spec or .status", ".spec.", ".status.")
	}
	return errs
}

// validateSimpleJSONPath accepts a path of the form .a.b.c, as kube does
// (only the leading dot is really checked).
func validateSimpleJSONPath(s string, fldPath *field.Path) field.ErrorList {
	switch {
	case s == "":
		return field.ErrorList{field.Invalid(fldPath, s, "must not be empty")}
	case s[0] != '.':
		return field.ErrorList{field.Invalid(fldPath, s, "must be a simple json path starting with .")}
	}
	return nil
}

// ValidatePrinterColumn validates one additionalPrinterColumns entry. As
// in kube, the error path of jsonPath is spelled JSONPath.
func ValidatePrinterColumn(col *apiextv1.CustomResourceColumnDefinition, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if col.Name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	}
	typesMsg := "must be one of " + strings.Join(printerColumnTypes, ",")
	switch {
	case col.Type == "":
		errs = append(errs, field.Required(fldPath.Child("type"), typesMsg))
	case !sets.New(printerColumnTypes...).Has(col.Type):
		errs = append(errs, field.Invalid(fldPath.Child("type"), col.Type, typesMsg))
	}
	if col.Format != "" && !sets.New(printerColumnFormats...).Has(col.Format) {
		errs = append(errs, field.Invalid(fldPath.Child("format"), col.Format, "must be one of "+strings.Join(printerColumnFormats, ",")))
	}
	if col.JSONPath == "" {
		errs = append(errs, field.Required(fldPath.Child("JSONPath"), ""))
	} else {
		errs = append(errs, validateSimpleJSONPath(col.JSONPath, fldPath.Child("JSONPath"))...)
	}
	return errs
}

// reviewVersions are the conversionReviewVersions of a conversion.
func reviewVersions(c *apiextv1.CustomResourceConversion) []string {
	if c == nil || c.Webhook == nil {
		return nil
	}
	return c.Webhook.ConversionReviewVersions
}

// validOrNoConversionReviewVersions reports whether versions is empty or
// holds a version the server can send.
func validOrNoConversionReviewVersions(versions []string) bool {
	if len(versions) == 0 {
		return true
	}
	for _, v := range versions {
		if sets.New(conversionReviewVersions...).Has(v) {
			return true
		}
	}
	return false
}

// validateConversion validates spec.conversion. The paths are kube's
// internal ones: spec.conversion.webhookClientConfig and
// spec.conversion.conversionReviewVersions, for v1's webhook.clientConfig
// and webhook.conversionReviewVersions.
func validateConversion(c *apiextv1.CustomResourceConversion, opts options, fldPath *field.Path) field.ErrorList {
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	switch c.Strategy {
	case "":
		errs = append(errs, field.Required(fldPath.Child("strategy"), ""))
	case apiextv1.NoneConverter, apiextv1.WebhookConverter:
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("strategy"), c.Strategy, []string{string(apiextv1.NoneConverter), string(apiextv1.WebhookConverter)}))
	}
	var cc *apiextv1.WebhookClientConfig
	if c.Webhook != nil {
		cc = c.Webhook.ClientConfig
	}
	versions := reviewVersions(c)
	ccPath := fldPath.Child("webhookClientConfig")
	if c.Strategy != apiextv1.WebhookConverter {
		if cc != nil {
			errs = append(errs, field.Forbidden(ccPath, "should not be set when strategy is not set to Webhook"))
		}
		if len(versions) > 0 {
			errs = append(errs, field.Forbidden(fldPath.Child("conversionReviewVersions"), "should not be set when strategy is not set to Webhook"))
		}
		return errs
	}
	if cc == nil {
		errs = append(errs, field.Required(ccPath, "required when strategy is set to Webhook"))
	} else {
		switch {
		case (cc.URL == nil) == (cc.Service == nil):
			errs = append(errs, field.Required(ccPath, "exactly one of url or service is required"))
		case cc.URL != nil:
			errs = append(errs, ValidateWebhookURL(ccPath.Child("url"), *cc.URL)...)
		default:
			var port int32
			if cc.Service.Port != nil {
				port = *cc.Service.Port
			}
			errs = append(errs, ValidateWebhookService(ccPath.Child("service"), cc.Service.Namespace, cc.Service.Name, cc.Service.Path, port)...)
		}
		if len(cc.CABundle) > 0 && !opts.allowInvalidCABundle {
			errs = append(errs, ValidateCABundle(ccPath.Child("caBundle"), cc.CABundle)...)
		}
	}
	return append(errs, validateConversionReviewVersions(versions, opts.requireRecognizedConversionReviewVersion, fldPath.Child("conversionReviewVersions"))...)
}

func validateConversionReviewVersions(versions []string, requireRecognized bool, fldPath *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	recognized := false
	for i, v := range versions {
		if seen[v] {
			errs = append(errs, field.Invalid(fldPath.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range validation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(fldPath.Index(i), v, msg))
		}
		if sets.New(conversionReviewVersions...).Has(v) {
			recognized = true
		}
	}
	if requireRecognized && !recognized {
		errs = append(errs, field.Invalid(fldPath, versions, "must include at least one of "+strings.Join(conversionReviewVersions, ", ")))
	}
	return errs
}

// allowInvalidCABundle: a bad caBundle may stay on an update when the old
// one was bad too, or while the CRD is not established.
func allowInvalidCABundle(old *apiextv1.CustomResourceDefinition) bool {
	if !IsEstablished(old) {
		return true
	}
	c := old.Spec.Conversion
	if c == nil || c.Webhook == nil || c.Webhook.ClientConfig == nil || len(c.Webhook.ClientConfig.CABundle) == 0 {
		return false
	}
	return len(ValidateCABundle(field.NewPath("caBundle"), c.Webhook.ClientConfig.CABundle)) > 0
}

// tooManySelectableFieldsAllowed lists the selectable field lists of the
// update that may stay above the maximum: those that already were and did
// not change.
func tooManySelectableFieldsAllowed(spec, oldSpec *apiextv1.CustomResourceDefinitionSpec) map[string]bool {
	allowed := map[string]bool{}
	view, oldView := newSpecView(spec), newSpecView(oldSpec)
	if len(oldView.topSelectable()) > MaxSelectableFields && apiequality.Semantic.DeepEqual(view.topSelectable(), oldView.topSelectable()) {
		allowed[""] = true
	}
	for i, v := range spec.Versions {
		for j, o := range oldSpec.Versions {
			if o.Name != v.Name {
				continue
			}
			old := oldView.versionSelectable(j)
			if len(old) > MaxSelectableFields && apiequality.Semantic.DeepEqual(view.versionSelectable(i), old) {
				allowed[v.Name] = true
			}
			break
		}
	}
	return allowed
}

// validateAPIApproval requires the api-approved.kubernetes.io annotation on
// CRDs of protected groups, unless an update leaves its state unchanged.
func validateAPIApproval(crd, old *apiextv1.CustomResourceDefinition) field.ErrorList {
	if !IsProtectedCommunityGroup(crd.Spec.Group) {
		return nil
	}
	state, reason := GetAPIApprovalState(crd.Annotations)
	if old != nil {
		if oldState, _ := GetAPIApprovalState(old.Annotations); oldState == state {
			return nil
		}
	}
	p := field.NewPath("metadata", "annotations").Key(apiextv1.KubeAPIApprovedAnnotation)
	switch state {
	case APIApproved, APIApprovalBypassed:
		return nil
	case APIApprovalMissing:
		return field.ErrorList{field.Required(p, reason)}
	default:
		return field.ErrorList{field.Invalid(p, crd.Annotations[apiextv1.KubeAPIApprovedAnnotation], reason)}
	}
}

// validatePreserveUnknownFields forbids spec.preserveUnknownFields=true,
// unless the old CRD had it.
func validatePreserveUnknownFields(crd, old *apiextv1.CustomResourceDefinition) field.ErrorList {
	if old != nil && old.Spec.PreserveUnknownFields {
		return nil
	}
	if crd.Spec.PreserveUnknownFields {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "preserveUnknownFields"), true, "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead")}
	}
	return nil
}
