package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestVolumeAttributesClasses: kube's validation and the immutability of a
// class's driver and parameters, and the short name vac.
func TestVolumeAttributesClasses(t *testing.T) {
	e := e2eutil.Start(t)
	vacs := e.Clientset.StorageV1().VolumeAttributesClasses()
	vac := &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "gold"}, DriverName: "csi.example.com",
		Parameters: map[string]string{"iops": "3000"}}
	got, err := vacs.Create(e2eutil.Ctx(t), vac, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Parameters["iops"] = "4000"
	got.DriverName = "other.example.com"
	_, err = vacs.Update(e2eutil.Ctx(t), got, metav1.UpdateOptions{})
	s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	e2eutil.WantCause(t, s, causeForbidden, "parameters")
	e2eutil.WantCause(t, s, causeForbidden, "driverName")
	if !strings.Contains(s.Message, "updates to parameters are forbidden.") {
		t.Errorf("message = %q", s.Message)
	}
	_, err = vacs.Create(e2eutil.Ctx(t), &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "empty"}}, metav1.CreateOptions{})
	s = e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueRequired, "driverName")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueRequired, "parameters")
	out, stderr, err := testkit.RunKubectl(t, e.Kubeconfig, nil, "get", "vac")
	if err != nil || !strings.Contains(out, "gold") || !strings.Contains(out, "csi.example.com") {
		t.Errorf("kubectl get vac = %v %s %s", err, out, stderr)
	}
}

// caPEM is a self-signed certificate, a CA or not.
func caPEM(t *testing.T, cn string, isCA bool) string {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: isCA, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestClusterTrustBundles: a signer's bundles are named after it, hold CA
// certificates only, once each, and are selected by spec.signerName.
func TestClusterTrustBundles(t *testing.T) {
	e := e2eutil.Start(t)
	bundles := e.Clientset.CertificatesV1().ClusterTrustBundles()
	ca := caPEM(t, "ca", true)
	signed := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:signer:one"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/signer", TrustBundle: ca}}
	if _, err := bundles.Create(e2eutil.Ctx(t), signed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	plain := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "plain"},
		Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: ca}}
	if _, err := bundles.Create(e2eutil.Ctx(t), plain, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := bundles.List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "spec.signerName=example.com/signer"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != signed.Name {
		t.Fatalf("list by signer = %v %v", names(list.Items), err)
	}
	for _, c := range []struct {
		name, signer, bundle, field, message string
	}{
		{"wrong:prefix", "example.com/signer", ca, "metadata.name",
			"ClusterTrustBundle for signerName example.com/signer must be named with prefix example.com:signer:"},
		{"has:colon", "", ca, "metadata.name", `ClusterTrustBundle without signer name must not have ":" in its name`},
		{"not-ca", "", caPEM(t, "leaf", false), "spec.trustBundle", "entry 0 does not have the CA bit set"},
		{"twice", "", ca + ca, "spec.trustBundle", "duplicate trust anchor (indices [0 1])"},
		{"empty", "", "", "spec.trustBundle", "at least one trust anchor must be provided"},
	} {
		b := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: c.name},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: c.signer, TrustBundle: c.bundle}}
		_, err := bundles.Create(e2eutil.Ctx(t), b, metav1.CreateOptions{})
		s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
		e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, c.field)
		if !strings.Contains(s.Message, c.message) {
			t.Errorf("%s: message = %q, want %q", c.name, s.Message, c.message)
		}
	}
	got, err := bundles.Get(e2eutil.Ctx(t), signed.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.SignerName = "example.com/other"
	_, err = bundles.Update(e2eutil.Ctx(t), got, metav1.UpdateOptions{})
	e2eutil.WantCause(t, e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, ""), metav1.CauseTypeFieldValueInvalid, "spec.signerName")
}

// stubRequest is a PKCS#10 request of a fresh Ed25519 key.
func stubRequest(t *testing.T) ([]byte, ed25519.PrivateKey) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

func podCertificateRequest(t *testing.T, name string) *certificatesv1.PodCertificateRequest {
	stub, _ := stubRequest(t)
	return &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/pods", PodName: "web", PodUID: "pod-uid",
			ServiceAccountName: "default", ServiceAccountUID: "sa-uid", NodeName: "node-1", NodeUID: "node-uid",
			MaxExpirationSeconds: ptr.To[int32](86400), StubPKCS10Request: stub}}
}

