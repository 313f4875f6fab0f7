package limitranger

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/admission"
)

// list returns a namespace's ranges: "ns" has lrs, "broken" fails.
func list(lrs ...corev1.LimitRange) Lister {
	return func(_ context.Context, namespace string) ([]corev1.LimitRange, error) {
		if namespace == "broken" {
			return nil, errors.New("etcd is down")
		}
		return lrs, nil
	}
}

func limitRange(items ...corev1.LimitRangeItem) corev1.LimitRange {
	return corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr"}, Spec: corev1.LimitRangeSpec{Limits: items}}
}

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func container(name string, requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func podOf(containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: containers}}
}

var (
	podKind = corev1.SchemeGroupVersion.WithKind("Pod")
	pvcKind = corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")
)

func podAttrs(op admission.Operation, sub string, obj, old runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: op, Kind: podKind, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
		Subresource: sub, Namespace: "ns", Name: "p", Object: obj, OldObject: old}
}

func claimAttrs(op admission.Operation, obj, old runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: op, Kind: pvcKind, Resource: corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"),
		Namespace: "ns", Name: "c", Object: obj, OldObject: old}
}

// defaults is a range giving containers cpu and memory defaults.
var defaults = limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer,
	Default: rl("cpu", "500m", "memory", "256Mi"), DefaultRequest: rl("cpu", "100m", "memory", "128Mi")})

// TestAdmitDefaults: containers get the defaults they lack, noted in
// kube's annotation (requests before limits, containers before init
// containers, names sorted).
func TestAdmitDefaults(t *testing.T) {
	pod := podOf(container("c", nil, nil), container("d", nil, rl("cpu", "200m")))
	pod.Spec.InitContainers = []corev1.Container{container("i", rl("cpu", "50m", "memory", "64Mi"), rl("cpu", "50m", "memory", "64Mi"))}
	if err := New(list(defaults)).Admit(context.Background(), podAttrs(admission.Create, "", pod, nil)); err != nil {
		t.Fatal(err)
	}
	want := map[string]corev1.ResourceRequirements{
		"c": {Requests: rl("cpu", "100m", "memory", "128Mi"), Limits: rl("cpu", "500m", "memory", "256Mi")},
		"d": {Requests: rl("cpu", "100m", "memory", "128Mi"), Limits: rl("cpu", "200m", "memory", "256Mi")},
		"i": {Requests: rl("cpu", "50m", "memory", "64Mi"), Limits: rl("cpu", "50m", "memory", "64Mi")},
	}
	for _, c := range append(pod.Spec.Containers, pod.Spec.InitContainers...) {
		if !reflect.DeepEqual(c.Resources, want[c.Name]) {
			t.Errorf("container %s: %+v, want %+v", c.Name, c.Resources, want[c.Name])
		}
	}
	note := "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c; " +
		"cpu, memory request for container d; memory limit for container d"
	if got := pod.Annotations["kubernetes.io/limit-ranger"]; got != note {
		t.Errorf("annotation %q, want %q", got, note)
	}

	full := podOf(container("c", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi")))
	if err := New(list(defaults)).Admit(context.Background(), podAttrs(admission.Create, "", full, nil)); err != nil || full.Annotations != nil {
		t.Errorf("a pod with everything set: %v, annotations %v", err, full.Annotations)
	}
}

// TestAdmitWhen: which writes get defaults.
func TestAdmitWhen(t *testing.T) {
	deleting := podOf()
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name    string
		a       *admission.Attributes
		applied bool
	}{
		{"create", podAttrs(admission.Create, "", podOf(container("c", nil, nil)), nil), true},
		{"resize", podAttrs(admission.Update, "resize", podOf(container("c", nil, nil)), podOf()), true},
		{"resize of a pod being deleted", podAttrs(admission.Update, "resize", podOf(container("c", nil, nil)), deleting), false},
		{"update", podAttrs(admission.Update, "", podOf(container("c", nil, nil)), podOf()), false},
		{"status", podAttrs(admission.Update, "status", podOf(container("c", nil, nil)), podOf()), false},
		{"ephemeral containers", podAttrs(admission.Update, "ephemeralcontainers", podOf(container("c", nil, nil)), podOf()), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := New(list(defaults)).Admit(context.Background(), tc.a); err != nil {
				t.Fatal(err)
			}
			_, applied := tc.a.Object.(*corev1.Pod).Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]
			if applied != tc.applied {
				t.Errorf("defaults applied: %t, want %t", applied, tc.applied)
			}
		})
	}
}

