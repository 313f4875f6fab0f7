package podsecurity

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	capreq "github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/warning"
)

const configData = `apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
exemptions:
  usernames: [admin]
  runtimeClasses: [kata]
  namespaces: [exempt]
`

// namespaceLabels are the namespaces the tests' getter knows; "broken"
// cannot be read.
var namespaceLabels = map[string]map[string]string{
	"baseline":   {api.EnforceLevelLabel: "baseline"},
	"warn":       {api.WarnLevelLabel: "restricted"},
	"privileged": nil,
	"exempt":     {api.EnforceLevelLabel: "restricted"},
	"invalid":    {api.EnforceLevelLabel: "bogus"},
}

func namespaces(_ context.Context, name string) (*corev1.Namespace, error) {
	labels, ok := namespaceLabels[name]
	if !ok {
		return nil, errors.New("etcd is down")
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, nil
}

func newPlugin(t *testing.T, pods PodLister) *Plugin {
	t.Helper()
	p, err := New([]byte(configData), namespaces, pods)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func noPods(context.Context, string) ([]corev1.Pod, error) { return nil, nil }

func privilegedPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "app:1", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}}}
}

func plainPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "app:1"}}}}
}

// recorder is a request context that keeps its audit annotations and
// warnings.
type recorder struct {
	ctx         context.Context
	header      http.Header
	ac          *audit.Context
	annotations map[string]string
}

type sinkFunc func(...*auditv1.Event) bool

func (f sinkFunc) ProcessEvents(events ...*auditv1.Event) bool { return f(events...) }

func newRecorder(u *authn.User) *recorder {
	r := &recorder{header: http.Header{}}
	sink := sinkFunc(func(events ...*auditv1.Event) bool {
		r.annotations = maps.Clone(events[0].Annotations)
		return true
	})
	policy := audit.NewPolicy(&auditv1.Policy{Rules: []auditv1.PolicyRule{{Level: auditv1.LevelMetadata}}})
	ctx, ac := audit.NewContext(context.Background(), audit.Config{Policy: policy, Sink: sink}, "id", time.Time{})
	ac.Evaluate(u, &capreq.Info{})
	if u != nil {
		ctx = authn.WithUser(ctx, u)
	}
	r.ctx, r.ac = warning.WithHeader(ctx, r.header), ac
	return r
}

// audited are the request's PodSecurity audit annotations, without their
// prefix.
func (r *recorder) audited() map[string]string {
	r.ac.ProcessStage(auditv1.StageResponseComplete)
	out := map[string]string{}
	for k, v := range r.annotations {
		out[k[len(api.AuditAnnotationPrefix):]] = v
	}
	return out
}

func (r *recorder) warnings() []string { return r.header.Values("Warning") }

func warnings(msgs ...string) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, warning.Header(m))
	}
	return out
}

func podAttrs(op admission.Operation, ns, sub string, obj, old runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: op, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Subresource: sub,
		Namespace: ns, Name: "p", Object: obj, OldObject: old}
}

const privilegedDetail = `privileged (container "c" must not set securityContext.privileged=true)`

