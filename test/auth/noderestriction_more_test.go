package auth

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestNodeRestrictionMore: NodeRestriction keeps a kubelet's service
// account tokens, ResourceSlices and PodCertificateRequests to the pods
// and node it runs. Every refusal's code and message was checked against
// kube-apiserver v1.37.2 (--authorization-mode=Node,RBAC
// --enable-admission-plugins=NodeRestriction, a system:node:n1 client
// certificate).
func TestNodeRestrictionMore(t *testing.T) {
	s := testkit.StartServer(t, "--enable-admission-plugins=NodeRestriction")
	admin := s.Client(t)
	ns := namespace(t, admin)
	nodes := createNodes(t, admin, "n1", "n2")
	for _, name := range []string{"sa", "ghost"} {
		if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kubelet := newUser(t, s, "system:node:n1", "system:nodes").client
	t.Run("tokens", func(t *testing.T) { testNodeTokens(t, admin, kubelet, ns) })
	t.Run("resource slices", func(t *testing.T) { testNodeResourceSlices(t, admin, kubelet) })
	n3 := newUser(t, s, "system:node:n3", "system:nodes").client
	t.Run("pod certificates", func(t *testing.T) { testNodePodCertificates(t, admin, kubelet, n3, ns, nodes["n1"]) })

	// The pods and nodes the plugin looks up and does not find are
	// answered as kube's listers word them, in the singular.
	err := kubelet.CoreV1().Pods(ns).EvictV1(ctx(t), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "nope"}})
	wantStatus(t, "eviction of a missing pod", err, http.StatusNotFound, metav1.StatusReasonNotFound, `pod "nope" not found`)
	_, err = n3.CoreV1().Pods(ns).Create(ctx(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "m3",
		Annotations:     map[string]string{corev1.MirrorPodAnnotationKey: "x"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n3", UID: "u", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "n3", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	wantStatus(t, "mirror pod of a missing node", err, http.StatusNotFound, metav1.StatusReasonNotFound, `node "n3" not found`)
}

// testNodeTokens: a kubelet's tokens are bound to its own pods, for the
// audiences they use or it is authorized for.
func testNodeTokens(t *testing.T, admin, kubelet kubernetes.Interface, ns string) {
	p1 := createPod(t, admin, ns, "p1", "n1", "sa", true, corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "aud1", Path: "t"}}}}})
	p2 := createPod(t, admin, ns, "p2", "n2", "sa", true)
	// p3 gets tokens for its CSI drivers: inline, through a claim, and
	// through its ephemeral volume's claim (named p3-e).
	for driver, audience := range map[string]string{"d-inline": "aud-inline", "d-claim": "aud-claim", "d-eph": "aud-eph"} {
		d := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver}, Spec: storagev1.CSIDriverSpec{TokenRequests: []storagev1.TokenRequest{{Audience: audience}}}}
		if _, err := admin.StorageV1().CSIDrivers().Create(ctx(t), d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createClaim(t, admin, ns, "c1", "d-claim")
	createClaim(t, admin, ns, "p3-e", "d-eph")
	eph := corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}
	p3 := createPod(t, admin, ns, "p3", "n1", "sa", false,
		corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d-inline"}},
		corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c1"}}, eph)
	p4 := createPod(t, admin, ns, "p4", "n1", "sa", false,
		corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "nodriver"}},
		corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "noclaim"}}, eph)

	request := func(ref *authenticationv1.BoundObjectReference, audiences ...string) error {
		_, err := kubelet.CoreV1().ServiceAccounts(ns).CreateToken(ctx(t), "sa", &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref, Audiences: audiences}}, metav1.CreateOptions{})
		return err
	}
	bound := func(pod *corev1.Pod) *authenticationv1.BoundObjectReference {
		return &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}
	}
	// The Node authorizer lets n1 ask for sa's tokens once its graph has p1.
	eventually(t, "token for p1", func(context.Context) error { return request(bound(p1), "aud1") })

	const refused = `serviceaccounts "sa" is forbidden: `
	wantForbidden(t, "unbound", request(nil), refused+"node requested token not bound to a pod")
	wantForbidden(t, "bound to a secret", request(&authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Secret", Name: "x"}),
		refused+"node requested token not bound to a pod")
	wantForbidden(t, "no uid", request(&authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "p1"}),
		refused+"node requested token with a pod binding without a uid")
	// kube's plugin hands its pod lister's NotFound on as it is.
	wantStatus(t, "missing pod", request(&authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "nope", UID: "123"}),
		http.StatusNotFound, metav1.StatusReasonNotFound, `pod "nope" not found`)
	wantForbidden(t, "stale uid", request(&authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "p1", UID: "123"}),
		refused+"the UID in the bound object reference (123) does not match the UID in record. The object might have been deleted and then recreated")
	wantForbidden(t, "pod of n2", request(bound(p2)), refused+"node requested token bound to a pod scheduled on a different node")
	wantForbidden(t, "two audiences", request(bound(p1), "a", "b"), refused+"node may only request 0 or 1 audiences")

	// Audiences: those the pod projects (the service account volume's is
	// ""), and its CSI drivers'.
	for _, c := range []struct {
		pod      *corev1.Pod
		audience []string
	}{{p1, nil}, {p3, []string{"aud-inline"}}, {p3, []string{"aud-claim"}}, {p3, []string{"aud-eph"}}} {
		if err := request(bound(c.pod), c.audience...); err != nil {
			t.Errorf("token for %s, audiences %q: %v", c.pod.Name, c.audience, err)
		}
	}
	wantForbidden(t, "audience no pod uses", request(bound(p1), "aud2"),
		refused+`system:node:n1 is not authorized to request tokens for audience "aud2"`)
	wantForbidden(t, "no audience, no service account volume", request(bound(p3)),
		refused+`system:node:n1 is not authorized to request tokens for audience ""`)
	wantForbidden(t, "lookups that fail", request(bound(p4), "aud-inline"),
		refused+`error validating audience "aud-inline": [csidriver.storage.k8s.io "nodriver" not found, persistentvolumeclaim "noclaim" not found, persistentvolumeclaim "p4-e" not found]`)

	// An admin may let kubelets ask for an audience for a service account.
	grantInNamespace(t, admin, ns, "system:node:n1", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"aud-rbac"},
		ResourceNames: []string{"sa"}, Verbs: []string{"request-serviceaccounts-token-audience"}})
	eventually(t, "authorized audience", func(context.Context) error { return request(bound(p3), "aud-rbac") })
}

