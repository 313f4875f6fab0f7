package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// admissionConfigFile writes an AdmissionConfiguration (and the files it
// names) into a fresh directory and returns its path.
func admissionConfigFile(t *testing.T, config string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "admission.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// annotatedNamespace creates the named namespace with annotations.
func annotatedNamespace(t *testing.T, e *e2eutil.Env, name string, annotations map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
	if _, err := e.Clientset.CoreV1().Namespaces().Create(e2eutil.Ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func plainPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
}

// TestPodNodeSelector: pods gain their namespace's node selector (its
// annotation, else the configured cluster default), one that conflicts
// with it is refused, and the configured whitelist of a namespace holds.
func TestPodNodeSelector(t *testing.T) {
	cfg := admissionConfigFile(t, "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodNodeSelector\n  path: selectors.yaml\n",
		map[string]string{"selectors.yaml": "podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=dev\n  prod: env=prod,tier=web\n"})
	e := e2eutil.Start(t, "--enable-admission-plugins=PodNodeSelector", "--admission-control-config-file="+cfg)
	annotatedNamespace(t, e, "plain", nil)
	annotatedNamespace(t, e, "zoned", map[string]string{"scheduler.alpha.kubernetes.io/node-selector": "zone=a"})
	annotatedNamespace(t, e, "prod", map[string]string{"scheduler.alpha.kubernetes.io/node-selector": "env=prod"})
	for ns, want := range map[string]map[string]string{"plain": {"env": "dev"}, "zoned": {"zone": "a"}, "prod": {"env": "prod", "tier": "web"}} {
		p := plainPod("p")
		if ns == "prod" {
			p.Spec.NodeSelector = map[string]string{"tier": "web"}
		}
		got, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", ns, err)
		}
		if !equality.Semantic.DeepEqual(got.Spec.NodeSelector, want) {
			t.Errorf("%s: node selector %v, want %v", ns, got.Spec.NodeSelector, want)
		}
	}
	p := plainPod("q")
	p.Spec.NodeSelector = map[string]string{"zone": "b"}
	_, err := e.Clientset.CoreV1().Pods("zoned").Create(e2eutil.Ctx(t), p, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "q" is forbidden: pod node label selector conflicts with its namespace node label selector`)
	p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	_, err = e.Clientset.CoreV1().Pods("prod").Create(e2eutil.Ctx(t), p, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "q" is forbidden: pod node label selector labels conflict with its namespace whitelist`)
}

// TestPodTolerationRestriction: pods gain their namespace's default
// tolerations (else the configured ones) and, unless BestEffort, the
// memory-pressure toleration; a toleration outside the namespace's (or the
// cluster's) whitelist is refused with kube's error.
func TestPodTolerationRestriction(t *testing.T) {
	cfg := admissionConfigFile(t, `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodTolerationRestriction
  configuration:
    apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1
    kind: Configuration
    default:
    - {key: a, operator: Exists, effect: NoSchedule}
`, nil)
	e := e2eutil.Start(t, "--enable-admission-plugins=PodTolerationRestriction", "--admission-control-config-file="+cfg)
	annotatedNamespace(t, e, "plain", nil)
	annotatedNamespace(t, e, "strict", map[string]string{
		"scheduler.alpha.kubernetes.io/defaultTolerations":   `[{"key":"b","operator":"Exists","effect":"NoSchedule"}]`,
		"scheduler.alpha.kubernetes.io/tolerationsWhitelist": `[{"operator":"Exists","effect":"NoExecute"},{"key":"b","operator":"Exists"},{"key":"node.kubernetes.io/memory-pressure","operator":"Exists"}]`})
	a := corev1.Toleration{Key: "a", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	b := corev1.Toleration{Key: "b", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	memory := corev1.Toleration{Key: "node.kubernetes.io/memory-pressure", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

	got, err := e.Clientset.CoreV1().Pods("plain").Create(e2eutil.Ctx(t), plainPod("best-effort"), metav1.CreateOptions{})
	if want := append(kubeTolerations(300), a); err != nil || !equality.Semantic.DeepEqual(got.Spec.Tolerations, want) {
		t.Errorf("best effort pod: tolerations %+v (%v), want %+v", got.Spec.Tolerations, err, want)
	}
	burstable := plainPod("burstable")
	burstable.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	got, err = e.Clientset.CoreV1().Pods("strict").Create(e2eutil.Ctx(t), burstable, metav1.CreateOptions{})
	if want := append(kubeTolerations(300), b, memory); err != nil || !equality.Semantic.DeepEqual(got.Spec.Tolerations, want) {
		t.Errorf("burstable pod: tolerations %+v (%v), want %+v", got.Spec.Tolerations, err, want)
	}
	outside := plainPod("outside")
	outside.Spec.Tolerations = []corev1.Toleration{a}
	_, err = e.Clientset.CoreV1().Pods("strict").Create(e2eutil.Ctx(t), outside, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 500, metav1.StatusReasonUnknown, "pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist")
}

// TestLimitPodHardAntiAffinityTopology: required anti-affinity only by host.
func TestLimitPodHardAntiAffinityTopology(t *testing.T) {
	e := e2eutil.Start(t, "--enable-admission-plugins=LimitPodHardAntiAffinityTopology")
	ns := e.Namespace(t)
	p := plainPod("p")
	term := corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, TopologyKey: corev1.LabelTopologyZone}
	p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}}
	_, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), p, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden,
		`pods "p" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed`)
	p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey = corev1.LabelHostname
	if _, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestOwnerReferencesPermissionEnforcement: changing ownerReferences needs
