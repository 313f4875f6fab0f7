package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// ConversionStrategyType names how custom resources are converted between
// the versions of their definition.
type ConversionStrategyType string

const (
	// KubeAPIApprovedAnnotation must be set on a definition whose group is
	// k8s.io, kubernetes.io or a subdomain of either. Its value is a link to
	// the approval of the API, or a string starting with "unapproved".
	KubeAPIApprovedAnnotation = "api-approved.kubernetes.io"

	// NoneConverter rewrites only the apiVersion of a custom resource.
	NoneConverter ConversionStrategyType = "None"
	// WebhookConverter sends custom resources to a webhook for conversion.
	WebhookConverter ConversionStrategyType = "Webhook"
)

// CustomResourceDefinitionSpec is the desired shape of a custom resource.
type CustomResourceDefinitionSpec struct {
	// group is the API group the custom resources are served in, under
	// `/apis/<group>/...`. The definition's name must be `<names.plural>.<group>`.
	Group string `json:"group" protobuf:"bytes,1,opt,name=group"`
	// names are the resource and kind names of the custom resource.
	Names CustomResourceDefinitionNames `json:"names" protobuf:"bytes,3,opt,name=names"`
	// scope says whether the custom resources live in namespaces
	// (`Namespaced`) or not (`Cluster`).
	Scope ResourceScope `json:"scope" protobuf:"bytes,4,opt,name=scope,casttype=ResourceScope"`
	// versions lists every API version of the custom resource. Discovery
	// orders served versions by name: Kubernetes-style names (v<major>, then
	// optionally alpha or beta and a minor number) come first, GA before beta
	// before alpha, higher numbers first; other names follow in lexical order.
	// +listType=atomic
	Versions []CustomResourceDefinitionVersion `json:"versions" protobuf:"bytes,7,rep,name=versions"`

	// conversion configures how custom resources change version.
	// +optional
	Conversion *CustomResourceConversion `json:"conversion,omitempty" protobuf:"bytes,9,opt,name=conversion"`

	// preserveUnknownFields keeps fields the schema does not declare when
	// objects are stored. apiVersion, kind and metadata are kept regardless.
	// Deprecated: set `x-kubernetes-preserve-unknown-fields: true` in the
	// schema of spec.versions[*] instead.
	// +optional
	PreserveUnknownFields bool `json:"preserveUnknownFields,omitempty" protobuf:"varint,10,opt,name=preserveUnknownFields"`
}

// CustomResourceConversion configures conversion between the versions of a
// custom resource.
type CustomResourceConversion struct {
	// strategy is `None` (only apiVersion changes) or `Webhook` (an external
	// webhook converts; needs spec.conversion.webhook and
	// spec.preserveUnknownFields false).
	Strategy ConversionStrategyType `json:"strategy" protobuf:"bytes,1,name=strategy"`

	// webhook says how to call the conversion webhook. Required when strategy
	// is `Webhook`.
	// +optional
	Webhook *WebhookConversion `json:"webhook,omitempty" protobuf:"bytes,2,opt,name=webhook"`
}

// WebhookConversion says how to call a conversion webhook.
type WebhookConversion struct {
	// clientConfig says where the webhook is and how to trust it, when
	// strategy is `Webhook`.
	// +optional
	ClientConfig *WebhookClientConfig `json:"clientConfig,omitempty" protobuf:"bytes,2,name=clientConfig"`

	// conversionReviewVersions lists the ConversionReview versions the
	// webhook understands, most preferred first. The server sends the first
	// one it supports; if it supports none, conversion fails.
	// +listType=atomic
	ConversionReviewVersions []string `json:"conversionReviewVersions" protobuf:"bytes,3,rep,name=conversionReviewVersions"`
}

// WebhookClientConfig locates a webhook and holds what is needed to open a
// TLS connection to it.
type WebhookClientConfig struct {
	// url is the webhook's address, `https://host:port/path`. Exactly one of
	// url and service is set. The host should not be an in-cluster service
	// (use service for those) and localhost is only safe when every API
	// server runs the webhook. User info, query and fragment are not allowed.
	// +optional
	URL *string `json:"url,omitempty" protobuf:"bytes,3,opt,name=url"`

	// service names the in-cluster Service of the webhook. Exactly one of
	// url and service is set.
	// +optional
	Service *ServiceReference `json:"service,omitempty" protobuf:"bytes,1,opt,name=service"`

	// caBundle is the PEM encoded CA bundle that verifies the webhook's
	// serving certificate. The system roots are used when it is empty.
	// +optional
	CABundle []byte `json:"caBundle,omitempty" protobuf:"bytes,2,opt,name=caBundle"`
}