// testNodeResourceSlices: a kubelet creates and deletes the slices of its
// own node only.
func testNodeResourceSlices(t *testing.T, admin, kubelet kubernetes.Interface) {
	slice := func(name, generateName string, node *string) *resourcev1.ResourceSlice {
		s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: generateName},
			Spec: resourcev1.ResourceSliceSpec{Driver: "d.example.com", Pool: resourcev1.ResourcePool{Name: "p", Generation: 1, ResourceSliceCount: 1},
				NodeName: node}}
		if node == nil {
			s.Spec.AllNodes = ptr.To(true)
		}
		return s
	}
	slices := kubelet.ResourceV1().ResourceSlices()
	if _, err := slices.Create(ctx(t), slice("s1", "", ptr.To("n1")), metav1.CreateOptions{}); err != nil {
		t.Fatalf("n1 publishes its slice: %v", err)
	}
	const createErr = "can only create ResourceSlice with the same NodeName as the requesting node"
	_, err := slices.Create(ctx(t), slice("s2", "", ptr.To("n2")), metav1.CreateOptions{})
	wantForbidden(t, "slice of n2", err, `resourceslices.resource.k8s.io "s2" is forbidden: `+createErr)
	_, err = slices.Create(ctx(t), slice("", "g-", nil), metav1.CreateOptions{})
	wantForbidden(t, "slice of all nodes", err, `resourceslices.resource.k8s.io "g-" is forbidden: `+createErr)

	for _, s := range []*resourcev1.ResourceSlice{slice("s2", "", ptr.To("n2")), slice("s3", "", nil)} {
		if _, err := admin.ResourceV1().ResourceSlices().Create(ctx(t), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Only a kubelet RBAC lets delete others' slices gets past the
	// authorizer's graph to the plugin.
	bindCluster(t, admin, "node-deletes-slices", "system:node:n1", rbacv1.PolicyRule{APIGroups: []string{"resource.k8s.io"},
		Resources: []string{"resourceslices"}, Verbs: []string{"delete"}})
	const deleteErr = "can only delete ResourceSlice with the same NodeName as the requesting node"
	eventually(t, "delete of n2's slice reaches admission", func(context.Context) error {
		err := slices.Delete(ctx(t), "s2", metav1.DeleteOptions{})
		if want := `resourceslices.resource.k8s.io "s2" is forbidden: ` + deleteErr; err == nil || err.Error() != want {
			return fmt.Errorf("got %v, want %s", err, want)
		}
		return nil
	})
	wantForbidden(t, "delete of a slice of all nodes", slices.Delete(ctx(t), "s3", metav1.DeleteOptions{}),
		`resourceslices.resource.k8s.io "s3" is forbidden: `+deleteErr)
	if err := slices.Delete(ctx(t), "s1", metav1.DeleteOptions{}); err != nil {
		t.Errorf("n1 deletes its slice: %v", err)
	}
}

// testNodePodCertificates: a kubelet asks for certificates for its own
// pods, as their service accounts, from the signers they mount. Where
// kube suspects its caches lag (a UID that differs, an object not found)
// it answers 500, not 403.
func testNodePodCertificates(t *testing.T, admin, kubelet, n3 kubernetes.Interface, ns string, n1 *corev1.Node) {
	pod := createPod(t, admin, ns, "pc", "n1", "sa", false, corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{SignerName: "example.com/foo",
			KeyType: "ED25519", CredentialBundlePath: "b"}}}}})
	other := createPod(t, admin, ns, "pc-n2", "n2", "sa", false)
	mirror, err := admin.CoreV1().Pods(ns).Create(ctx(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "m1",
		Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "x"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A pod whose service account is gone.
	orphan := createPod(t, admin, ns, "orphan", "n1", "ghost", false)
	if err := admin.CoreV1().ServiceAccounts(ns).Delete(ctx(t), "ghost", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	sa, err := admin.CoreV1().ServiceAccounts(ns).Get(ctx(t), "sa", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := func(p *corev1.Pod) *certificatesv1.PodCertificateRequest {
		return podCertRequest(t, p, sa, n1)
	}
	create := func(c kubernetes.Interface, r *certificatesv1.PodCertificateRequest) error {
		_, err := c.CertificatesV1().PodCertificateRequests(ns).Create(ctx(t), r, metav1.CreateOptions{})
		return err
	}
	with := func(r *certificatesv1.PodCertificateRequest, f func(*certificatesv1.PodCertificateRequestSpec)) *certificatesv1.PodCertificateRequest {
		f(&r.Spec)
		return r
	}
	const refused = `podcertificaterequests.certificates.k8s.io "r" is forbidden: `
	podRef := ns + "/pc"

	wantForbidden(t, "for n2", create(kubelet, with(key(pod), func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName = "n2" })),
		refused+`PodCertificateRequest.Spec.NodeName="n2", which is not the requesting node "n1"`)
	wantStatus(t, "node that does not exist", create(n3, with(key(pod), func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName = "n3" })),
		http.StatusInternalServerError, metav1.StatusReasonUnknown, `while retrieving node "n3" named in the PodCertificateRequest: node "n3" not found`)
	wantStatus(t, "node uid", create(kubelet, with(key(pod), func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeUID = "123" })),
		http.StatusInternalServerError, metav1.StatusReasonUnknown,
		fmt.Sprintf(`PodCertificateRequest for pod %q names node UID "123", inconsistent with the running node (%q)`, podRef, n1.UID))
	wantStatus(t, "pod that does not exist", create(kubelet, with(key(pod), func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName = "nope" })),
		http.StatusInternalServerError, metav1.StatusReasonUnknown,
		fmt.Sprintf(`while retrieving pod "%s/nope" named in the PodCertificateRequest: pod "nope" not found`, ns))
	wantStatus(t, "pod uid", create(kubelet, with(key(pod), func(s *certificatesv1.PodCertificateRequestSpec) { s.PodUID = "123" })),
		http.StatusInternalServerError, metav1.StatusReasonUnknown,
		fmt.Sprintf(`PodCertificateRequest for pod %q contains pod UID ("123") which differs from running pod %q`, podRef, pod.UID))
	wantForbidden(t, "pod of n2", create(kubelet, key(other)),
		refused+fmt.Sprintf(`pod "%s/pc-n2" is not running on node "n1" named in the PodCertificateRequest`, ns))
	wantForbidden(t, "mirror pod", create(kubelet, key(mirror)), refused+fmt.Sprintf(`pod "%s/m1" is a mirror pod`, ns))
	wantForbidden(t, "another service account", create(kubelet, with(key(pod), func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountName = "other" })),
		refused+fmt.Sprintf(`PodCertificateRequest for pod %q contains serviceAccountName ("other") that differs from running pod ("sa")`, podRef))
	wantStatus(t, "service account that is gone", create(kubelet, key(orphan)),
		http.StatusInternalServerError, metav1.StatusReasonUnknown,
		fmt.Sprintf(`while retrieving service account "%s/ghost" named in the PodCertificateRequest: serviceaccount "ghost" not found`, ns))
	wantStatus(t, "service account uid", create(kubelet, with(key(pod), func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountUID = "123" })),
		http.StatusInternalServerError, metav1.StatusReasonUnknown,
		fmt.Sprintf(`PodCertificateRequest for pod %q names service account UID "123", which differs from the running service account (%q)`, podRef, sa.UID))
	wantForbidden(t, "signer the pod does not mount", create(kubelet, with(key(pod), func(s *certificatesv1.PodCertificateRequestSpec) { s.SignerName = "example.com/bar" })),
		refused+fmt.Sprintf(`pod %q does not mount a podCertificate projected volume for signer "example.com/bar"`, podRef))
	noName := with(key(pod), func(s *certificatesv1.PodCertificateRequestSpec) { s.SignerName = "example.com/bar" })
	noName.Name, noName.GenerateName = "", ""
	wantForbidden(t, "no name", create(kubelet, noName),
		`podcertificaterequests.certificates.k8s.io "Unknown" is forbidden: `+fmt.Sprintf(`pod %q does not mount a podCertificate projected volume for signer "example.com/bar"`, podRef))

	if err := create(kubelet, key(pod)); err != nil {
		t.Fatalf("certificate for a signer the pod mounts: %v", err)
	}
	// An admin may let kubelets ask a signer for a service account: the
	// resource is the signer's name with colons for slashes.
	grantInNamespace(t, admin, ns, "system:node:n1", rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"example.com:bar"},
		ResourceNames: []string{"sa"}, Verbs: []string{"request-serviceaccounts-podcertificate-signer"}})
	eventually(t, "authorized signer", func(context.Context) error {
		r := with(key(pod), func(s *certificatesv1.PodCertificateRequestSpec) { s.SignerName = "example.com/bar" })
		r.Name = "r-bar"
		return create(kubelet, r)
	})

	// Kubelets only create: with RBAC past the authorizer, the rest is
	// refused here.
	bindCluster(t, admin, "node-writes-pcrs", "system:node:n1", rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"},
		Resources: []string{"podcertificaterequests", "podcertificaterequests/status"}, Verbs: []string{"update", "delete"}})
	r, err := admin.CertificatesV1().PodCertificateRequests(ns).Get(ctx(t), "r", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "update reaches admission", func(context.Context) error {
		_, err := kubelet.CertificatesV1().PodCertificateRequests(ns).Update(ctx(t), r, metav1.UpdateOptions{})
		if want := refused + "unexpected operation UPDATE"; err == nil || err.Error() != want {
			return fmt.Errorf("got %v, want %s", err, want)
		}
		return nil
	})
	_, err = kubelet.CertificatesV1().PodCertificateRequests(ns).UpdateStatus(ctx(t), r, metav1.UpdateOptions{})
	wantForbidden(t, "status update", err, refused+"unexpected operation UPDATE")
	wantForbidden(t, "delete", kubelet.CertificatesV1().PodCertificateRequests(ns).Delete(ctx(t), "r", metav1.DeleteOptions{}),
		refused+"unexpected operation DELETE")
}

