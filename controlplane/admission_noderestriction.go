package controlplane

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/admission/noderestriction"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/request"
)

// nodeRestriction is the NodeRestriction plugin: the Node authorizer lets
// kubelets write pods and nodes, the plugin keeps each to its own.
func nodeRestriction(pods, nodes *registry.Store) *noderestriction.Plugin {
	getPod := func(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
		obj, err := pods.Get(request.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.Pod), nil
	}
	getNode := func(ctx context.Context, name string) (*corev1.Node, error) {
		obj, err := nodes.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.Node), nil
	}
	return noderestriction.New(getPod, getNode)
}