// TestPodCertificateRequests: kube's create validation, an immutable spec,
// a status only a signer writes, final once denied, and the field
// selectors.
func TestPodCertificateRequests(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	pcrs := e.Clientset.CertificatesV1().PodCertificateRequests(ns)
	pcr, err := pcrs.Create(e2eutil.Ctx(t), podCertificateRequest(t, "web"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := podCertificateRequest(t, "bad")
	bad.Spec.MaxExpirationSeconds = ptr.To[int32](60)
	bad.Spec.PodUID = ""
	bad.Spec.StubPKCS10Request = []byte("garbage")
	_, err = pcrs.Create(e2eutil.Ctx(t), bad, metav1.CreateOptions{})
	s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "spec.maxExpirationSeconds")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "spec.podUID")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "spec.stubPKCS10Request")
	if !strings.Contains(s.Message, "must be in the range [3600, 7862400]") || !strings.Contains(s.Message, "must be a valid PKCS#10 CSR") {
		t.Errorf("message = %q", s.Message)
	}

	pcr.Spec.PodName = "other"
	_, err = pcrs.Update(e2eutil.Ctx(t), pcr, metav1.UpdateOptions{})
	e2eutil.WantCause(t, e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, ""), metav1.CauseTypeFieldValueInvalid, "spec")

	list, err := pcrs.List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "spec.nodeName=node-1,spec.podName=web"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("field selectors = %v %v", names(list.Items), err)
	}

	// A user without "sign" on the signer may not write the status.
	pcr, _ = pcrs.Get(e2eutil.Ctx(t), "web", metav1.GetOptions{})
	denied := metav1.Condition{Type: certificatesv1.PodCertificateRequestConditionTypeDenied, Status: metav1.ConditionTrue,
		Reason: "NotAllowed", Message: "no", LastTransitionTime: metav1.Now()}
	pcr.Status.Conditions = []metav1.Condition{denied}
	stranger := e.ClientWith(t, func(cfg *rest.Config) { cfg.Impersonate.UserName = "stranger" })
	grantStatusWriter(t, e, ns, "stranger")
	_, err = stranger.CertificatesV1().PodCertificateRequests(ns).UpdateStatus(e2eutil.Ctx(t), pcr, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`PodCertificateRequest.certificates.k8s.io "web" is invalid: spec.signerName: Forbidden: User "stranger" is not permitted to "sign" for signer "example.com/pods"`)

	// The admin may; a denial carries conditions only and is final.
	if pcr, err = pcrs.UpdateStatus(e2eutil.Ctx(t), pcr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pcr.Status.Conditions = nil
	_, err = pcrs.UpdateStatus(e2eutil.Ctx(t), pcr, metav1.UpdateOptions{})
	s = e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	if !strings.Contains(s.Message, "immutable after PodCertificateRequest is issued, denied, or failed") {
		t.Errorf("message = %q", s.Message)
	}
}

// grantStatusWriter lets user write podcertificaterequests/status in ns,
// and nothing about signers.
func grantStatusWriter(t *testing.T, e *e2eutil.Env, ns, user string) {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pcr-status"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"podcertificaterequests/status"}, Verbs: []string{"update", "patch"}}}}
	if _, err := e.Clientset.RbacV1().Roles(ns).Create(e2eutil.Ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pcr-status"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pcr-status"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}
	if _, err := e.Clientset.RbacV1().RoleBindings(ns).Create(e2eutil.Ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The authorizer learns of the binding through its informer.
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "update", Group: "certificates.k8s.io",
			Resource: "podcertificaterequests", Subresource: "status"}}}
	e2eutil.Eventually(t, 30*time.Second, user+" may write the status", func(ctx context.Context) (bool, error) {
		out, err := e.Clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		return err == nil && out.Status.Allowed, err
	})
}

// TestStorageVersionMigrationValidation: kube's spec and status rules and
// the table.
func TestStorageVersionMigrationValidation(t *testing.T) {
	e := e2eutil.Start(t, "--controllers=*,-root-ca-cert-publisher,-storage-version-migrator-controller")
	svms := e.Clientset.StoragemigrationV1().StorageVersionMigrations()
	_, err := svms.Create(e2eutil.Ctx(t), &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "Bad_Group"}}}, metav1.CreateOptions{})
	s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueRequired, "spec.resource.resource")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "spec.resource.group")

	svm, err := svms.Create(e2eutil.Ctx(t), &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "secrets"},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "secrets"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cond := func(typ svmv1.MigrationConditionType, status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: string(typ), Status: status, Reason: "Test", LastTransitionTime: metav1.Now()}
	}
	svm.Status = svmv1.StorageVersionMigrationStatus{ResourceVersion: "5",
		Conditions: []metav1.Condition{cond(svmv1.MigrationSucceeded, metav1.ConditionTrue)}}
	if svm, err = svms.UpdateStatus(e2eutil.Ctx(t), svm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	svm.Status.ResourceVersion = "6"
	svm.Status.Conditions = []metav1.Condition{cond(svmv1.MigrationSucceeded, metav1.ConditionFalse)}
	_, err = svms.UpdateStatus(e2eutil.Ctx(t), svm, metav1.UpdateOptions{})
	s = e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	if !strings.Contains(s.Message, "field is immutable") || !strings.Contains(s.Message, "Success condition cannot be set to false once it is true") {
		t.Errorf("message = %q", s.Message)
	}
	out, stderr, err := testkit.RunKubectl(t, e.Kubeconfig, nil, "get", "storageversionmigrations")
	if err != nil || !strings.Contains(out, "secrets") || !strings.Contains(out, "Succeeded") {
		t.Errorf("kubectl get = %v\n%s%s", err, out, stderr)
	}
}