// createPod creates a pod on node running as serviceAccount with volumes
// v0, v1, ... (an ephemeral one named e).
func createPod(t *testing.T, admin kubernetes.Interface, ns, name, node, serviceAccount string, automount bool, volumes ...corev1.VolumeSource) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: serviceAccount,
		AutomountServiceAccountToken: ptr.To(automount), Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	for i, v := range volumes {
		name := fmt.Sprintf("v%d", i)
		if v.Ephemeral != nil {
			name = "e"
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: v})
	}
	pod, err := admin.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// createClaim creates a claim bound (by name) to a volume of its own name
// that the CSI driver mounts.
func createClaim(t *testing.T, admin kubernetes.Interface, ns, name, driver string) {
	t.Helper()
	size := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name}, Spec: corev1.PersistentVolumeSpec{Capacity: size, AccessModes: rwo,
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: name}}}}
	if _, err := admin.CoreV1().PersistentVolumes().Create(ctx(t), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{AccessModes: rwo,
		Resources: corev1.VolumeResourceRequirements{Requests: size}, VolumeName: pv.Name}}
	if _, err := admin.CoreV1().PersistentVolumeClaims(ns).Create(ctx(t), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podCertRequest is a request named r for a certificate of pod from
// example.com/foo, with a stub PKCS#10 request of a new ED25519 key.
func podCertRequest(t *testing.T, pod *corev1.Pod, sa *corev1.ServiceAccount, node *corev1.Node) *certificatesv1.PodCertificateRequest {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: certificatesv1.PodCertificateRequestSpec{
		SignerName: "example.com/foo", PodName: pod.Name, PodUID: pod.UID, ServiceAccountName: pod.Spec.ServiceAccountName, ServiceAccountUID: sa.UID,
		NodeName: types.NodeName(node.Name), NodeUID: node.UID, StubPKCS10Request: stub}}
}

// grantInNamespace grants user rule in ns through a role and binding.
func grantInNamespace(t *testing.T, admin kubernetes.Interface, ns, user string, rule rbacv1.PolicyRule) {
	t.Helper()
	name := "grant-" + rule.Verbs[0]
	if _, err := admin.RbacV1().Roles(ns).Create(ctx(t), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: userSubject(user),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx(t), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// wantStatus wants err to be the Status of code, reason and message.
func wantStatus(t *testing.T, what string, err error, code int32, reason metav1.StatusReason, message string) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Errorf("%s: got %v, want %d %s", what, err, code, message)
		return
	}
	if s := status.Status(); s.Code != code || s.Reason != reason || s.Message != message {
		t.Errorf("%s:\ngot  %d %q %s\nwant %d %q %s", what, s.Code, s.Reason, s.Message, code, reason, message)
	}
}
