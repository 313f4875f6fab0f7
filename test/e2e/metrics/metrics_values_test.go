package metrics

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/test/e2e/e2eutil"
)

// podSecurityExemptions exempts the namespace "psa-exempt" from
// PodSecurity.
const podSecurityExemptions = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: privileged, audit: privileged, warn: privileged}
    exemptions: {namespaces: [psa-exempt]}
`

// sample sums, over the series of family whose labels include want, the
// counters' and gauges' values and the histograms' and summaries' counts.
func sample(mfs map[string]*dto.MetricFamily, family string, want map[string]string) float64 {
	mf := mfs[family]
	if mf == nil {
		return 0
	}
	var sum float64
	for _, m := range mf.Metric {
		if !hasLabels(m, want) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		case m.Summary != nil:
			sum += float64(m.Summary.GetSampleCount())
		}
	}
	return sum
}

// histogramSum adds the sums of the family's histograms with the labels.
func histogramSum(mfs map[string]*dto.MetricFamily, family string, want map[string]string) float64 {
	var sum float64
	for _, m := range mfs[family].GetMetric() {
		if hasLabels(m, want) && m.Histogram != nil {
			sum += m.Histogram.GetSampleSum()
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, lp := range m.Label {
		if v, ok := want[lp.GetName()]; ok && v == lp.GetValue() {
			found++
		}
	}
	return found == len(want)
}

// TestMetricFamiliesMove checks that the families kube counts in its
// plugins, allocators, authenticators, CRD validation and client loops
// move in capstan after the actions that move them in kube.
func TestMetricFamiliesMove(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "admission.yaml")
	if err := os.WriteFile(cfgFile, []byte(podSecurityExemptions), 0o600); err != nil {
		t.Fatal(err)
	}
	e := e2eutil.Start(t, "--admission-control-config-file="+cfgFile)
	cfg := rest.CopyConfig(e.Config)
	before := scrapeRaw(t, cfg, "/metrics")
	crd := podSecurityAndServices(t, e)
	crdValidation(t, e, crd)
	legacyToken(t, e)
	after := scrapeRaw(t, cfg, "/metrics")

	moved := []struct {
		family string
		labels map[string]string
	}{
		{"apiserver_admission_controller_admission_duration_seconds", map[string]string{"name": "NamespaceLifecycle", "type": "admit"}},
		{"pod_security_evaluations_total", map[string]string{"decision": "deny", "mode": "warn", "resource": "controller", "policy_level": "restricted"}},
		{"pod_security_exemptions_total", map[string]string{"request_operation": "create", "resource": "controller"}},
		{"kube_apiserver_clusterip_allocator_allocation_total", map[string]string{"scope": "dynamic"}},
		{"kube_apiserver_clusterip_allocator_allocation_duration_seconds", nil},
		{"kube_apiserver_nodeport_allocator_allocation_total", map[string]string{"scope": "dynamic"}},
		{"apiserver_cel_compilation_duration_seconds", nil},
		{"apiserver_cel_evaluation_duration_seconds", nil},
		{"apiextensions_apiserver_validation_ratcheting_seconds", nil},
		{"serviceaccount_legacy_tokens_total", nil},
		{"serviceaccount_legacy_manual_token_uses_total", nil},
		{"authentication_token_cache_request_total", map[string]string{"status": "miss"}},
		{"authentication_token_cache_request_total", map[string]string{"status": "hit"}},
		{"authentication_token_cache_request_duration_seconds", nil},
		{"authentication_token_cache_fetch_total", map[string]string{"status": "ok"}},
		{"apiserver_client_certificate_expiration_seconds", nil},
		{"workqueue_adds_total", nil},
		{"workqueue_work_duration_seconds", nil},
		{"rest_client_requests_total", nil},
		{"rest_client_request_duration_seconds", nil},
		{"grpc_client_started_total", nil},
		{"grpc_client_handled_total", map[string]string{"grpc_code": "OK"}},
		{"apiserver_request_filter_duration_seconds", map[string]string{"filter": "authentication"}},
		{"apiserver_request_filter_duration_seconds", map[string]string{"filter": "audit"}},
		{"apiserver_request_filter_duration_seconds", map[string]string{"filter": "impersonation"}},
		{"apiserver_request_filter_duration_seconds", map[string]string{"filter": "priorityandfairness"}},
		{"apiserver_request_filter_duration_seconds", map[string]string{"filter": "authorization"}},
		{"aggregator_discovery_aggregation_count_total", nil},
		{"apiserver_flowcontrol_watch_count_samples", map[string]string{"priority_level": "workload-low", "flow_schema": "service-accounts"}},
		// The in-process loops watch namespaces through the cache.
		{"apiserver_watch_events_dispatch_duration_seconds", map[string]string{"resource": "namespaces", "stage": "storage_to_cache"}},
		{"apiserver_watch_events_dispatch_duration_seconds", map[string]string{"resource": "namespaces", "stage": "cache_to_watcher"}},
		{"apiserver_watch_events_dispatch_duration_seconds", map[string]string{"resource": "namespaces", "stage": "total"}},
	}
	for _, m := range moved {
		if b, a := sample(before, m.family, m.labels), sample(after, m.family, m.labels); a <= b {
			t.Errorf("%s%v did not move: %v before, %v after", m.family, m.labels, b, a)
		}
	}
	// Timing histograms count time whatever their value: their sums, the
	// value integrated over time, move only while requests are there.
	integrated := []struct {
		family string
		labels map[string]string
	}{
		{"apiserver_flowcontrol_priority_level_request_utilization", map[string]string{"phase": "executing", "priority_level": "workload-low"}},
		{"apiserver_flowcontrol_priority_level_seat_utilization", map[string]string{"phase": "executing", "priority_level": "workload-low"}},
		{"apiserver_flowcontrol_demand_seats", map[string]string{"priority_level": "workload-low"}},
		{"apiserver_flowcontrol_read_vs_write_current_requests", map[string]string{"phase": "executing", "request_kind": "mutating"}},
		{"apiserver_flowcontrol_read_vs_write_current_requests", map[string]string{"phase": "executing", "request_kind": "readOnly"}},
	}
	for _, m := range integrated {
		if b, a := histogramSum(before, m.family, m.labels), histogramSum(after, m.family, m.labels); a <= b {
			t.Errorf("%s%v: its sum did not move: %v before, %v after", m.family, m.labels, b, a)
		}
	}
	present := []struct {
		family string
		labels map[string]string
	}{
		{"kube_apiserver_clusterip_allocator_allocated_ips", nil},
		{"kube_apiserver_nodeport_allocator_allocated_ports", nil},
		{"apiextensions_openapi_v2_regeneration_count", map[string]string{"crd": crd, "reason": "add"}},
		{"apiextensions_openapi_v3_regeneration_count", map[string]string{"crd": crd, "reason": "add", "version": "v1"}},
		{"kubernetes_feature_enabled", map[string]string{"name": "APIResponseCompression", "stage": "BETA"}},
		{"kubernetes_feature_enabled", map[string]string{"name": "CRDValidationRatcheting", "stage": ""}},
		{"apiserver_flowcontrol_current_r", map[string]string{"priority_level": "workload-low"}},
		{"apiserver_flowcontrol_target_seats", map[string]string{"priority_level": "workload-low"}},
		{"apiserver_flowcontrol_seat_fair_frac", nil},
	}
	for _, p := range present {
		mf := after[p.family]
		found := false
		for _, m := range mf.GetMetric() {
			found = found || hasLabels(m, p.labels) && (m.Gauge == nil || m.Gauge.GetValue() > 0)
		}
		if !found {
			t.Errorf("no series %s%v (with a value above 0 for a gauge)", p.family, p.labels)
		}
	}
}

// podSecurityAndServices creates deployments that PodSecurity warns of and
// exempts, and a NodePort Service; it returns the name of a CRD to make.
func podSecurityAndServices(t *testing.T, e *e2eutil.Env) string {
	c := e.Clientset
	warned := e2eutil.Unique("psa-warn")
	for name, labels := range map[string]map[string]string{warned: {"pod-security.kubernetes.io/warn": "restricted"}, "psa-exempt": nil} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		must(t, func() error {
			_, err := c.CoreV1().Namespaces().Create(e2eutil.Ctx(t), ns, metav1.CreateOptions{})
			return err
		})
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		}}
		must(t, func() error {
			_, err := c.AppsV1().Deployments(name).Create(e2eutil.Ctx(t), d, metav1.CreateOptions{})
			return err
		})
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
		Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}}}
	must(t, func() error {
		_, err := c.CoreV1().Services(warned).Create(e2eutil.Ctx(t), svc, metav1.CreateOptions{})
		return err
	})
	return "checks." + e2eutil.Unique("metrics") + ".example.com"
}

// crdValidation creates the CRD name with a CEL rule, and creates and
// updates one of its objects.
func crdValidation(t *testing.T, e *e2eutil.Env, name string) {
	group := name[len("checks."):]
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "checks", "kind": "Check"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer"}},
						"x-kubernetes-validations": []any{map[string]any{"rule": "self.a >= 0"}}}}}}}}},
	}
	dyn := dynamic.NewForConfigOrDie(rest.CopyConfig(e.Config))
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	must(t, func() error {
		_, err := crds.Create(e2eutil.Ctx(t), &unstructured.Unstructured{Object: crd}, metav1.CreateOptions{})
		return err
	})
	checks := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "checks"}).Namespace("default")
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Check",
		"metadata": map[string]any{"name": "c"}, "spec": map[string]any{"a": int64(1)}}}
	e2eutil.Eventually(t, 30*time.Second, "the custom resource is served", func(ctx context.Context) (bool, error) {
		_, err := checks.Create(ctx, obj, metav1.CreateOptions{})
		return err == nil, nil
	})
	must(t, func() error {
		_, err := checks.Patch(e2eutil.Ctx(t), "c", types.MergePatchType, []byte(`{"spec":{"a":2}}`), metav1.PatchOptions{})
		return err
	})
}

// legacyToken authenticates twice with a secret-based service account
// token that no service account lists (a manual legacy token).
func legacyToken(t *testing.T, e *e2eutil.Env) {
	c := e.Clientset
	ns := e.Namespace(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}}
	must(t, func() error {
		_, err := c.CoreV1().ServiceAccounts(ns).Create(e2eutil.Ctx(t), sa, metav1.CreateOptions{})
		return err
	})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "legacy-token", Annotations: map[string]string{corev1.ServiceAccountNameKey: "legacy"}},
		Type: corev1.SecretTypeServiceAccountToken}
	must(t, func() error {
		_, err := c.CoreV1().Secrets(ns).Create(e2eutil.Ctx(t), secret, metav1.CreateOptions{})
		return err
	})
	var token string
	e2eutil.Eventually(t, 30*time.Second, "the token controller fills the secret", func(ctx context.Context) (bool, error) {
		s, err := c.CoreV1().Secrets(ns).Get(ctx, "legacy-token", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		token = string(s.Data[corev1.ServiceAccountTokenKey])
		return token != "", nil
	})
	cfg := rest.AnonymousClientConfig(rest.CopyConfig(e.Config))
	cfg.BearerToken = token
	client := kubernetes.NewForConfigOrDie(cfg)
	for range 2 {
		// Authenticated, then refused or not by RBAC: either way the token was read.
		_, _ = client.CoreV1().ConfigMaps(ns).List(e2eutil.Ctx(t), metav1.ListOptions{})
	}
	// A write by the service account, allowed: the first request of the
	// test that is not exempt from API Priority and Fairness (the
	// service-accounts schema, the workload-low level).
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "legacy-edit"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "legacy", Namespace: ns}}}
	must(t, func() error {
		_, err := c.RbacV1().RoleBindings(ns).Create(e2eutil.Ctx(t), binding, metav1.CreateOptions{})
		return err
	})
	e2eutil.Eventually(t, 30*time.Second, "the service account writes a config map", func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "by-legacy"}}, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), nil
	})
}