// delete on the object; blockOwnerDeletion needs update on the owner's
// finalizers, and an owner kind the server serves.
func TestOwnerReferencesPermissionEnforcement(t *testing.T) {
	e := e2eutil.Start(t, "--enable-admission-plugins=OwnerReferencesPermissionEnforcement")
	ns := e.Namespace(t)
	owner := e.ConfigMap(t, ns, "owner", nil)
	grantVerbs(t, e, ns, "writer", []string{"configmaps"}, "create", "get", "update")
	grantVerbs(t, e, ns, "deleter", []string{"configmaps"}, "create", "get", "update", "delete")
	grantVerbs(t, e, ns, "finalizer", []string{"configmaps", "configmaps/finalizers"}, "create", "get", "update", "delete")
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}
	withRef := func(name string, r metav1.OwnerReference) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{r}}}
	}
	writer := e.ClientWith(t, func(cfg *rest.Config) { cfg.Impersonate.UserName = "writer" }).CoreV1().ConfigMaps(ns)
	deleter := e.ClientWith(t, func(cfg *rest.Config) { cfg.Impersonate.UserName = "deleter" }).CoreV1().ConfigMaps(ns)
	finalizer := e.ClientWith(t, func(cfg *rest.Config) { cfg.Impersonate.UserName = "finalizer" }).CoreV1().ConfigMaps(ns)

	// A create may set a reference without delete; an update may not.
	if _, err := writer.Create(e2eutil.Ctx(t), withRef("created", ref), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err := writer.Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.OwnerReferences = []metav1.OwnerReference{ref}
	_, err = writer.Update(e2eutil.Ctx(t), cm, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `configmaps "later" is forbidden: cannot set an ownerRef on a resource you can't delete: , <nil>`)
	if _, err := deleter.Update(e2eutil.Ctx(t), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	blocking := ref
	blocking.BlockOwnerDeletion = ptr.To(true)
	_, err = deleter.Create(e2eutil.Ctx(t), withRef("blocking", blocking), metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden,
		`configmaps "blocking" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>`)
	if _, err := finalizer.Create(e2eutil.Ctx(t), withRef("blocking", blocking), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	unknown := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Foo", Name: "f", UID: "u1", BlockOwnerDeletion: ptr.To(true)}
	_, err = finalizer.Create(e2eutil.Ctx(t), withRef("unknown", unknown), metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden,
		`configmaps "unknown" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion example.com/v1 Kind Foo: no matches for kind "Foo" in version "example.com/v1"`)
}

// grantVerbs binds user to a role of verbs on resources in ns.
func grantVerbs(t *testing.T, e *e2eutil.Env, ns, user string, resources []string, verbs ...string) {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: resources, Verbs: verbs}}}
	if _, err := e.Clientset.RbacV1().Roles(ns).Create(e2eutil.Ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	if _, err := e.Clientset.RbacV1().RoleBindings(ns).Create(e2eutil.Ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
