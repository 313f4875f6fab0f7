package controlplane

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission/noderestriction"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// nodeRestriction is the NodeRestriction plugin: the Node authorizer lets
// kubelets write pods and nodes, the plugin keeps each to its own. It asks
// az (the server's authorizer, as kube gives its plugin) about the token
// audiences and certificate signers no pod of the kubelet's uses.
func nodeRestriction(d admissionDeps, az authz.Authorizer) *noderestriction.Plugin {
	return noderestriction.New(noderestriction.Getters{
		Pods:            namespacedGetter[*corev1.Pod](d, corev1.Resource("pods"), "pod"),
		Nodes:           clusterGetter[*corev1.Node](d, corev1.Resource("nodes"), "node"),
		ServiceAccounts: namespacedGetter[*corev1.ServiceAccount](d, corev1.Resource("serviceaccounts"), "serviceaccount"),
		Claims:          namespacedGetter[*corev1.PersistentVolumeClaim](d, corev1.Resource("persistentvolumeclaims"), "persistentvolumeclaim"),
		Volumes:         clusterGetter[*corev1.PersistentVolume](d, corev1.Resource("persistentvolumes"), "persistentvolume"),
		CSIDrivers:      clusterGetter[*storagev1.CSIDriver](d, storagev1.Resource("csidrivers"), "csidriver"),
	}, az)
}

// namespacedGetter reads an object of resource from its store. Its
// NotFound says what kube's informer listers say, naming the resource in
// the singular (`pod "x" not found`): kube's plugin hands some to the
// client as they are. A resource not served has no objects.
func namespacedGetter[T runtime.Object](d admissionDeps, resource schema.GroupResource, singular string) func(ctx context.Context, namespace, name string) (T, error) {
	store := d.store(resource.Group, resource.Resource)
	notFound := func(name string) error {
		return apierrors.NewNotFound(schema.GroupResource{Group: resource.Group, Resource: singular}, name)
	}
	return func(ctx context.Context, namespace, name string) (T, error) {
		var zero T
		if store == nil || name == "" {
			return zero, notFound(name)
		}
		obj, err := store.Get(request.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return zero, notFound(name)
		}
		if err != nil {
			return zero, err
		}
		return obj.(T), nil
	}
}

// clusterGetter is namespacedGetter for a cluster-scoped resource.
func clusterGetter[T runtime.Object](d admissionDeps, resource schema.GroupResource, singular string) func(ctx context.Context, name string) (T, error) {
	get := namespacedGetter[T](d, resource, singular)
	return func(ctx context.Context, name string) (T, error) { return get(ctx, "", name) }
}
