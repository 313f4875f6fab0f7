package controlplane

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/admission/noderestriction"
	"github.com/capstan-io/capstan/endpoints/request"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/server"
)

// installNodeRestriction adds the NodeRestriction plugin when the Node
// authorizer is in use: the authorizer lets kubelets write pods and nodes,
// the plugin keeps each to its own.
func (c Config) installNodeRestriction(s *server.Server, pods, nodes *registry.Store) {
	if c.Authorization == nil || c.Authorization.node == nil {
		return
	}
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
	s.AddAdmissionPlugin(noderestriction.New(getPod, getNode))
}
