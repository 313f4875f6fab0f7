package v1

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// kube-apiserver defaults v1 CustomResourceDefinitions as written below.
// capstan applies defaults through a resource's strategy rather than
// through Scheme.Default, so the CRD strategy calls
// SetObjectDefaults_CustomResourceDefinition; the functions are also
// registered with the Scheme, for code that does call Scheme.Default.

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	scheme.AddTypeDefaultingFunc(&CustomResourceDefinition{}, func(obj any) {
		SetObjectDefaults_CustomResourceDefinition(obj.(*CustomResourceDefinition))
	})
	scheme.AddTypeDefaultingFunc(&CustomResourceDefinitionList{}, func(obj any) {
		SetObjectDefaults_CustomResourceDefinitionList(obj.(*CustomResourceDefinitionList))
	})
	return nil
}

// SetObjectDefaults_CustomResourceDefinition applies every default of a
// CustomResourceDefinition: its spec's, the storage version recorded in
// status.storedVersions, and port 443 of a conversion webhook's Service.
func SetObjectDefaults_CustomResourceDefinition(in *CustomResourceDefinition) {
	SetDefaults_CustomResourceDefinition(in)
	if conv := in.Spec.Conversion; conv != nil && conv.Webhook != nil &&
		conv.Webhook.ClientConfig != nil && conv.Webhook.ClientConfig.Service != nil {
		SetDefaults_ServiceReference(conv.Webhook.ClientConfig.Service)
	}
}

// SetObjectDefaults_CustomResourceDefinitionList defaults every item.
func SetObjectDefaults_CustomResourceDefinitionList(in *CustomResourceDefinitionList) {
	for i := range in.Items {
		SetObjectDefaults_CustomResourceDefinition(&in.Items[i])
	}
}

// SetDefaults_CustomResourceDefinition defaults the spec and, when
// status.storedVersions is empty, records the first version marked for
// storage in it.
func SetDefaults_CustomResourceDefinition(obj *CustomResourceDefinition) {
	SetDefaults_CustomResourceDefinitionSpec(&obj.Spec)
	if len(obj.Status.StoredVersions) > 0 {
		return
	}
	for _, v := range obj.Spec.Versions {
		if v.Storage {
			obj.Status.StoredVersions = append(obj.Status.StoredVersions, v.Name)
			return
		}
	}
}

// SetDefaults_CustomResourceDefinitionSpec fills names.singular (the
// lowercased kind), names.listKind (kind + "List", when there is a kind)
// and a conversion with strategy None when there is none.
func SetDefaults_CustomResourceDefinitionSpec(obj *CustomResourceDefinitionSpec) {
	if obj.Names.Singular == "" {
		obj.Names.Singular = strings.ToLower(obj.Names.Kind)
	}
	if obj.Names.ListKind == "" && obj.Names.Kind != "" {
		obj.Names.ListKind = obj.Names.Kind + "List"
	}
	if obj.Conversion == nil {
		obj.Conversion = &CustomResourceConversion{Strategy: NoneConverter}
	}
}

// SetDefaults_ServiceReference defaults the port of a webhook Service to 443.
func SetDefaults_ServiceReference(obj *ServiceReference) {
	if obj.Port == nil {
		port := int32(443)
		obj.Port = &port
	}
}
