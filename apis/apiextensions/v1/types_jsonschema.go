package v1

// FieldValueErrorReason is the machine-readable reason a validation rule
// reports when it fails.
// +enum
type FieldValueErrorReason string

const (
	// FieldValueRequired reports a missing value (empty string, null, empty list).
	FieldValueRequired FieldValueErrorReason = "FieldValueRequired"
	// FieldValueDuplicate reports a value that must be unique and is not.
	FieldValueDuplicate FieldValueErrorReason = "FieldValueDuplicate"
	// FieldValueInvalid reports a malformed or out-of-range value.
	FieldValueInvalid FieldValueErrorReason = "FieldValueInvalid"
	// FieldValueForbidden reports a well-formed value that is not allowed here.
	FieldValueForbidden FieldValueErrorReason = "FieldValueForbidden"
)

// JSONSchemaProps is a JSON schema (draft 4, as OpenAPI v3 uses it) with
// Kubernetes' x-kubernetes-* extensions.
type JSONSchemaProps struct {
	ID          string        `json:"id,omitempty" protobuf:"bytes,1,opt,name=id"`
	Schema      JSONSchemaURL `json:"$schema,omitempty" protobuf:"bytes,2,opt,name=schema"`
	Ref         *string       `json:"$ref,omitempty" protobuf:"bytes,3,opt,name=ref"`
	Description string        `json:"description,omitempty" protobuf:"bytes,4,opt,name=description"`
	Type        string        `json:"type,omitempty" protobuf:"bytes,5,opt,name=type"`

	// format is an OpenAPI v3 format. Unknown formats are accepted and not
	// checked. Checked ones: bsonobjectid, uri, email, hostname, ipv4, ipv6,
	// cidr, mac, uuid, uuid3, uuid4, uuid5, isbn, isbn10, isbn13, creditcard,
	// ssn, hexcolor, rgbcolor, byte (base64), password, date (RFC 3339
	// full-date), duration (Go or Scala style) and datetime (RFC 3339 date-time).
	Format string `json:"format,omitempty" protobuf:"bytes,6,opt,name=format"`

	Title string `json:"title,omitempty" protobuf:"bytes,7,opt,name=title"`
	// default is the value an absent field gets. It needs
	// spec.preserveUnknownFields to be false.
	Default          *JSON    `json:"default,omitempty" protobuf:"bytes,8,opt,name=default"`
	Maximum          *float64 `json:"maximum,omitempty" protobuf:"bytes,9,opt,name=maximum"`
	ExclusiveMaximum bool     `json:"exclusiveMaximum,omitempty" protobuf:"bytes,10,opt,name=exclusiveMaximum"`
	Minimum          *float64 `json:"minimum,omitempty" protobuf:"bytes,11,opt,name=minimum"`
	ExclusiveMinimum bool     `json:"exclusiveMinimum,omitempty" protobuf:"bytes,12,opt,name=exclusiveMinimum"`
	MaxLength        *int64   `json:"maxLength,omitempty" protobuf:"bytes,13,opt,name=maxLength"`
	MinLength        *int64   `json:"minLength,omitempty" protobuf:"bytes,14,opt,name=minLength"`
	Pattern          string   `json:"pattern,omitempty" protobuf:"bytes,15,opt,name=pattern"`
	MaxItems         *int64   `json:"maxItems,omitempty" protobuf:"bytes,16,opt,name=maxItems"`
	MinItems         *int64   `json:"minItems,omitempty" protobuf:"bytes,17,opt,name=minItems"`
	UniqueItems      bool     `json:"uniqueItems,omitempty" protobuf:"bytes,18,opt,name=uniqueItems"`
	MultipleOf       *float64 `json:"multipleOf,omitempty" protobuf:"bytes,19,opt,name=multipleOf"`
	// +listType=atomic
	Enum          []JSON `json:"enum,omitempty" protobuf:"bytes,20,rep,name=enum"`
	MaxProperties *int64 `json:"maxProperties,omitempty" protobuf:"bytes,21,opt,name=maxProperties"`
	MinProperties *int64 `json:"minProperties,omitempty" protobuf:"bytes,22,opt,name=minProperties"`
	// +listType=atomic
	Required []string                `json:"required,omitempty" protobuf:"bytes,23,rep,name=required"`
	Items    *JSONSchemaPropsOrArray `json:"items,omitempty" protobuf:"bytes,24,opt,name=items"`
	// +listType=atomic
	AllOf []JSONSchemaProps `json:"allOf,omitempty" protobuf:"bytes,25,rep,name=allOf"`
	// +listType=atomic
	OneOf []JSONSchemaProps `json:"oneOf,omitempty" protobuf:"bytes,26,rep,name=oneOf"`
	// +listType=atomic
	AnyOf                []JSONSchemaProps          `json:"anyOf,omitempty" protobuf:"bytes,27,rep,name=anyOf"`
	Not                  *JSONSchemaProps           `json:"not,omitempty" protobuf:"bytes,28,opt,name=not"`
	Properties           map[string]JSONSchemaProps `json:"properties,omitempty" protobuf:"bytes,29,rep,name=properties"`
	AdditionalProperties *JSONSchemaPropsOrBool     `json:"additionalProperties,omitempty" protobuf:"bytes,30,opt,name=additionalProperties"`
	PatternProperties    map[string]JSONSchemaProps `json:"patternProperties,omitempty" protobuf:"bytes,31,rep,name=patternProperties"`
	Dependencies         JSONSchemaDependencies     `json:"dependencies,omitempty" protobuf:"bytes,32,opt,name=dependencies"`
	AdditionalItems      *JSONSchemaPropsOrBool     `json:"additionalItems,omitempty" protobuf:"bytes,33,opt,name=additionalItems"`
	Definitions          JSONSchemaDefinitions      `json:"definitions,omitempty" protobuf:"bytes,34,opt,name=definitions"`
	ExternalDocs         *ExternalDocumentation     `json:"externalDocs,omitempty" protobuf:"bytes,35,opt,name=externalDocs"`
	Example              *JSON                      `json:"example,omitempty" protobuf:"bytes,36,opt,name=example"`
	Nullable             bool                       `json:"nullable,omitempty" protobuf:"bytes,37,opt,name=nullable"`

	// x-kubernetes-preserve-unknown-fields keeps fields the schema does not
	// declare from being pruned, here and below, until a nested schema
	// declares properties or additionalProperties again. Only true or unset
	// are allowed.
	XPreserveUnknownFields *bool `json:"x-kubernetes-preserve-unknown-fields,omitempty" protobuf:"bytes,38,opt,name=xKubernetesPreserveUnknownFields"`

	// x-kubernetes-embedded-resource marks an object holding a whole
	// Kubernetes object, whose apiVersion, kind and metadata are then
	// validated. The type must be object; the rest of the embedded object
	// may be declared or preserved with x-kubernetes-preserve-unknown-fields.
	XEmbeddedResource bool `json:"x-kubernetes-embedded-resource,omitempty" protobuf:"bytes,39,opt,name=xKubernetesEmbeddedResource"`

	// x-kubernetes-int-or-string marks a value that is an integer or a
	// string. The type may then be empty, and anyOf may list the integer
	// and string types, directly or inside an allOf item.
	XIntOrString bool `json:"x-kubernetes-int-or-string,omitempty" protobuf:"bytes,40,opt,name=xKubernetesIntOrString"`

	// x-kubernetes-list-map-keys names the keys of the items of an array
	// whose x-kubernetes-list-type is `map`. Each key is a scalar property
	// of the items that is required or has a default.
	//
	// +optional
	// +listType=atomic
	XListMapKeys []string `json:"x-kubernetes-list-map-keys,omitempty" protobuf:"bytes,41,rep,name=xKubernetesListMapKeys"`

	// x-kubernetes-list-type is the topology of an array: `atomic` (replaced
	// as a whole on merge; the default), `set` (unique scalar, atomic-map or
	// atomic-list items) or `map` (object items identified by the
	// x-kubernetes-list-map-keys, order kept on merge).
	// +optional
	XListType *string `json:"x-kubernetes-list-type,omitempty" protobuf:"bytes,42,opt,name=xKubernetesListType"`

	// x-kubernetes-map-type is the topology of an object: `granular` (each
	// key owned and merged separately; the default) or `atomic` (replaced
	// as a whole on merge).
	// +optional
	XMapType *string `json:"x-kubernetes-map-type,omitempty" protobuf:"bytes,43,opt,name=xKubernetesMapType"`

	// x-kubernetes-validations are CEL rules the value must satisfy.
	// +patchMergeKey=rule
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=rule
	XValidations ValidationRules `json:"x-kubernetes-validations,omitempty" patchStrategy:"merge" patchMergeKey:"rule" protobuf:"bytes,44,rep,name=xKubernetesValidations"`
}