// TestComponentStatusesAndLegacyBindings: kube's componentstatuses (etcd
// healthy, no scheduler) and a pod bound through the legacy bindings.
func TestComponentStatusesAndLegacyBindings(t *testing.T) {
	e := e2eutil.Start(t)
	list, err := e.Clientset.CoreV1().ComponentStatuses().List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	health := map[string]corev1.ComponentCondition{}
	for _, s := range list.Items {
		health[s.Name] = s.Conditions[0]
	}
	if c := health["etcd-0"]; c.Status != corev1.ConditionTrue || c.Message != "ok" {
		t.Errorf("etcd-0 = %+v", c)
	}
	if c := health["scheduler"]; c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "127.0.0.1:10259") {
		t.Errorf("scheduler = %+v", c)
	}
	if _, err := e.Clientset.CoreV1().ComponentStatuses().Get(e2eutil.Ctx(t), "nothing", metav1.GetOptions{}); err == nil {
		t.Error("get of an unknown component succeeded")
	}
	out, stderr, err := testkit.RunKubectl(t, e.Kubeconfig, nil, "get", "cs", "etcd-0")
	if err != nil || !strings.Contains(out, "Healthy") || !strings.Contains(stderr, "Warning: v1 ComponentStatus is deprecated in v1.19+") {
		t.Errorf("kubectl get cs = %v\n%s%s", err, out, stderr)
	}
	// kube warns on every read, a missing component's too.
	if r := e.Do(t, http.MethodGet, "/api/v1/componentstatuses/nothing", nil); r.Code != http.StatusNotFound ||
		r.Header.Get("Warning") != `299 - "v1 ComponentStatus is deprecated in v1.19+"` {
		t.Errorf("GET a missing component = %d, Warning %q", r.Code, r.Header.Get("Warning"))
	}

	ns := e.Namespace(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := []byte(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"node-1"}}`)
	if r := e.Do(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/bindings", binding, "Content-Type", "application/json"); r.Code != 201 ||
		r.Status(t).Status != metav1.StatusSuccess || r.Status(t).Code != 201 {
		t.Fatalf("binding = %d %s", r.Code, r.Body)
	}
	got, err := e.Clientset.CoreV1().Pods(ns).Get(e2eutil.Ctx(t), "p", metav1.GetOptions{})
	if err != nil || got.Spec.NodeName != "node-1" {
		t.Fatalf("pod after binding: %v %v", got.Spec.NodeName, err)
	}
	e.Do(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/bindings", binding, "Content-Type", "application/json").WantStatus(t, 409, metav1.StatusReasonConflict,
		`Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "node-1"`)
	e.Do(t, http.MethodDelete, "/api/v1/namespaces", nil).WantStatus(t, 405, metav1.StatusReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource")
}

// TestPodResize: pods/resize changes cpu and memory in place and refuses
// anything else.
func TestPodResize(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "c", Image: "busybox", Resources: res}}}}
	if _, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"150m"},"limits":{"cpu":"300m"}}}]}}`)
	got, err := e.Clientset.CoreV1().Pods(ns).Patch(e2eutil.Ctx(t), "p", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "resize")
	if err != nil {
		t.Fatal(err)
	}
	if q := got.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; q.String() != "150m" || got.Generation != 2 {
		t.Errorf("after resize: cpu %s, generation %d", q.String(), got.Generation)
	}
	// A change of image through resize is dropped, as kube drops it.
	image := []byte(`{"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)
	if got, err = e.Clientset.CoreV1().Pods(ns).Patch(e2eutil.Ctx(t), "p", types.StrategicMergePatchType, image, metav1.PatchOptions{}, "resize"); err != nil || got.Spec.Containers[0].Image != "busybox" {
		t.Fatalf("image through resize: %v %v", got.Spec.Containers[0].Image, err)
	}
	removal := []byte(`{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":null}}}]}}`)
	_, err = e.Clientset.CoreV1().Pods(ns).Patch(e2eutil.Ctx(t), "p", types.StrategicMergePatchType, removal, metav1.PatchOptions{}, "resize")
	s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	e2eutil.WantCause(t, s, causeForbidden, "spec.containers[0].resources.limits")
	qos := []byte(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"400m"}}}]}}`)
	_, err = e.Clientset.CoreV1().Pods(ns).Patch(e2eutil.Ctx(t), "p", types.StrategicMergePatchType, qos, metav1.PatchOptions{}, "resize")
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
}

// causeForbidden is the cause type of a field.Forbidden error, which
// metav1 has no constant for.
const causeForbidden = metav1.CauseType("FieldValueForbidden")

// TestStorageVersionMigration: a config map stored as JSON (as an old or
// another server may have written it) is written again in capstan's
// storage encoding once a migration of configmaps succeeds; with the loop
// off, the migration stays untouched.
func TestStorageVersionMigration(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	key := "/registry/configmaps/" + ns + "/old"
	e.EtcdPut(t, key, []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"old","namespace":"`+ns+
		`","uid":"6f1c1b0e-2a43-4c2e-9c53-2b1f6a3d0c11","creationTimestamp":"2026-01-01T00:00:00Z"},"data":{"a":"b"}}`))
	e.ConfigMap(t, ns, "new", nil)
	svms := e.Clientset.StoragemigrationV1().StorageVersionMigrations()
	svm := &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "configmaps"},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "configmaps"}}}
	if _, err := svms.Create(e2eutil.Ctx(t), svm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A migration of a resource discovery does not know fails only a
	// minute after its creation, as kube's controller waits for discovery
	// to catch up: "fresh" waits, "missing" (stored as made long ago) fails.
	fresh := &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "fresh"},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "example.com", Resource: "widgets"}}}
	if _, err := svms.Create(e2eutil.Ctx(t), fresh, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.EtcdPut(t, "/registry/storageversionmigrations/missing", []byte(`{"kind":"StorageVersionMigration","apiVersion":"storagemigration.k8s.io/v1",`+
		`"metadata":{"name":"missing","uid":"6f1c1b0e-2a43-4c2e-9c53-2b1f6a3d0c12","creationTimestamp":"2026-01-01T00:00:00Z"},`+
		`"spec":{"resource":{"group":"example.com","resource":"widgets"}}}`))
	finished := func(name string, t svmv1.MigrationConditionType) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			got, err := svms.Get(ctx, name, metav1.GetOptions{})
			return err == nil && meta.IsStatusConditionTrue(got.Status.Conditions, string(t)), err
		}
	}
	e2eutil.Eventually(t, 30*time.Second, "migration of configmaps succeeds", finished("configmaps", svmv1.MigrationSucceeded))
	e2eutil.Eventually(t, 30*time.Second, "migration of an unknown resource fails", finished("missing", svmv1.MigrationFailed))
	if done, err := finished("fresh", svmv1.MigrationFailed)(e2eutil.Ctx(t)); done || err != nil {
		t.Errorf("a migration of an unknown resource made just now failed at once (%v)", err)
	}
	if v := e.EtcdValue(t, key); !bytes.HasPrefix(v, []byte("k8s\x00")) {
		t.Errorf("after the migration the stored value is %.40q, want protobuf", v)
	}
	got, err := svms.Get(e2eutil.Ctx(t), "configmaps", metav1.GetOptions{})
	if err != nil || got.Status.ResourceVersion == "" {
		t.Fatalf("status = %+v %v", got.Status, err)
	}
	cm, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(e2eutil.Ctx(t), "old", metav1.GetOptions{})
	if err != nil || cm.Data["a"] != "b" {
		t.Fatalf("config map after migration: %+v %v", cm, err)
	}

	off := e2eutil.Start(t, "--controllers=*,-root-ca-cert-publisher,-svm")
	if _, err := off.Clientset.StoragemigrationV1().StorageVersionMigrations().Create(e2eutil.Ctx(t), svm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"/readyz/poststarthook/start-storage-version-migrator-controller", "/healthz/poststarthook/start-storage-version-migrator-controller"} {
		if r := off.Do(t, http.MethodGet, h, nil); r.Code != http.StatusNotFound {
			t.Errorf("GET %s with the loop off = %d", h, r.Code)
		}
	}
}