// ServiceReference points at a Service by namespace and name.
type ServiceReference struct {
	// namespace of the Service. Required.
	Namespace string `json:"namespace" protobuf:"bytes,1,opt,name=namespace"`
	// name of the Service. Required.
	Name string `json:"name" protobuf:"bytes,2,opt,name=name"`

	// path is the URL path the webhook is called at.
	// +optional
	Path *string `json:"path,omitempty" protobuf:"bytes,3,opt,name=path"`

	// port of the Service the webhook is called at, 1 to 65535. Defaults to 443.
	// +optional
	Port *int32 `json:"port,omitempty" protobuf:"varint,4,opt,name=port"`
}

// CustomResourceDefinitionVersion is one API version of a custom resource.
type CustomResourceDefinitionVersion struct {
	// name of the version, like `v1` or `v2beta1`. Served versions are found
	// under `/apis/<group>/<version>/...`.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// served turns the REST endpoints of this version on or off.
	Served bool `json:"served" protobuf:"varint,2,opt,name=served"`
	// storage marks the version objects are persisted in. Exactly one
	// version has it.
	Storage bool `json:"storage" protobuf:"varint,3,opt,name=storage"`
	// deprecated makes responses for this version carry a warning header.
	// Defaults to false.
	// +optional
	Deprecated bool `json:"deprecated,omitempty" protobuf:"varint,7,opt,name=deprecated"`
	// deprecationWarning replaces the default deprecation warning. Only
	// allowed when deprecated is true.
	// +optional
	DeprecationWarning *string `json:"deprecationWarning,omitempty" protobuf:"bytes,8,opt,name=deprecationWarning"`
	// schema validates, prunes and defaults objects of this version.
	// +optional
	Schema *CustomResourceValidation `json:"schema,omitempty" protobuf:"bytes,4,opt,name=schema"`
	// subresources lists the subresources (status, scale) this version serves.
	// +optional
	Subresources *CustomResourceSubresources `json:"subresources,omitempty" protobuf:"bytes,5,opt,name=subresources"`
	// additionalPrinterColumns are the extra columns of Table responses.
	// Without any, the table has a single Age column.
	// +optional
	// +listType=atomic
	AdditionalPrinterColumns []CustomResourceColumnDefinition `json:"additionalPrinterColumns,omitempty" protobuf:"bytes,6,rep,name=additionalPrinterColumns"`

	// selectableFields are the JSON paths usable in field selectors, at most 8.
	//
	// +featureGate=CustomResourceFieldSelectors
	// +optional
	// +listType=atomic
	SelectableFields []SelectableField `json:"selectableFields,omitempty" protobuf:"bytes,9,rep,name=selectableFields"`
}

// SelectableField is a field of a custom resource usable in field selectors.
type SelectableField struct {
	// jsonPath is a JSON path without array notation to a string, boolean or
	// integer field outside metadata. A missing field selects as the empty
	// string. Required.
	JSONPath string `json:"jsonPath" protobuf:"bytes,1,opt,name=jsonPath"`
}

// CustomResourceColumnDefinition is one column of server-side printing.
type CustomResourceColumnDefinition struct {
	// name is the column's header.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// type is the OpenAPI data type of the column's cells.
	Type string `json:"type" protobuf:"bytes,2,opt,name=type"`
	// format is the OpenAPI format of the cells; `name` marks the column
	// holding the resource's name.
	// +optional
	Format string `json:"format,omitempty" protobuf:"bytes,3,opt,name=format"`
	// description explains the column to people.
	// +optional
	Description string `json:"description,omitempty" protobuf:"bytes,4,opt,name=description"`
	// priority ranks the column: 0 is always shown, higher numbers may be
	// left out when space is short.
	// +optional
	Priority int32 `json:"priority,omitempty" protobuf:"bytes,5,opt,name=priority"`
	// jsonPath is the simple JSON path (array notation allowed) evaluated on
	// each object to fill the column.
	JSONPath string `json:"jsonPath" protobuf:"bytes,6,opt,name=jsonPath"`
}