// TestValidatePod: pods are enforced; what is refused, with kube's codes
// and messages, and the audit annotations and warnings kube gives.
func TestValidatePod(t *testing.T) {
	admin := &authn.User{Name: "admin"}
	kata := privilegedPod("p")
	kata.Spec.RuntimeClassName = ptr.To("kata")
	newImage := privilegedPod("p")
	newImage.Spec.Containers[0].Image = "app:2"
	relabelled := privilegedPod("p")
	relabelled.Labels = map[string]string{"a": "b"}
	debug := privilegedPod("p")
	debug.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "d", Image: "busybox"}}}
	for _, tc := range []struct {
		name      string
		user      *authn.User
		a         *admission.Attributes
		code      int32
		message   string
		annotated map[string]string
		warned    []string
	}{
		{name: "privileged pod under baseline", a: podAttrs(admission.Create, "baseline", "", privilegedPod("p"), nil),
			code: http.StatusForbidden, message: `pods "p" is forbidden: violates PodSecurity "baseline:latest": ` + privilegedDetail,
			annotated: map[string]string{"enforce-policy": "baseline:latest"}},
		{name: "plain pod under baseline", a: podAttrs(admission.Create, "baseline", "", plainPod("p"), nil),
			annotated: map[string]string{"enforce-policy": "baseline:latest"}},
		{name: "privileged namespace", a: podAttrs(admission.Create, "privileged", "", privilegedPod("p"), nil),
			annotated: map[string]string{"enforce-policy": "privileged:latest"}},
		{name: "warned, not refused", a: podAttrs(admission.Create, "warn", "", privilegedPod("p"), nil),
			annotated: map[string]string{"enforce-policy": "privileged:latest"},
			warned:    warnings(`would violate PodSecurity "restricted:latest": ` + privilegedDetail + `, allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`)},
		{name: "exempt namespace", a: podAttrs(admission.Create, "exempt", "", privilegedPod("p"), nil),
			annotated: map[string]string{"exempt": "namespace"}},
		{name: "exempt user", user: admin, a: podAttrs(admission.Create, "baseline", "", privilegedPod("p"), nil),
			annotated: map[string]string{"exempt": "user"}},
		{name: "user not exempt", user: &authn.User{Name: "bob"}, a: podAttrs(admission.Create, "baseline", "", privilegedPod("p"), nil),
			code: http.StatusForbidden, message: `pods "p" is forbidden: violates PodSecurity "baseline:latest": ` + privilegedDetail,
			annotated: map[string]string{"enforce-policy": "baseline:latest"}},
		{name: "exempt runtime class", a: podAttrs(admission.Create, "baseline", "", kata, nil),
			annotated: map[string]string{"exempt": "runtimeClass"}},
		{name: "namespace that cannot be read", a: podAttrs(admission.Create, "broken", "", plainPod("p"), nil),
			code: http.StatusInternalServerError, message: `Internal error occurred: failed to lookup namespace "broken"`,
			annotated: map[string]string{"error": `Internal error occurred: failed to lookup namespace "broken": etcd is down`}},
		{name: "update that changes no image", a: podAttrs(admission.Update, "baseline", "", relabelled, privilegedPod("p")),
			annotated: map[string]string{}},
		{name: "update that changes an image", a: podAttrs(admission.Update, "baseline", "", newImage, privilegedPod("p")),
			code: http.StatusForbidden, message: `pods "p" is forbidden: violates PodSecurity "baseline:latest": ` + privilegedDetail,
			annotated: map[string]string{"enforce-policy": "baseline:latest"}},
		{name: "an ephemeral container added", a: podAttrs(admission.Update, "baseline", "ephemeralcontainers", debug, privilegedPod("p")),
			code: http.StatusForbidden, message: `pods "p" is forbidden: violates PodSecurity "baseline:latest": ` + privilegedDetail,
			annotated: map[string]string{"enforce-policy": "baseline:latest"}},
		{name: "status is not checked", a: podAttrs(admission.Update, "broken", "status", privilegedPod("p"), plainPod("p")),
			annotated: map[string]string{}},
		{name: "binding is not checked", a: podAttrs(admission.Create, "broken", "binding", &corev1.Binding{}, nil),
			annotated: map[string]string{}},
		{name: "not a pod", a: podAttrs(admission.Create, "baseline", "", &corev1.Service{}, nil),
			code: http.StatusBadRequest, message: "failed to decode pod", annotated: map[string]string{"error": "failed to decode pod"}},
		{name: "old object not a pod", a: podAttrs(admission.Update, "baseline", "", plainPod("p"), &corev1.Service{}),
			code: http.StatusBadRequest, message: "failed to decode old pod", annotated: map[string]string{"error": "failed to decode old pod"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder(tc.user)
			err := newPlugin(t, noPods).Validate(r.ctx, tc.a)
			if tc.code == 0 {
				if err != nil {
					t.Errorf("Validate = %v, want admitted", err)
				}
			} else {
				var status apierrors.APIStatus
				if !errors.As(err, &status) || status.Status().Code != tc.code || status.Status().Message != tc.message {
					t.Errorf("Validate = %v, want %d %q", err, tc.code, tc.message)
				}
			}
			if got := r.audited(); !reflect.DeepEqual(got, tc.annotated) {
				t.Errorf("audit annotations %v, want %v", got, tc.annotated)
			}
			if got := r.warnings(); !reflect.DeepEqual(got, tc.warned) {
				t.Errorf("warnings %q, want %q", got, tc.warned)
			}
		})
	}
}

