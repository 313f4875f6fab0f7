package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	arv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	svmv1beta1 "k8s.io/api/storagemigration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestBetaVersionsOffByDefault: a fresh server serves no beta version, as
// kube 1.37's: the paths are kube's 404 and discovery lists none.
func TestBetaVersionsOffByDefault(t *testing.T) {
	e := e2eutil.Start(t)
	for _, path := range []string{"/apis/resource.k8s.io/v1beta1/resourceclaims", "/apis/certificates.k8s.io/v1beta1/clustertrustbundles",
		"/apis/storagemigration.k8s.io/v1beta1/storageversionmigrations"} {
		if r := e.Do(t, http.MethodGet, path, nil); r.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, r.Code)
		}
	}
	groups, err := e.Clientset.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			if strings.Contains(v.Version, "beta") {
				t.Errorf("discovery lists %s", v.GroupVersion)
			}
		}
	}
}

// TestBetaVersionsAPIBeta: with api/beta=true, the beta versions of
// certificates.k8s.io, admissionregistration.k8s.io and
// storagemigration.k8s.io are their GA resources at another version:
// written through one, read through the other, watched, validated with
// GA's rules; a v1beta1 mutating policy mutates as a v1 one.
func TestBetaVersionsAPIBeta(t *testing.T) {
	e := e2eutil.Start(t, "--runtime-config=api/beta=true", "--controllers=*,-root-ca-cert-publisher,-storage-version-migrator-controller")
	t.Run("certificates", func(t *testing.T) {
		beta := e.Clientset.CertificatesV1beta1().ClusterTrustBundles()
		w, err := beta.Watch(e2eutil.Ctx(t), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		b := &certificatesv1beta1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:signer:one"},
			Spec: certificatesv1beta1.ClusterTrustBundleSpec{SignerName: "example.com/signer", TrustBundle: caPEM(t, "ca", true)}}
		if _, err := beta.Create(e2eutil.Ctx(t), b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if ev := e2eutil.NextEvent(t, w); ev.Type != watch.Added {
			t.Errorf("watch event %s", ev.Type)
		}
		ga, err := e.Clientset.CertificatesV1().ClusterTrustBundles().Get(e2eutil.Ctx(t), b.Name, metav1.GetOptions{})
		if err != nil || ga.Spec.TrustBundle != b.Spec.TrustBundle {
			t.Fatalf("read through v1: %v", err)
		}
		list, err := beta.List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "spec.signerName=example.com/signer"})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("field selector through v1beta1: %v", err)
		}
		b.Name = "bad"
		_, err = beta.Create(e2eutil.Ctx(t), b, metav1.CreateOptions{})
		e2eutil.WantCause(t, e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, ""), metav1.CauseTypeFieldValueInvalid, "metadata.name")

		ns := e.Namespace(t)
		pcr := podCertificateRequest(t, "web")
		if _, err := e.Clientset.CertificatesV1().PodCertificateRequests(ns).Create(e2eutil.Ctx(t), pcr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := e.Clientset.CertificatesV1beta1().PodCertificateRequests(ns).Get(e2eutil.Ctx(t), "web", metav1.GetOptions{})
		if err != nil || string(got.Spec.StubPKCS10Request) != string(pcr.Spec.StubPKCS10Request) || got.Spec.NodeName != "node-1" {
			t.Fatalf("read through v1beta1: %+v %v", got, err)
		}
		got.Status.Conditions = []metav1.Condition{{Type: certificatesv1beta1.PodCertificateRequestConditionTypeDenied, Status: metav1.ConditionTrue,
			Reason: "NotAllowed", Message: "no", LastTransitionTime: metav1.Now()}}
		if _, err := e.Clientset.CertificatesV1beta1().PodCertificateRequests(ns).UpdateStatus(e2eutil.Ctx(t), got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		read, err := e.Clientset.CertificatesV1().PodCertificateRequests(ns).Get(e2eutil.Ctx(t), "web", metav1.GetOptions{})
		if err != nil || len(read.Status.Conditions) != 1 {
			t.Fatalf("status through v1: %+v %v", read.Status, err)
		}
	})
	t.Run("coordination", func(t *testing.T) {
		ns := e.Namespace(t)
		candidates := e.Clientset.CoordinationV1beta1().LeaseCandidates(ns)
		w, err := candidates.Watch(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "spec.leaseName=kube-scheduler"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		c := &coordinationv1beta1.LeaseCandidate{ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler-a"}, Spec: coordinationv1beta1.LeaseCandidateSpec{
			LeaseName: "kube-scheduler", BinaryVersion: "1.37.2", EmulationVersion: "1.37.0", Strategy: coordinationv1.OldestEmulationVersion}}
		// Candidates renew by PUT, which creates a missing one.
		created, err := candidates.Update(e2eutil.Ctx(t), c, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ev := e2eutil.NextEvent(t, w); ev.Type != watch.Added {
			t.Errorf("watch event %s", ev.Type)
		}
		created.Spec.LeaseName = "other"
		_, err = candidates.Update(e2eutil.Ctx(t), created, metav1.UpdateOptions{})
		e2eutil.WantCause(t, e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, ""), metav1.CauseTypeFieldValueInvalid, "spec.leaseName")
		bad := c.DeepCopy()
		bad.Name, bad.Spec.BinaryVersion, bad.Spec.EmulationVersion, bad.Spec.Strategy = "bad", "1.36.0", "1.37.0", "Mine"
		_, err = candidates.Create(e2eutil.Ctx(t), bad, metav1.CreateOptions{})
		s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
		e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "spec.binaryVersion")
		e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueNotSupported, "spec.strategy.strategy")
		out, stderr, err := testkit.RunKubectl(t, e.Kubeconfig, nil, "get", "leasecandidates", "-n", ns)
		if err != nil || !strings.Contains(out, "BINARYVERSION") || !strings.Contains(out, "1.37.2") {
			t.Errorf("kubectl get = %v\n%s%s", err, out, stderr)
		}
	})
	t.Run("apiservices", func(t *testing.T) {
		for _, name := range []string{"v1beta1.resource.k8s.io", "v1beta2.resource.k8s.io", "v1beta1.certificates.k8s.io",
			"v1beta1.coordination.k8s.io", "v1beta1.admissionregistration.k8s.io", "v1beta1.storagemigration.k8s.io"} {
			e2eutil.Eventually(t, 30*time.Second, "APIService "+name, func(c context.Context) (bool, error) {
				r := e.Do(t, http.MethodGet, "/apis/apiregistration.k8s.io/v1/apiservices/"+name, nil)
				return r.Code == http.StatusOK, nil
			})
		}
	})
	t.Run("storagemigration", func(t *testing.T) {
		beta := e.Clientset.StoragemigrationV1beta1().StorageVersionMigrations()
		svm, err := beta.Create(e2eutil.Ctx(t), &svmv1beta1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "secrets"},
			Spec: svmv1beta1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "secrets"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svm.Status = svmv1beta1.StorageVersionMigrationStatus{ResourceVersion: "5", Conditions: []metav1.Condition{{
			Type: string(svmv1beta1.MigrationSucceeded), Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()}}}
		if _, err = beta.UpdateStatus(e2eutil.Ctx(t), svm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		ga, err := e.Clientset.StoragemigrationV1().StorageVersionMigrations().Get(e2eutil.Ctx(t), "secrets", metav1.GetOptions{})
		if err != nil || ga.Status.ResourceVersion != "5" || ga.Status.Conditions[0].Type != string(svmv1.MigrationSucceeded) {
			t.Fatalf("read through v1: %+v %v", ga, err)
		}
		out, stderr, err := testkit.RunKubectl(t, e.Kubeconfig, nil, "get", "storageversionmigrations.v1beta1.storagemigration.k8s.io")
		if err != nil || !strings.Contains(out, "secrets") || !strings.Contains(out, "Succeeded") {
			t.Errorf("kubectl get = %v\n%s%s", err, out, stderr)
		}
	})
	t.Run("admissionregistration", func(t *testing.T) {
		ns := e.Namespace(t)
		policies := e.Clientset.AdmissionregistrationV1beta1().MutatingAdmissionPolicies()
		p := &arv1beta1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "label-beta"}, Spec: arv1beta1.MutatingAdmissionPolicySpec{
			MatchConstraints: &arv1beta1.MatchResources{ResourceRules: []arv1beta1.NamedRuleWithOperations{{RuleWithOperations: arv1beta1.RuleWithOperations{
				Operations: []arv1beta1.OperationType{arv1beta1.Create},
				Rule:       arv1beta1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			MatchConditions: []arv1beta1.MatchCondition{{Name: "prefix", Expression: `object.metadata.name.startsWith("beta-")`}},
			Mutations: []arv1beta1.Mutation{{PatchType: arv1beta1.PatchTypeApplyConfiguration, ApplyConfiguration: &arv1beta1.ApplyConfiguration{
				Expression: `Object{metadata: Object.metadata{labels: {"mutated": "beta"}}}`}}},
			ReinvocationPolicy: arv1beta1.NeverReinvocationPolicy,
		}}
		created, err := policies.Create(e2eutil.Ctx(t), p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if created.Spec.FailurePolicy == nil || *created.Spec.FailurePolicy != arv1beta1.Fail {
			t.Errorf("failurePolicy not defaulted: %v", created.Spec.FailurePolicy)
		}
		binding := &arv1beta1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "label-beta"},
			Spec: arv1beta1.MutatingAdmissionPolicyBindingSpec{PolicyName: "label-beta"}}
		if _, err := e.Clientset.AdmissionregistrationV1beta1().MutatingAdmissionPolicyBindings().Create(e2eutil.Ctx(t), binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Clientset.AdmissionregistrationV1().MutatingAdmissionPolicies().Get(e2eutil.Ctx(t), "label-beta", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		e2eutil.Eventually(t, 30*time.Second, "the v1beta1 policy mutates", func(c context.Context) (bool, error) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("beta")}}
			got, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(c, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err == nil && got.Labels["mutated"] == "beta", err
		})
		bad := p.DeepCopy()
		bad.Name = "bad"
		bad.Spec.Mutations[0].ApplyConfiguration.Expression = "1 +"
		_, err = policies.Create(e2eutil.Ctx(t), bad, metav1.CreateOptions{})
		e2eutil.WantCause(t, e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, ""), metav1.CauseTypeFieldValueInvalid, "spec.mutations[0].applyConfiguration.expression")
	})
}

