package controlplane

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-io/capstan/admission/limitranger"
	"github.com/capstan-io/capstan/admission/plugins"
	"github.com/capstan-io/capstan/admission/podsecurity"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

// podSecurityPlugin is the PodSecurity plugin's factory: namespaces and
// pods are read from the watch caches. The pods a namespace's new enforce
// level is checked against are a consistent list (the cache waits until
// it has every pod written before): kube reads an informer, which may
// miss a pod made just before, and its warnings then count one pod fewer.
// A label change is rare; the wait is one revision read from etcd.
func podSecurityPlugin(d admissionDeps) plugins.Factory {
	namespaces := namespaceGetter(d.store("", "namespaces"))
	pods := d.store("", "pods")
	list := func(ctx context.Context, namespace string) ([]corev1.Pod, error) {
		obj, err := pods.List(request.WithNamespace(ctx, namespace), &rest.ListOptions{})
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.PodList).Items, nil
	}
	return func(config []byte) (any, error) {
		return podsecurity.New(config, podsecurity.NamespaceGetter(namespaces), list)
	}
}

// limitRangeLister lists a namespace's LimitRanges from the watch cache.
func limitRangeLister(store *registry.Store) limitranger.Lister {
	return func(ctx context.Context, namespace string) ([]corev1.LimitRange, error) {
		obj, err := store.List(request.WithNamespace(ctx, namespace), &rest.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.LimitRangeList).Items, nil
	}
}