// TestInvalidLabels: a namespace's enforce label that does not parse is
// enforced as restricted (kube's library fails closed), and told in an
// audit annotation.
func TestInvalidLabels(t *testing.T) {
	r := newRecorder(nil)
	err := newPlugin(t, noPods).Validate(r.ctx, podAttrs(admission.Create, "invalid", "", plainPod("p"), nil))
	want := `pods "p" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("Validate = %v, want 403 %s", err, want)
	}
	annotated := map[string]string{"enforce-policy": "restricted:latest",
		"error": `Failed to parse policy: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted`}
	if got := r.audited(); !reflect.DeepEqual(got, annotated) {
		t.Errorf("audit annotations %v, want %v", got, annotated)
	}
}

// TestValidateTemplate: workload templates are warned of, never refused.
func TestValidateTemplate(t *testing.T) {
	deployment := func(ns, sub string) *admission.Attributes {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}}
		d.Spec.Template.Spec = privilegedPod("").Spec
		return &admission.Attributes{Operation: admission.Create, Resource: appsv1.SchemeGroupVersion.WithResource("deployments"),
			Subresource: sub, Namespace: ns, Name: "d", Object: d}
	}
	for _, tc := range []struct {
		name      string
		a         *admission.Attributes
		annotated map[string]string
		warned    []string
	}{
		{"violates the warn level", deployment("baseline", ""), map[string]string{},
			warnings(`would violate PodSecurity "baseline:latest": ` + privilegedDetail)},
		{"privileged namespace", deployment("privileged", ""), map[string]string{}, nil},
		{"exempt namespace", deployment("exempt", ""), map[string]string{"exempt": "namespace"}, nil},
		{"namespace that cannot be read", deployment("broken", ""),
			map[string]string{"error": `failed to lookup namespace "broken": etcd is down`}, nil},
		{"scale is not checked", deployment("baseline", "scale"), map[string]string{}, nil},
		{"not a workload", &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"),
			Namespace: "baseline", Object: &corev1.ConfigMap{}}, map[string]string{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder(nil)
			if err := newPlugin(t, noPods).Validate(r.ctx, tc.a); err != nil {
				t.Errorf("Validate = %v, want admitted", err)
			}
			if got := r.audited(); !reflect.DeepEqual(got, tc.annotated) {
				t.Errorf("audit annotations %v, want %v", got, tc.annotated)
			}
			if got := r.warnings(); !reflect.DeepEqual(got, tc.warned) {
				t.Errorf("warnings %q, want %q", got, tc.warned)
			}
		})
	}
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func nsAttrs(op admission.Operation, obj, old runtime.Object) *admission.Attributes {
	a := &admission.Attributes{Operation: op, Resource: corev1.SchemeGroupVersion.WithResource("namespaces"), Object: obj, OldObject: old}
	if ns, ok := obj.(*corev1.Namespace); ok {
		a.Name = ns.Name
	}
	return a
}

// TestValidateNamespace: invalid labels are refused; raising the enforce
// level warns of the pods it would refuse.
func TestValidateNamespace(t *testing.T) {
	existing := []corev1.Pod{*privilegedPod("b"), *privilegedPod("a"), *plainPod("c")}
	listed := func(context.Context, string) ([]corev1.Pod, error) { return existing, nil }
	failing := func(context.Context, string) ([]corev1.Pod, error) { return nil, errors.New("etcd is down") }
	baseline := map[string]string{api.EnforceLevelLabel: "baseline"}
	bogus := map[string]string{api.EnforceLevelLabel: "bogus"}
	for _, tc := range []struct {
		name    string
		pods    PodLister
		a       *admission.Attributes
		code    int32
		message string
		warned  []string
	}{
		{name: "create with valid labels", pods: failing, a: nsAttrs(admission.Create, namespace("ns", baseline), nil)},
		{name: "create with invalid labels", a: nsAttrs(admission.Create, namespace("ns", bogus), nil), code: http.StatusUnprocessableEntity,
			message: `Namespace "ns" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted`},
		{name: "create of an exempt namespace with labels", a: nsAttrs(admission.Create, namespace("exempt", baseline), nil),
			warned: warnings(`namespace "exempt" is exempt from Pod Security, and the policy (enforce=baseline:latest) will be ignored`)},
		{name: "enforce raised", pods: listed, a: nsAttrs(admission.Update, namespace("ns", baseline), namespace("ns", nil)),
			warned: warnings(`existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"`, "a (and 1 other pod): privileged")},
		{name: "enforce raised, pods cannot be listed", pods: failing, a: nsAttrs(admission.Update, namespace("ns", baseline), namespace("ns", nil)),
			warned: warnings("failed to list pods while checking new PodSecurity enforce level")},
		{name: "enforce raised on an exempt namespace", pods: failing, a: nsAttrs(admission.Update, namespace("exempt", baseline), namespace("exempt", nil)),
			warned: warnings(`namespace "exempt" is exempt from Pod Security, and the policy (enforce=baseline:latest) will be ignored`)},
		{name: "enforce lowered", pods: failing, a: nsAttrs(admission.Update, namespace("ns", nil), namespace("ns", baseline))},
		{name: "enforce unchanged", pods: failing, a: nsAttrs(admission.Update, namespace("ns", baseline), namespace("ns", baseline))},
		{name: "labels as invalid as before", a: nsAttrs(admission.Update, namespace("ns", bogus), namespace("ns", bogus))},
		{name: "labels made invalid", a: nsAttrs(admission.Update, namespace("ns", bogus), namespace("ns", nil)), code: http.StatusUnprocessableEntity,
			message: `Namespace "ns" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted`},
		{name: "status is not checked", a: &admission.Attributes{Operation: admission.Update, Resource: corev1.SchemeGroupVersion.WithResource("namespaces"),
			Subresource: "status", Name: "ns", Object: namespace("ns", bogus), OldObject: namespace("ns", nil)}},
		{name: "not a namespace", a: nsAttrs(admission.Create, &corev1.Pod{}, nil), code: http.StatusBadRequest, message: "failed to decode namespace"},
		{name: "old object not a namespace", a: nsAttrs(admission.Update, namespace("ns", nil), &corev1.Pod{}), code: http.StatusBadRequest,
			message: "failed to decode  old namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder(nil)
			err := newPlugin(t, tc.pods).Validate(r.ctx, tc.a)
			if tc.code == 0 {
				if err != nil {
					t.Errorf("Validate = %v, want admitted", err)
				}
			} else {
				var status apierrors.APIStatus
				if !errors.As(err, &status) || status.Status().Code != tc.code || status.Status().Message != tc.message {
					t.Errorf("Validate = %v, want %d %q", err, tc.code, tc.message)
				}
			}
			if got := r.warnings(); !reflect.DeepEqual(got, tc.warned) {
				t.Errorf("warnings %q, want %q", got, tc.warned)
			}
		})
	}
}

