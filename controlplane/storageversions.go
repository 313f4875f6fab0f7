package controlplane

import (
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	svmv1beta1 "k8s.io/api/storagemigration/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kubeStorageVersions are the versions kube-apiserver v1.37.2 writes these
// resources to etcd at, where that is not the version capstan serves them
// at (for a beta version, its GA version). Their objects are converted to
// it on write and from any version the scheme knows on read, so that
// either server (or a kube rolled back a release) reads what the other
// wrote.
//
// Kube stores a resource that went GA in 1.37 at the beta it had in 1.36
// (its storage factory's overrides, and the rule that a version must be a
// release old before objects are written at it).
var kubeStorageVersions = map[schema.GroupResource]schema.GroupVersion{
	{Group: "certificates.k8s.io", Resource: "clustertrustbundles"}:          certificatesv1beta1.SchemeGroupVersion,
	{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}:       certificatesv1beta1.SchemeGroupVersion,
	{Group: "storagemigration.k8s.io", Resource: "storageversionmigrations"}: svmv1beta1.SchemeGroupVersion,
	{Group: "resource.k8s.io", Resource: "devicetaintrules"}:                 resourcev1beta2.SchemeGroupVersion,
	// events.k8s.io Events are core Events in etcd, so that both APIs
	// serve the same objects.
	{Group: "events.k8s.io", Resource: "events"}: corev1.SchemeGroupVersion,
	// HorizontalPodAutoscalers are stored at v2, also when served at v1.
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}: autoscalingV2,
}

// storageVersion is the version the objects of gr, built on version base
// (the served version, or a beta's GA version), are stored at.
func storageVersion(gr schema.GroupResource, base schema.GroupVersion) schema.GroupVersion {
	if gv, ok := kubeStorageVersions[gr]; ok {
		return gv
	}
	return base
}