// ValidationRules is a list of CEL validation rules.
type ValidationRules []ValidationRule

// ValidationRule is one CEL validation rule of a schema.
type ValidationRule struct {
	// rule is the CEL expression (https://github.com/google/cel-spec) that
	// must evaluate to true. `self` is the value at the rule's place in the
	// schema: an object's declared properties are `self.field` (test with
	// `has(self.field)`; null counts as absent), a map's entries `self[key]`,
	// a list's items `self[i]`, a scalar the value itself. From the root and
	// from embedded resources, apiVersion, kind, metadata.name and
	// metadata.generateName are also visible; other metadata and preserved
	// unknown fields are not. Property names must match
	// `[a-zA-Z_.-/][a-zA-Z0-9_.-/]*` and are escaped in expressions: `__` as
	// `__underscores__`, `.` as `__dot__`, `-` as `__dash__`, `/` as
	// `__slash__`, and CEL reserved words as `__<word>__`. Lists of type set
	// or map compare without regard to order, and `+` on them unions or
	// merges. A rule using `oldSelf` is a transition rule: it runs only on
	// updates with an old value, unless optionalOldSelf is true.
	Rule string `json:"rule" protobuf:"bytes,1,opt,name=rule"`
	// message is returned when the rule fails; without one it is
	// "failed rule: <rule>". Required when the rule spans lines; must be
	// one line.
	Message string `json:"message,omitempty" protobuf:"bytes,2,opt,name=message"`
	// messageExpression is a CEL expression, with the rule's variables,
	// that computes the failure message as a string. It wins over message;
	// when it fails, or gives an empty, blank or multi-line string, the
	// message is made as if it were not set.
	// +optional
	MessageExpression string `json:"messageExpression,omitempty" protobuf:"bytes,3,opt,name=messageExpression"`
	// reason is the machine-readable reason of the failure, which also picks
	// the HTTP status of the response: FieldValueInvalid (the default),
	// FieldValueForbidden, FieldValueRequired or FieldValueDuplicate.
	// Clients should read unknown reasons as FieldValueInvalid.
	// +optional
	Reason *FieldValueErrorReason `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	// fieldPath is the field reported when the rule fails: a relative JSON
	// path from the rule's place in the schema to an existing field, like
	// `.testMap.foo` or `.testList['foo.34$']`. List indexes are not allowed.
	// +optional
	FieldPath string `json:"fieldPath,omitempty" protobuf:"bytes,5,opt,name=fieldPath"`

	// optionalOldSelf makes a transition rule run also on create and when
	// the old value is missing: `oldSelf` is then a CEL optional, tested
	// with `oldSelf.hasValue()` and read with `oldSelf.value()`. Only
	// allowed when rule uses `oldSelf`.
	//
	// +featureGate=CRDValidationRatcheting
	// +optional
	OptionalOldSelf *bool `json:"optionalOldSelf,omitempty" protobuf:"bytes,6,opt,name=optionalOldSelf"`
}

// JSON is any JSON value, kept as its raw bytes.
type JSON struct {
	Raw []byte `json:"-" protobuf:"bytes,1,opt,name=raw"`
}

// OpenAPISchemaType tells openapi-gen that JSON has no single type.
func (JSON) OpenAPISchemaType() []string { return nil }

// OpenAPISchemaFormat tells openapi-gen that JSON has no format.
func (JSON) OpenAPISchemaFormat() string { return "" }

// JSONSchemaURL is the URL of a JSON schema.
type JSONSchemaURL string

// JSONSchemaPropsOrArray is a schema or a list of schemas; on the wire it is
// the one or the other.
type JSONSchemaPropsOrArray struct {
	Schema *JSONSchemaProps `protobuf:"bytes,1,opt,name=schema"`
	// +listType=atomic
	JSONSchemas []JSONSchemaProps `protobuf:"bytes,2,rep,name=jSONSchemas"`
}

// OpenAPISchemaType tells openapi-gen that the value has no single type.
func (JSONSchemaPropsOrArray) OpenAPISchemaType() []string { return nil }

// OpenAPISchemaFormat tells openapi-gen that the value has no format.
func (JSONSchemaPropsOrArray) OpenAPISchemaFormat() string { return "" }

// JSONSchemaPropsOrBool is a schema or a boolean; on the wire it is the one
// or the other. A schema implies Allows.
type JSONSchemaPropsOrBool struct {
	Allows bool             `protobuf:"varint,1,opt,name=allows"`
	Schema *JSONSchemaProps `protobuf:"bytes,2,opt,name=schema"`
}

// OpenAPISchemaType tells openapi-gen that the value has no single type.
func (JSONSchemaPropsOrBool) OpenAPISchemaType() []string { return nil }

// OpenAPISchemaFormat tells openapi-gen that the value has no format.
func (JSONSchemaPropsOrBool) OpenAPISchemaFormat() string { return "" }

// JSONSchemaDependencies are the dependencies of a schema, by property.
type JSONSchemaDependencies map[string]JSONSchemaPropsOrStringArray

// JSONSchemaPropsOrStringArray is a schema or a list of property names; on
// the wire it is the one or the other.
type JSONSchemaPropsOrStringArray struct {
	Schema *JSONSchemaProps `protobuf:"bytes,1,opt,name=schema"`
	// +listType=atomic
	Property []string `protobuf:"bytes,2,rep,name=property"`
}

// OpenAPISchemaType tells openapi-gen that the value has no single type.
func (JSONSchemaPropsOrStringArray) OpenAPISchemaType() []string { return nil }

// OpenAPISchemaFormat tells openapi-gen that the value has no format.
func (JSONSchemaPropsOrStringArray) OpenAPISchemaFormat() string { return "" }

// JSONSchemaDefinitions are named schemas a schema may refer to.
type JSONSchemaDefinitions map[string]JSONSchemaProps

// ExternalDocumentation links to documentation elsewhere.
type ExternalDocumentation struct {
	Description string `json:"description,omitempty" protobuf:"bytes,1,opt,name=description"`
	URL         string `json:"url,omitempty" protobuf:"bytes,2,opt,name=url"`
}