// TestPodWarningsBound: at most 3000 pods are checked, one of each
// controller first; pods of exempt runtime classes are not counted.
func TestPodWarningsBound(t *testing.T) {
	enforce := api.LevelVersion{Level: api.LevelBaseline, Version: api.LatestVersion()}
	owned := func(i int) corev1.Pod {
		p := *plainPod(fmt.Sprintf("rs-%04d", i))
		p.OwnerReferences = []metav1.OwnerReference{{UID: "rs", Controller: ptr.To(true), Name: "rs", Kind: "ReplicaSet", APIVersion: "apps/v1"}}
		return p
	}
	var many []corev1.Pod
	for i := range maxPodsToCheck {
		many = append(many, owned(i))
	}
	many = append(many, *privilegedPod("z"))
	p := newPlugin(t, func(context.Context, string) ([]corev1.Pod, error) { return many, nil })
	want := []string{"new PodSecurity enforce level only checked against the first 3000 of 3001 existing pods",
		`existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"`, "z: privileged"}
	if got := p.podWarnings(context.Background(), "ns", enforce); !reflect.DeepEqual(got, want) {
		t.Errorf("3001 pods, one controller's first: %q, want %q", got, want)
	}

	var exemptToo []corev1.Pod
	for i := range maxPodsToCheck {
		exemptToo = append(exemptToo, *plainPod(fmt.Sprintf("p-%04d", i)))
	}
	for i := range 5 {
		k := privilegedPod(fmt.Sprintf("kata-%d", i))
		k.Spec.RuntimeClassName = ptr.To("kata")
		exemptToo = append(exemptToo, *k)
	}
	p = newPlugin(t, func(context.Context, string) ([]corev1.Pod, error) { return exemptToo, nil })
	if got := p.podWarnings(context.Background(), "ns", enforce); got != nil {
		t.Errorf("3000 pods and 5 exempt ones: %q, want no warnings", got)
	}
}