// CustomResourceDefinitionNames are the names a custom resource is served under.
type CustomResourceDefinitionNames struct {
	// plural is the lowercase resource name in URLs,
	// `/apis/<group>/<version>/.../<plural>`. The definition's name must be
	// `<plural>.<group>`.
	Plural string `json:"plural" protobuf:"bytes,1,opt,name=plural"`
	// singular is the lowercase singular name. Defaults to the lowercased kind.
	// +optional
	Singular string `json:"singular,omitempty" protobuf:"bytes,2,opt,name=singular"`
	// shortNames are lowercase aliases published in discovery, for
	// `kubectl get <shortname>`.
	// +optional
	// +listType=atomic
	ShortNames []string `json:"shortNames,omitempty" protobuf:"bytes,3,opt,name=shortNames"`
	// kind is the CamelCase singular kind written in the objects' `kind`.
	Kind string `json:"kind" protobuf:"bytes,4,opt,name=kind"`
	// listKind is the kind of lists of the resource. Defaults to `<kind>List`.
	// +optional
	ListKind string `json:"listKind,omitempty" protobuf:"bytes,5,opt,name=listKind"`
	// categories are the groups of resources (like `all`) this one belongs
	// to, published in discovery, for `kubectl get <category>`.
	// +optional
	// +listType=atomic
	Categories []string `json:"categories,omitempty" protobuf:"bytes,6,rep,name=categories"`
}

// ResourceScope says whether a custom resource is namespaced.
type ResourceScope string

// The two scopes of custom resources.
const (
	ClusterScoped   ResourceScope = "Cluster"
	NamespaceScoped ResourceScope = "Namespaced"
)

// ConditionStatus is the status of a condition: True, False or Unknown.
type ConditionStatus string

// The values of ConditionStatus.
const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

// CustomResourceDefinitionConditionType is the type of a
// CustomResourceDefinitionCondition.
type CustomResourceDefinitionConditionType string

const (
	// Established is true once the resource is served: set when its names
	// were first accepted, kept until the definition is deleted.
	Established CustomResourceDefinitionConditionType = "Established"
	// NamesAccepted is true when the names conflict with no other definition
	// of the group.
	NamesAccepted CustomResourceDefinitionConditionType = "NamesAccepted"
	// NonStructuralSchema is set when a schema of the definition is not
	// structural, that is some value has no type (other than through
	// x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields), or
	// allOf, anyOf, oneOf or not carry types, defaults or extensions. Such
	// definitions get no pruning, defaulting, OpenAPI publishing or webhook
	// conversion.
	NonStructuralSchema CustomResourceDefinitionConditionType = "NonStructuralSchema"
	// Terminating is true while a deleted definition removes its custom
	// resources.
	Terminating CustomResourceDefinitionConditionType = "Terminating"
	// KubernetesAPIApprovalPolicyConformant is set on definitions in the
	// protected groups (*.k8s.io, *.kubernetes.io): true when the
	// api-approved.kubernetes.io annotation holds an approval URL.
	KubernetesAPIApprovalPolicyConformant CustomResourceDefinitionConditionType = "KubernetesAPIApprovalPolicyConformant"
	// StorageMigrating is true while stored objects are moved to another
	// storage version.
	StorageMigrating CustomResourceDefinitionConditionType = "StorageMigrating"
)

// CustomResourceDefinitionCondition is one condition of a definition's status.
type CustomResourceDefinitionCondition struct {
	// type of the condition, like Established, NamesAccepted or Terminating.
	Type CustomResourceDefinitionConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=CustomResourceDefinitionConditionType"`
	// status of the condition: True, False or Unknown.
	Status ConditionStatus `json:"status" protobuf:"bytes,2,opt,name=status,casttype=ConditionStatus"`
	// lastTransitionTime is when status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`
	// reason is a CamelCase word saying why status last changed.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	// message explains the last change to people.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
	// observedGeneration is the metadata.generation the condition was
	// computed from; a smaller value than the object's means it is stale.
	// +featureGate=CRDObservedGenerationTracking
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,6,opt,name=observedGeneration"`
}

// CustomResourceDefinitionStatus is the observed state of a definition.
type CustomResourceDefinitionStatus struct {
	// conditions of the definition, one per type.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []CustomResourceDefinitionCondition `json:"conditions" protobuf:"bytes,1,opt,name=conditions"`

	// acceptedNames are the names discovery serves, which may lag behind
	// the names of spec.
	// +optional
	AcceptedNames CustomResourceDefinitionNames `json:"acceptedNames" protobuf:"bytes,2,opt,name=acceptedNames"`

	// storedVersions are every version objects were ever persisted in. A
	// storage migration removes versions from it once no object uses them;
	// a version in this list cannot be removed from spec.versions.
	// +optional
	// +listType=atomic
	StoredVersions []string `json:"storedVersions" protobuf:"bytes,3,rep,name=storedVersions"`

	// observedGeneration is the metadata.generation the controller last acted on.
	// +featureGate=CRDObservedGenerationTracking
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,4,opt,name=observedGeneration"`
}

