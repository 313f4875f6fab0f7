// Package plugins is the set of admission plugins kube-apiserver knows: their
// names in kube's fixed order, which are on by default, the selection the
// flags make, the AdmissionConfiguration file that configures them, and the
// Registry that builds the chain from the plugins capstan implements.
package plugins

import "slices"

// The names of kube-apiserver v1.37.2's admission plugins, in the order a
// chain runs them whatever order the flags name them in (kube's
// AllOrderedPlugins): webhooks, policies and ResourceQuota last, so that
// quota is charged for the object as the other plugins left it.
var Ordered = []string{
	"AlwaysAdmit",
	"NamespaceAutoProvision",
	"NamespaceLifecycle",
	"NamespaceExists",
	"LimitPodHardAntiAffinityTopology",
	"LimitRanger",
	"ServiceAccount",
	"NodeRestriction",
	"TaintNodesByCondition",
	"AlwaysPullImages",
	"ImagePolicyWebhook",
	"PodSecurity",
	"PodNodeSelector",
	"Priority",
	"DefaultTolerationSeconds",
	"PodTolerationRestriction",
	"EventRateLimit",
	"ExtendedResourceToleration",
	"DefaultStorageClass",
	"StorageObjectInUseProtection",
	"PodGroupProtection",
	"OwnerReferencesPermissionEnforcement",
	"PersistentVolumeClaimResize",
	"RuntimeClass",
	"CertificateApproval",
	"CertificateSigning",
	"ClusterTrustBundleAttest",
	"CertificateSubjectRestriction",
	"DefaultIngressClass",
	"DenyServiceExternalIPs",
	"PodTopologyLabels",
	"NodeDeclaredFeatureValidator",
	"PodResizeValidator",
	"MutatingAdmissionPolicy",
	"MutatingAdmissionWebhook",
	"ValidatingAdmissionPolicy",
	"ValidatingAdmissionWebhook",
	"ResourceQuota",
	"AlwaysDeny",
}

// defaultOn are the plugins kube-apiserver runs when no flag names them.
var defaultOn = map[string]bool{
	"NamespaceLifecycle":            true,
	"LimitRanger":                   true,
	"ServiceAccount":                true,
	"DefaultStorageClass":           true,
	"PersistentVolumeClaimResize":   true,
	"DefaultTolerationSeconds":      true,
	"MutatingAdmissionWebhook":      true,
	"ValidatingAdmissionWebhook":    true,
	"ResourceQuota":                 true,
	"StorageObjectInUseProtection":  true,
	"PodGroupProtection":            true,
	"Priority":                      true,
	"TaintNodesByCondition":         true,
	"RuntimeClass":                  true,
	"CertificateApproval":           true,
	"CertificateSigning":            true,
	"ClusterTrustBundleAttest":      true,
	"CertificateSubjectRestriction": true,
	"DefaultIngressClass":           true,
	"PodSecurity":                   true,
	"PodTopologyLabels":             true,
	"MutatingAdmissionPolicy":       true,
	"ValidatingAdmissionPolicy":     true,
	"NodeDeclaredFeatureValidator":  true,
	"PodResizeValidator":            true,
}

// Known reports whether kube-apiserver has a plugin of this name.
func Known(name string) bool { return slices.Contains(Ordered, name) }

// DefaultOn reports whether kube-apiserver runs the plugin by default.
func DefaultOn(name string) bool { return defaultOn[name] }

// DefaultEnabled is kube's default-on set, in order.
func DefaultEnabled() []string {
	var names []string
	for _, n := range Ordered {
		if defaultOn[n] {
			names = append(names, n)
		}
	}
	return names
}