// TestRuntimeConfigBeta: one beta resource turned on alone is served
// without the rest of its version; a version on with one resource off
// serves the others; api/all=true serves the beta versions.
func TestRuntimeConfigBeta(t *testing.T) {
	e := e2eutil.Start(t, "--runtime-config=resource.k8s.io/v1beta2/deviceclasses=true,certificates.k8s.io/v1beta1=true,certificates.k8s.io/v1beta1/podcertificaterequests=false")
	for path, want := range map[string]int{
		"/apis/resource.k8s.io/v1beta2/deviceclasses":                          http.StatusOK,
		"/apis/resource.k8s.io/v1beta2/resourceslices":                         http.StatusNotFound,
		"/apis/resource.k8s.io/v1beta1/deviceclasses":                          http.StatusNotFound,
		"/apis/certificates.k8s.io/v1beta1/clustertrustbundles":                http.StatusOK,
		"/apis/certificates.k8s.io/v1beta1/podcertificaterequests":             http.StatusNotFound,
		"/apis/storagemigration.k8s.io/v1beta1/storageversionmigrations":       http.StatusNotFound,
		"/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies": http.StatusNotFound,
	} {
		if r := e.Do(t, http.MethodGet, path, nil); r.Code != want {
			t.Errorf("GET %s = %d, want %d", path, r.Code, want)
		}
	}
	all := e2eutil.Start(t, "--runtime-config=api/all=true")
	if r := all.Do(t, http.MethodGet, "/apis/storagemigration.k8s.io/v1beta1/storageversionmigrations", nil); r.Code != http.StatusOK {
		t.Errorf("api/all=true: GET storageversionmigrations at v1beta1 = %d", r.Code)
	}
}
