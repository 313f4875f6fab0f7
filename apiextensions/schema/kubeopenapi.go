package schema

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// specMode says what a Structural -> spec.Schema conversion is for.
type specMode int

const (
	// rawSpec keeps the schema as written (kube's ToKubeOpenAPI): used
	// to validate defaults and as the base of the published models.
	rawSpec specMode = iota
	// validationSpec is what kube validates custom resources with (its
	// conversion of the CRD's JSONSchemaProps): int-or-string nodes get
	// the types integer and string, formats kube does not support are
	// dropped, and nested additionalProperties are kept.
	validationSpec
)

func formatOf(s *Structural) string {
	if s.ValueValidation != nil && s.ValueValidation.Format != "" {
		return s.ValueValidation.Format
	}
	return s.Format
}

func (s *Structural) toSpec(mode specMode) *spec.Schema {
	if s == nil {
		return nil
	}
	out := &spec.Schema{}
	if s.Items != nil {
		out.Items = &spec.SchemaOrArray{Schema: s.Items.toSpec(mode)}
	}
	if s.Properties != nil {
		out.Properties = make(map[string]spec.Schema, len(s.Properties))
		for k, v := range s.Properties {
			out.Properties[k] = *v.toSpec(mode)
		}
	}
	switch {
	case s.AdditionalProperties != nil:
		out.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: s.AdditionalProperties.toSpec(mode)}
	case s.AdditionalPropertiesAllowed:
		out.AdditionalProperties = &spec.SchemaOrBool{Allows: true}
	case s.AdditionalPropertiesDisallowed:
		out.AdditionalProperties = &spec.SchemaOrBool{Allows: false}
	}
	genericToSpec(&Generic{
		Type: s.Type, Title: s.Title, Description: s.Description, Nullable: s.Nullable,
		Default: s.Default, Example: s.Example, ExternalDocs: s.ExternalDocs,
	}, out)
	extensionsToSpec(&Extensions{
		XPreserveUnknownFields: s.XPreserveUnknownFields, XEmbeddedResource: s.XEmbeddedResource,
		XIntOrString: s.XIntOrString, XListMapKeys: s.XListMapKeys, XListType: s.XListType, XMapType: s.XMapType,
	}, out)
	if s.ValueValidation != nil {
		s.ValueValidation.toSpec(out, mode)
	} else if s.Format != "" {
		out.Format = s.Format
	}
	if len(s.XValidations) > 0 {
		out.AddExtension("x-kubernetes-validations", s.XValidations)
	}
	if mode == validationSpec {
		if s.XIntOrString {
			out.Type = spec.StringOrArray{"integer", "string"}
		}
		stripUnsupportedFormat(out)
	}
	return out
}

func genericToSpec(g *Generic, out *spec.Schema) {
	if len(g.Type) != 0 {
		out.Type = spec.StringOrArray{g.Type}
	}
	out.Nullable = g.Nullable
	out.Description = g.Description
	out.Title = g.Title
	out.Default = g.Default
	if g.ExternalDocs != nil {
		out.ExternalDocs = &spec.ExternalDocumentation{Description: g.ExternalDocs.Description, URL: g.ExternalDocs.URL}
	}
	out.Example = g.Example
}

func extensionsToSpec(x *Extensions, out *spec.Schema) {
	if x.XPreserveUnknownFields {
		out.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	}
	if x.XEmbeddedResource {
		out.AddExtension("x-kubernetes-embedded-resource", true)
	}
	if x.XIntOrString {
		out.AddExtension("x-kubernetes-int-or-string", true)
	}
	if len(x.XListMapKeys) > 0 {
		out.AddExtension("x-kubernetes-list-map-keys", x.XListMapKeys)
	}
	if x.XListType != "" {
		out.AddExtension("x-kubernetes-list-type", x.XListType)
	}
	if x.XMapType != "" {
		out.AddExtension("x-kubernetes-map-type", x.XMapType)
	}
}

func (v *ValueValidation) toSpec(out *spec.Schema, mode specMode) {
	out.Format = v.Format
	out.Maximum = v.Maximum
	out.ExclusiveMaximum = v.ExclusiveMaximum
	out.Minimum = v.Minimum
	out.ExclusiveMinimum = v.ExclusiveMinimum
	out.MaxLength = v.MaxLength
	out.MinLength = v.MinLength
	out.Pattern = v.Pattern
	out.MaxItems = v.MaxItems
	out.MinItems = v.MinItems
	out.UniqueItems = v.UniqueItems
	out.MultipleOf = v.MultipleOf
	if v.Enum != nil {
		out.Enum = make([]any, len(v.Enum))
		copy(out.Enum, v.Enum)
	}
	out.MaxProperties = v.MaxProperties
	out.MinProperties = v.MinProperties
	out.Required = v.Required
	for i := range v.AllOf {
		out.AllOf = append(out.AllOf, *v.AllOf[i].toSpec(mode))
	}
	for i := range v.AnyOf {
		out.AnyOf = append(out.AnyOf, *v.AnyOf[i].toSpec(mode))
	}
	for i := range v.OneOf {
		out.OneOf = append(out.OneOf, *v.OneOf[i].toSpec(mode))
	}
	out.Not = v.Not.toSpec(mode)
}

func (v *NestedValueValidation) toSpec(mode specMode) *spec.Schema {
	if v == nil {
		return nil
	}
	out := &spec.Schema{}
	v.ValueValidation.toSpec(out, mode)
	if len(v.XValidations) > 0 {
		out.AddExtension("x-kubernetes-validations", v.XValidations)
	}
	if v.Items != nil {
		out.Items = &spec.SchemaOrArray{Schema: v.Items.toSpec(mode)}
	}
	if v.Properties != nil {
		out.Properties = make(map[string]spec.Schema, len(v.Properties))
		for k, p := range v.Properties {
			out.Properties[k] = *p.toSpec(mode)
		}
	}
	// The int-or-string pattern lives here; in valid schemas nothing else.
	genericToSpec(&v.ForbiddenGenerics, out)
	extensionsToSpec(&v.ForbiddenExtensions, out)
	if mode == validationSpec {
		if v.AdditionalProperties != nil {
			out.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: v.AdditionalProperties.toSpec(mode)}
		} else if v.AdditionalPropertiesDisallowed {
			out.AdditionalProperties = &spec.SchemaOrBool{Allows: false}
		}
		if v.ForbiddenExtensions.XIntOrString {
			out.Type = spec.StringOrArray{"integer", "string"}
		}
		stripUnsupportedFormat(out)
	}
	return out
}

// supportedStringFormats are the string formats kube validates custom
// resources with (as of 1.34 and later), with "-" removed as kube-openapi
// normalizes format names. Other formats are not checked at all.
var supportedStringFormats = sets.New(
	"bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac",
	"uuid", "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard",
	"ssn", "hexcolor", "rgbcolor", "byte", "password", "date", "duration", "datetime",
	"k8sshortname", "k8slongname",
)

// unsupportedFormat tells whether kube ignores format on a node of type
// typ ("" when it has none or several types).
func unsupportedFormat(typ, format string) bool {
	if format == "" {
		return false
	}
	switch typ {
	case "", "string":
		return !supportedStringFormats.Has(strings.ReplaceAll(format, "-", ""))
	case "integer":
		return format != "int32" && format != "int64"
	case "number":
		return format != "float" && format != "double"
	default:
		return true
	}
}

func stripUnsupportedFormat(s *spec.Schema) {
	typ := ""
	if len(s.Type) == 1 {
		typ = s.Type[0]
	}
	if unsupportedFormat(typ, s.Format) {
		s.Format = ""
	}
}