// CustomResourceCleanupFinalizer holds back the deletion of a definition
// until its custom resources are gone.
const CustomResourceCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CustomResourceDefinition declares a custom resource the server then
// serves. Its name is `<spec.names.plural>.<spec.group>`.
type CustomResourceDefinition struct {
	metav1.TypeMeta `json:""`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// spec is how the custom resource should be served.
	Spec CustomResourceDefinitionSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// status is how the custom resource is served.
	// +optional
	Status CustomResourceDefinitionStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CustomResourceDefinitionList is a list of CustomResourceDefinitions.
type CustomResourceDefinitionList struct {
	metav1.TypeMeta `json:""`

	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// items are the definitions.
	Items []CustomResourceDefinition `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// CustomResourceValidation holds the schema of one version.
type CustomResourceValidation struct {
	// openAPIV3Schema validates and prunes objects of the version.
	// +optional
	OpenAPIV3Schema *JSONSchemaProps `json:"openAPIV3Schema,omitempty" protobuf:"bytes,1,opt,name=openAPIV3Schema"`
}

// CustomResourceSubresources turns on the status and scale subresources.
type CustomResourceSubresources struct {
	// status serves `/status`: writes to the object then ignore `.status`,
	// and writes to `/status` ignore everything but `.status`.
	// +optional
	Status *CustomResourceSubresourceStatus `json:"status,omitempty" protobuf:"bytes,1,opt,name=status"`
	// scale serves `/scale` with autoscaling/v1 Scale objects.
	// +optional
	Scale *CustomResourceSubresourceScale `json:"scale,omitempty" protobuf:"bytes,2,opt,name=scale"`
}

// CustomResourceSubresourceStatus turns on the status subresource, which
// reads and writes the `.status` of the custom resource.
type CustomResourceSubresourceStatus struct{}

// CustomResourceSubresourceScale maps the scale subresource onto fields of
// the custom resource.
type CustomResourceSubresourceScale struct {
	// specReplicasPath is the JSON path under `.spec`, without array
	// notation, of Scale's `spec.replicas`. GET of `/scale` fails when the
	// field is missing.
	SpecReplicasPath string `json:"specReplicasPath" protobuf:"bytes,1,name=specReplicasPath"`
	// statusReplicasPath is the JSON path under `.status`, without array
	// notation, of Scale's `status.replicas`, which is 0 when the field is
	// missing.
	StatusReplicasPath string `json:"statusReplicasPath" protobuf:"bytes,2,opt,name=statusReplicasPath"`
	// labelSelectorPath is the JSON path under `.spec` or `.status`, without
	// array notation, of Scale's `status.selector`: a string field holding a
	// serialized label selector. HorizontalPodAutoscalers need it. The
	// selector is empty when the field is missing.
	// +optional
	LabelSelectorPath *string `json:"labelSelectorPath,omitempty" protobuf:"bytes,3,opt,name=labelSelectorPath"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ConversionReview carries a conversion request to a webhook and its answer back.
type ConversionReview struct {
	metav1.TypeMeta `json:""`
	// request is what to convert.
	// +optional
	Request *ConversionRequest `json:"request,omitempty" protobuf:"bytes,1,opt,name=request"`
	// response is the webhook's answer.
	// +optional
	Response *ConversionResponse `json:"response,omitempty" protobuf:"bytes,2,opt,name=response"`
}

// ConversionRequest asks a webhook to convert objects.
type ConversionRequest struct {
	// uid identifies this request and its response (not the user's request),
	// for matching them up in logs.
	UID types.UID `json:"uid" protobuf:"bytes,1,name=uid"`
	// desiredAPIVersion is the apiVersion to convert to, like "example.com/v1".
	DesiredAPIVersion string `json:"desiredAPIVersion" protobuf:"bytes,2,name=desiredAPIVersion"`
	// objects are the custom resources to convert.
	// +listType=atomic
	Objects []runtime.RawExtension `json:"objects" protobuf:"bytes,3,rep,name=objects"`
}

// ConversionResponse is a webhook's answer to a ConversionRequest.
type ConversionResponse struct {
	// uid is the request's uid, copied.
	UID types.UID `json:"uid" protobuf:"bytes,1,name=uid"`
	// convertedObjects are request.objects converted to
	// request.desiredAPIVersion, in the same order and number, when result
	// is a success; otherwise empty. Only labels and annotations may change
	// in metadata; other metadata changes are dropped.
	// +listType=atomic
	ConvertedObjects []runtime.RawExtension `json:"convertedObjects" protobuf:"bytes,2,rep,name=convertedObjects"`
	// result says whether conversion worked: result.status is `Success`, or
	// `Failure` with result.message explaining why (with HTTP status 200).
	Result metav1.Status `json:"result" protobuf:"bytes,3,name=result"`
}
