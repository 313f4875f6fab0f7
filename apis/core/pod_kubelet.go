package core

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/kubeletclient"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/request"
)

// Kubelets is what the node-facing pod subresources share: the pods and
// nodes they read and the client that reaches the pods' kubelets.
type Kubelets struct {
	Pods, Nodes *registry.Store
	Client      *kubeletclient.Client
	// Authorizer is the server's, asked again for create (authorizeCreate).
	Authorizer authz.Authorizer
}

// authorizeCreate asks, for a streaming request authorized as get (a
// WebSocket's GET), whether the user may also create the subresource, as
// kube does (AuthorizePodWebsocketUpgradeCreatePermission, on in v1.37):
// SPDY clients always needed create, and a policy that grants exec only
// by create must not be bypassed by switching protocols.
func (k *Kubelets) authorizeCreate(ctx context.Context) error {
	info, ok := request.InfoFrom(ctx)
	if !ok {
		return apierrors.NewInternalError(errors.New("no request info in context"))
	}
	if info.Verb == "create" {
		return nil
	}
	if k.Authorizer == nil {
		return apierrors.NewInternalError(errors.New("no authorizer available"))
	}
	user, _ := authn.UserFrom(ctx)
	asCreate := *info
	asCreate.Verb = "create"
	d, reason, err := k.Authorizer.Authorize(ctx, authz.Attributes{User: user, Info: &asCreate})
	if err != nil {
		return err
	}
	if d != authz.Allow {
		return apierrors.NewForbidden(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Name, errors.New(reason))
	}
	return nil
}

// GetNode reads a node: the request's namespace is the pod's, not the
// node's.
func (k *Kubelets) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	obj, err := k.Nodes.Get(request.WithNamespace(ctx, ""), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T in the nodes store", obj)
	}
	return node, nil
}

func (k *Kubelets) pod(ctx context.Context, name string) (*corev1.Pod, error) {
	obj, err := k.Pods.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T in the pods store", obj)
	}
	return pod, nil
}

// connect finds the kubelet of a scheduled pod; a pod without a node is
// kube's 400.
func (k *Kubelets) connect(ctx context.Context, pod *corev1.Pod, insecure bool) (*kubeletclient.Connection, error) {
	if pod.Spec.NodeName == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	return k.Client.Connect(ctx, k, pod.Spec.NodeName, insecure)
}

// podContainer is the container a request names, or the pod's only
// container when it names none, with kube's errors.
func podContainer(pod *corev1.Pod, container string) (string, error) {
	var names []string
	found := false
	visitContainers(&pod.Spec, nil, func(c *corev1.Container, _ *field.Path) {
		names = append(names, c.Name)
		found = found || c.Name == container
	})
	switch {
	case container != "" && found:
		return container, nil
	case container != "":
		return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", container, pod.Name))
	case len(pod.Spec.Containers) == 1:
		return pod.Spec.Containers[0].Name, nil
	case len(pod.Spec.Containers) == 0:
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s", pod.Name, names))
}
