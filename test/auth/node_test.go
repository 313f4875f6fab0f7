package auth

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestNodeAuthorizer: with the default --authorization-mode (Node,RBAC) a
// kubelet reads the secrets and config maps of the pods bound to its node,
// and nothing else, with kube's reasons; it reads its own Node, not
// another's, and lists pods only through its spec.nodeName selector.
func TestNodeAuthorizer(t *testing.T) {
	s := testkit.StartServer(t)
	admin := s.Client(t)
	ns := namespace(t, admin)
	for _, name := range []string{"mounted", "env", "other"} {
		if _, err := admin.CoreV1().Secrets(ns).Create(ctx(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"n1", "n2"} {
		if _, err := admin.CoreV1().Nodes().Create(ctx(t), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{
			NodeName: "n1",
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Env: []corev1.EnvVar{{Name: "E", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "env"}, Key: "k"},
			}}}}},
			Volumes: []corev1.Volume{
				{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "mounted"}}},
				{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
			},
		},
	}
	if _, err := admin.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	n1 := newUser(t, s, "system:node:n1", "system:nodes")
	n2 := newUser(t, s, "system:node:n2", "system:nodes")

	// The graph follows pods through an informer: the first read waits for it.
	eventually(t, "n1 reads the mounted secret", func(ctx context.Context) error {
		_, err := n1.client.CoreV1().Secrets(ns).Get(ctx, "mounted", metav1.GetOptions{})
		return err
	})
	if _, err := n1.client.CoreV1().Secrets(ns).Get(ctx(t), "env", metav1.GetOptions{}); err != nil {
		t.Errorf("n1 get secret from env: %v", err)
	}
	// A kubelet watches each secret it mounts by name.
	if _, err := n1.client.CoreV1().Secrets(ns).List(ctx(t), metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "mounted").String()}); err != nil {
		t.Errorf("n1 list the mounted secret by name: %v", err)
	}
	wantForbidden(t, "n1 get other secret", getSecret(n1.client, ns, "other"),
		fmt.Sprintf(`secrets "other" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace %q: node: no relationship found between node 'n1' and this object`, ns))
	wantForbidden(t, "n2 get n1's secret", getSecret(n2.client, ns, "mounted"),
		fmt.Sprintf(`secrets "mounted" is forbidden: User "system:node:n2" cannot get resource "secrets" in API group "" in the namespace %q: node: no relationship found between node 'n2' and this object`, ns))
	_, err := n1.client.CoreV1().Secrets(ns).List(ctx(t), metav1.ListOptions{})
	wantForbidden(t, "n1 list secrets", err,
		fmt.Sprintf(`secrets is forbidden: User "system:node:n1" cannot list resource "secrets" in API group "" in the namespace %q: node: No Object name found`, ns))
	if _, err := n1.client.CoreV1().ConfigMaps(ns).Get(ctx(t), "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("n1 get the pod's missing config map: %v, want NotFound (allowed)", err)
	}

	// Its own Node and pods; not another node's.
	if _, err := n1.client.CoreV1().Nodes().Get(ctx(t), "n1", metav1.GetOptions{}); err != nil {
		t.Errorf("n1 get own node: %v", err)
	}
	_, err = n1.client.CoreV1().Nodes().Get(ctx(t), "n2", metav1.GetOptions{})
	wantForbidden(t, "n1 get node n2", err,
		`nodes "n2" is forbidden: User "system:node:n1" cannot get resource "nodes" in API group "" at the cluster scope: node: node 'n1' cannot read 'n2', only its own Node object`)
	if _, err := n1.client.CoreV1().Pods("").List(ctx(t), metav1.ListOptions{FieldSelector: "spec.nodeName=n1"}); err != nil {
		t.Errorf("n1 list own pods: %v", err)
	}
	_, err = n1.client.CoreV1().Pods("").List(ctx(t), metav1.ListOptions{FieldSelector: "spec.nodeName=n2"})
	wantForbidden(t, "n1 list n2's pods", err,
		`pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at the cluster scope: node: can only list/watch pods with spec.nodeName field selector`)
	// The rest of system:node's rules: services.
	if _, err := n1.client.CoreV1().Services("").List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Errorf("n1 list services: %v", err)
	}

	// Its lease, by name, in kube-node-lease only.
	_, err = n1.client.CoordinationV1().Leases("default").Get(ctx(t), "n1", metav1.GetOptions{})
	wantForbidden(t, "n1 get a lease in default", err,
		`leases.coordination.k8s.io "n1" is forbidden: User "system:node:n1" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "default": node: can only access leases in the "kube-node-lease" system namespace`)
	if _, err := n1.client.CoordinationV1().Leases("kube-node-lease").Get(ctx(t), "n1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("n1 get own lease: %v, want NotFound (allowed)", err)
	}

	// Moving the pod away takes the secret with it.
	if err := admin.CoreV1().Pods(ns).Delete(ctx(t), "p", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "n1 loses the secret", func(ctx context.Context) error {
		_, err := n1.client.CoreV1().Secrets(ns).Get(ctx, "mounted", metav1.GetOptions{})
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("got %v, want forbidden", err)
		}
		return nil
	})
}

func getSecret(c kubernetes.Interface, ns, name string) error {
	_, err := c.CoreV1().Secrets(ns).Get(context.Background(), name, metav1.GetOptions{})
	return err
}

func wantForbidden(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("%s:\ngot  %v\nwant %s", what, err, want)
	}
}
