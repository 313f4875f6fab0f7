package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestNodeRestriction: with the Node authorizer (the default mode) and the
// NodeRestriction plugin enabled (off by default, as in kube) a kubelet is
// kept to its own Node, the pods bound to
// it and the mirror pods it creates, with kube-apiserver's 403s (each
// message checked against kube-apiserver v1.37.2 with a system:node:n1
// client certificate).
func TestNodeRestriction(t *testing.T) {
	s := testkit.StartServer(t, "--enable-admission-plugins=NodeRestriction")
	admin := s.Client(t)
	ns := namespace(t, admin)
	nodes := createNodes(t, admin, "n1", "n2")
	other, err := admin.CoreV1().Pods(ns).Create(ctx(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "on-n2"},
		Spec: corev1.PodSpec{NodeName: "n2", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubelet := newUser(t, s, "system:node:n1", "system:nodes").client

	// Its own node: labels it owns, yes; taints and restricted labels, no.
	own := nodes["n1"].DeepCopy()
	own.Labels = map[string]string{"foo": "bar", "kubernetes.io/hostname": "n1", "node.kubernetes.io/role": "x"}
	own, err = kubelet.CoreV1().Nodes().Update(ctx(t), own, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("n1 updates own node: %v", err)
	}
	bad := own.DeepCopy()
	bad.Labels["node-restriction.kubernetes.io/x"] = "y"
	bad.Labels["kubernetes.io/foo"] = "y"
	_, err = kubelet.CoreV1().Nodes().Update(ctx(t), bad, metav1.UpdateOptions{})
	wantForbidden(t, "forbidden labels", err, `nodes "n1" is forbidden: is not allowed to modify labels: kubernetes.io/foo, node-restriction.kubernetes.io/x`)
	bad = own.DeepCopy()
	bad.Spec.Taints = []corev1.Taint{{Key: "a", Value: "b", Effect: corev1.TaintEffectNoSchedule}}
	_, err = kubelet.CoreV1().Nodes().Update(ctx(t), bad, metav1.UpdateOptions{})
	wantForbidden(t, "taints", err, `nodes "n1" is forbidden: node "n1" is not allowed to modify taints`)
	// Another node: the authorizer lets kubelets update nodes, admission
	// knows whose.
	_, err = kubelet.CoreV1().Nodes().Update(ctx(t), nodes["n2"], metav1.UpdateOptions{})
	wantForbidden(t, "update n2", err, `nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`)

	// Pods: only mirror pods, owned by its node, referring to nothing.
	pod := func(name, generateName string, annotations map[string]string, owners ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: generateName, Annotations: annotations, OwnerReferences: owners},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	}
	_, err = kubelet.CoreV1().Pods(ns).Create(ctx(t), pod("p1", "", nil), metav1.CreateOptions{})
	wantForbidden(t, "non-mirror pod", err, `pods "p1" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods`)
	_, err = kubelet.CoreV1().Pods(ns).Create(ctx(t), pod("", "p-", nil), metav1.CreateOptions{})
	wantForbidden(t, "non-mirror pod by generateName", err, `pods "p-" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods`)
	mirror := map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "n1", UID: own.UID, Controller: ptr.To(true)}
	_, err = kubelet.CoreV1().Pods(ns).Create(ctx(t), pod("m0", "", mirror), metav1.CreateOptions{})
	wantForbidden(t, "unowned mirror pod", err, `pods "m0" is forbidden: node "n1" can only create pods with an owner reference set to itself`)
	stale := owner
	stale.UID = "0000"
	_, err = kubelet.CoreV1().Pods(ns).Create(ctx(t), pod("m0", "", mirror, stale), metav1.CreateOptions{})
	wantForbidden(t, "mirror pod of another uid", err, fmt.Sprintf(`pods "m0" is forbidden: node n1 UID mismatch: expected 0000 got %s`, own.UID))
	withClaim := pod("m0", "", mirror, owner)
	withClaim.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
	_, err = kubelet.CoreV1().Pods(ns).Create(ctx(t), withClaim, metav1.CreateOptions{})
	wantForbidden(t, "mirror pod with a claim", err, `pods "m0" is forbidden: node "n1" can not create pods that reference persistentvolumeclaims`)
	m1, err := kubelet.CoreV1().Pods(ns).Create(ctx(t), pod("m1", "", mirror, owner), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("mirror pod: %v", err)
	}

	// Status of its own pods; deletes of its own pods.
	m1.Status.Message = "running"
	if _, err := kubelet.CoreV1().Pods(ns).UpdateStatus(ctx(t), m1, metav1.UpdateOptions{}); err != nil {
		t.Errorf("n1 updates own pod's status: %v", err)
	}
	_, err = kubelet.CoreV1().Pods(ns).UpdateStatus(ctx(t), other, metav1.UpdateOptions{})
	wantForbidden(t, "status of n2's pod", err, `pods "on-n2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself`)
	err = kubelet.CoreV1().Pods(ns).Delete(ctx(t), "on-n2", metav1.DeleteOptions{})
	wantForbidden(t, "delete n2's pod", err, `pods "on-n2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself`)
	if err := kubelet.CoreV1().Pods(ns).Delete(ctx(t), "m1", metav1.DeleteOptions{}); err != nil {
		t.Errorf("n1 deletes own mirror pod: %v", err)
	}

	// Its own lease only.
	lease := func(name string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	_, err = kubelet.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx(t), lease("n2"), metav1.CreateOptions{})
	wantForbidden(t, "lease of n2", err, `leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node`)
	if _, err := kubelet.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx(t), lease("n1"), metav1.CreateOptions{}); err != nil {
		t.Errorf("n1 creates own lease: %v", err)
	}

	// Client certificates for itself only.
	_, err = kubelet.CertificatesV1().CertificateSigningRequests().Create(ctx(t), nodeCSR(t, "c1", "system:node:n2"), metav1.CreateOptions{})
	wantForbidden(t, "CSR for n2", err, `certificatesigningrequests.certificates.k8s.io "c1" is forbidden: can only create a node CSR with CN=system:node:n1`)
	if _, err := kubelet.CertificatesV1().CertificateSigningRequests().Create(ctx(t), nodeCSR(t, "c2", "system:node:n1"), metav1.CreateOptions{}); err != nil {
		t.Errorf("n1 asks for its own client certificate: %v", err)
	}
}

// nodeCSR is a request for a kubelet client certificate of CN commonName.
func nodeCSR(t *testing.T, name, commonName string) *certificatesv1.CertificateSigningRequest {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: commonName, Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
		}}
}

// createNodes creates the named nodes, as an admin would register them.
func createNodes(t *testing.T, admin kubernetes.Interface, names ...string) map[string]*corev1.Node {
	t.Helper()
	nodes := map[string]*corev1.Node{}
	for _, name := range names {
		n, err := admin.CoreV1().Nodes().Create(ctx(t), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		nodes[name] = n
	}
	return nodes
}