// TestSignificantUpdate: only images, and containers added or removed,
// are worth checking again.
func TestSignificantUpdate(t *testing.T) {
	base := func() *corev1.Pod {
		p := plainPod("p")
		p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "init:1"}}
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "d", Image: "busybox"}}}
		return p
	}
	for _, tc := range []struct {
		name   string
		change func(*corev1.Pod)
		want   bool
	}{
		{"nothing", func(*corev1.Pod) {}, false},
		{"labels and security context", func(p *corev1.Pod) {
			p.Labels = map[string]string{"a": "b"}
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}, false},
		{"container image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "app:2" }, true},
		{"init container image", func(p *corev1.Pod) { p.Spec.InitContainers[0].Image = "init:2" }, true},
		{"container added", func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "x"}) }, true},
		{"init container removed", func(p *corev1.Pod) { p.Spec.InitContainers = nil }, true},
		{"ephemeral container added", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e"}})
		}, true},
		{"ephemeral container image", func(p *corev1.Pod) { p.Spec.EphemeralContainers[0].Image = "other" }, true},
		{"ephemeral container removed", func(p *corev1.Pod) { p.Spec.EphemeralContainers = nil }, false},
	} {
		pod := base()
		tc.change(pod)
		if got := significantUpdate(pod, base()); got != tc.want {
			t.Errorf("%s: significant %t, want %t", tc.name, got, tc.want)
		}
	}
}

// TestParseConfiguration: none is kube's default, everything privileged
// at the latest version; kinds, fields and levels are checked.
func TestParseConfiguration(t *testing.T) {
	c, p, err := ParseConfiguration(nil)
	latest := api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()}
	if err != nil || !reflect.DeepEqual(p, api.Policy{Enforce: latest, Audit: latest, Warn: latest}) || !reflect.DeepEqual(c.Exemptions, Exemptions{}) {
		t.Errorf("no configuration: %+v %+v %v", c, p, err)
	}
	_, p, err = ParseConfiguration([]byte("apiVersion: pod-security.admission.config.k8s.io/v1beta1\nkind: PodSecurityConfiguration\n" +
		"defaults:\n  enforce: baseline\n  enforce-version: v1.30\n  warn: restricted\n"))
	want := api.Policy{Enforce: api.LevelVersion{Level: api.LevelBaseline, Version: api.MajorMinorVersion(1, 30)}, Audit: latest,
		Warn: api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}}
	if err != nil || !reflect.DeepEqual(p, want) {
		t.Errorf("defaults: %+v %v, want %+v", p, err, want)
	}
	for _, tc := range []struct{ data, want string }{
		{"apiVersion: v1\nkind: PodSecurityConfiguration\n", `unexpected configuration v1, kind "PodSecurityConfiguration"`},
		{"apiVersion: pod-security.admission.config.k8s.io/v1\nkind: Other\n", `unexpected configuration pod-security.admission.config.k8s.io/v1, kind "Other"`},
		{"apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: strict\n", `must be one of privileged, baseline, restricted`},
		{"apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  audit-version: one\n", `must be "latest" or "v1.x"`},
		{"apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\nexemption: {}\n", `error unmarshaling JSON: while decoding JSON: json: unknown field "exemption"`},
	} {
		if _, _, err := ParseConfiguration([]byte(tc.data)); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %q", tc.data, err, tc.want)
		}
	}
}

func TestHandles(t *testing.T) {
	p := newPlugin(t, noPods)
	if !p.Handles(admission.Create) || !p.Handles(admission.Update) || p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want creates and updates")
	}
}