// TestValidate: the refusals, as kube words them, of pods and claims.
func TestValidate(t *testing.T) {
	containerMax := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1")})
	containerMin := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: rl("memory", "64Mi")})
	ratio := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "2")})
	podMax := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("cpu", "2")})
	claimRange := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Min: rl("storage", "1Gi"), Max: rl("storage", "10Gi")})
	claim := func(size string) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
		if size != "" {
			c.Spec.Resources.Requests = rl("storage", size)
		}
		return c
	}
	sidecar := func(c corev1.Container) corev1.Container {
		c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		return c
	}
	withInits := func(p *corev1.Pod, inits ...corev1.Container) *corev1.Pod {
		p.Spec.InitContainers = inits
		return p
	}
	podLevel := podOf(container("c", rl("cpu", "1"), rl("cpu", "1")))
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Requests: rl("cpu", "3"), Limits: rl("cpu", "3")}
	deleting := claim("1Gi")
	deleting.DeletionTimestamp = &metav1.Time{}

	for _, tc := range []struct {
		name string
		lr   corev1.LimitRange
		a    *admission.Attributes
		want string // "": admitted
	}{
		{"container within max", containerMax, podAttrs(admission.Create, "", podOf(container("c", rl("cpu", "1"), rl("cpu", "1"))), nil), ""},
		{"container limit over max", containerMax, podAttrs(admission.Create, "", podOf(container("c", nil, rl("cpu", "2"))), nil),
			`pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2`},
		{"container request over max", containerMax, podAttrs(admission.Create, "", podOf(container("c", rl("cpu", "1500m"), rl("cpu", "1"))), nil),
			`pods "p" is forbidden: maximum cpu usage per Container is 1, but request is 1500m`},
		{"container without limit under a max", containerMax, podAttrs(admission.Create, "", podOf(container("c", nil, nil)), nil),
			`pods "p" is forbidden: maximum cpu usage per Container is 1.  No limit is specified`},
		{"two containers over max", containerMax, podAttrs(admission.Create, "", podOf(container("a", nil, rl("cpu", "2")), container("b", nil, rl("cpu", "3"))), nil),
			`pods "p" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, maximum cpu usage per Container is 1, but limit is 3]`},
		{"init container over max", containerMax, podAttrs(admission.Create, "", withInits(podOf(), container("i", nil, rl("cpu", "4"))), nil),
			`pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 4`},
		{"container without request under a min", containerMin, podAttrs(admission.Create, "", podOf(container("c", nil, nil)), nil),
			`pods "p" is forbidden: minimum memory usage per Container is 64Mi.  No request is specified`},
		{"container request under min", containerMin, podAttrs(admission.Create, "", podOf(container("c", rl("memory", "32Mi"), nil)), nil),
			`pods "p" is forbidden: minimum memory usage per Container is 64Mi, but request is 32Mi`},
		{"container limit under min", containerMin, podAttrs(admission.Create, "", podOf(container("c", rl("memory", "64Mi"), rl("memory", "63Mi"))), nil),
			`pods "p" is forbidden: minimum memory usage per Container is 64Mi, but limit is 63Mi`},
		{"ratio within", ratio, podAttrs(admission.Create, "", podOf(container("c", rl("cpu", "500m"), rl("cpu", "1"))), nil), ""},
		{"ratio over", ratio, podAttrs(admission.Create, "", podOf(container("c", rl("cpu", "250m"), rl("cpu", "1"))), nil),
			`pods "p" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000`},
		{"ratio without request", ratio, podAttrs(admission.Create, "", podOf(container("c", nil, rl("cpu", "1"))), nil),
			`pods "p" is forbidden: cpu max limit to request ratio per Container is 2, but no request is specified or request is 0`},
		{"ratio with a zero limit", ratio, podAttrs(admission.Create, "", podOf(container("c", rl("cpu", "1"), rl("cpu", "0"))), nil),
			`pods "p" is forbidden: cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0`},
		{"pod sums its containers", podMax, podAttrs(admission.Create, "", podOf(container("a", rl("cpu", "1"), rl("cpu", "1")), container("b", rl("cpu", "1500m"), rl("cpu", "1500m"))), nil),
			`pods "p" is forbidden: maximum cpu usage per Pod is 2, but limit is 2500m`},
		{"pod counts its largest init container", podMax,
			podAttrs(admission.Create, "", withInits(podOf(container("c", rl("cpu", "1"), rl("cpu", "1"))), container("i", rl("cpu", "3"), rl("cpu", "3"))), nil),
			`pods "p" is forbidden: maximum cpu usage per Pod is 2, but limit is 3`},
		{"pod adds sidecars to its containers and to later init containers", podMax,
			podAttrs(admission.Create, "", withInits(podOf(container("c", rl("cpu", "1"), rl("cpu", "1"))),
				sidecar(container("s", rl("cpu", "1"), rl("cpu", "1"))), container("i", rl("cpu", "1500m"), rl("cpu", "1500m"))), nil),
			`pods "p" is forbidden: maximum cpu usage per Pod is 2, but limit is 2500m`},
		{"pod-level resources stand for the sums", podMax, podAttrs(admission.Create, "", podLevel, nil),
			`pods "p" is forbidden: maximum cpu usage per Pod is 2, but limit is 3`},
		{"resize over max", containerMax, podAttrs(admission.Update, "resize", podOf(container("c", nil, rl("cpu", "2"))), podOf()),
			`pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2`},
		{"pod update is not checked", containerMax, podAttrs(admission.Update, "", podOf(container("c", nil, rl("cpu", "2"))), podOf()), ""},
		{"pod status is not checked", containerMax, podAttrs(admission.Update, "status", podOf(container("c", nil, rl("cpu", "2"))), podOf()), ""},
		{"claim within", claimRange, claimAttrs(admission.Create, claim("5Gi"), nil), ""},
		{"claim under min", claimRange, claimAttrs(admission.Create, claim("500Mi"), nil),
			`persistentvolumeclaims "c" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi`},
		{"claim without request", claimRange, claimAttrs(admission.Create, claim(""), nil),
			`persistentvolumeclaims "c" is forbidden: [minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified, maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified]`},
		{"claim grown over max", claimRange, claimAttrs(admission.Update, claim("20Gi"), claim("5Gi")),
			`persistentvolumeclaims "c" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi`},
		{"claim being deleted", claimRange, claimAttrs(admission.Update, claim("20Gi"), deleting), ""},
		{"container ranges do not apply to claims", containerMax, claimAttrs(admission.Create, claim("20Gi"), nil), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := New(list(tc.lr)).Validate(context.Background(), tc.a)
			if tc.want == "" {
				if err != nil {
					t.Errorf("Validate = %v, want admitted", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tc.want {
				t.Errorf("Validate = %v\nwant 403 %s", err, tc.want)
			}
		})
	}
}

// TestRanges: every range is checked; a failed list refuses with kube's
// message; no ranges, or another resource, admit.
func TestRanges(t *testing.T) {
	ok := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "4")})
	strict := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1")})
	pod := podOf(container("c", rl("cpu", "2"), rl("cpu", "2")))
	if err := New(list(ok, strict)).Validate(context.Background(), podAttrs(admission.Create, "", pod, nil)); !apierrors.IsForbidden(err) {
		t.Errorf("the second range was not checked: %v", err)
	}
	if err := New(list()).Validate(context.Background(), podAttrs(admission.Create, "", pod, nil)); err != nil {
		t.Errorf("no ranges: %v", err)
	}
	broken := podAttrs(admission.Create, "", pod, nil)
	broken.Namespace = "broken"
	for name, call := range map[string]func(context.Context, *admission.Attributes) error{
		"Admit": New(list()).Admit, "Validate": New(list()).Validate,
	} {
		err := call(context.Background(), broken)
		var status apierrors.APIStatus
		if !errors.As(err, &status) || status.Status().Code != http.StatusForbidden ||
			err.Error() != `pods "p" is forbidden: unable to CREATE /v1, Resource=pods at this time because there was an error enforcing limit ranges` {
			t.Errorf("%s with a failed list: %v", name, err)
		}
	}
	cm := &admission.Attributes{Operation: admission.Create, Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "broken", Object: &corev1.ConfigMap{}}
	if err := New(list()).Validate(context.Background(), cm); err != nil {
		t.Errorf("a config map: %v", err)
	}
	p := New(list())
	if !p.Handles(admission.Create) || !p.Handles(admission.Update) || p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want creates and updates")
	}
}

// TestLargeQuantities: values past what milli-units hold compare whole.
func TestLargeQuantities(t *testing.T) {
	huge := resource.MustParse("5E")
	if err := maxConstraint("Container", corev1.ResourceMemory, huge, rl("memory", "4E"), rl("memory", "4E")); err != nil {
		t.Errorf("4E under 5E: %v", err)
	}
	err := maxConstraint("Container", corev1.ResourceMemory, huge, nil, rl("memory", "6E"))
	if err == nil || err.Error() != "maximum memory usage per Container is 5E, but limit is 6E" {
		t.Errorf("6E over 5E: %v", err)
	}
}
