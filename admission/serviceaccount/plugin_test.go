package serviceaccount

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/admission"
)

// read is one call of the getter.
type read struct {
	name   string
	cached bool
}

// accounts is a getter over the accounts of namespace "ns", recording its
// reads; "broken" cannot be read and any other is not found.
type accounts struct {
	byName map[string]*corev1.ServiceAccount
	reads  []read
	// readableAfter, when set, makes the missing default account readable
	// uncached once that many reads were made (the controller made it).
	readableAfter int
}

func (g *accounts) get(_ context.Context, namespace, name string, cached bool) (*corev1.ServiceAccount, error) {
	g.reads = append(g.reads, read{name, cached})
	if name == "broken" {
		return nil, errors.New("etcd is down")
	}
	if sa, ok := g.byName[name]; ok && namespace == "ns" {
		return sa, nil
	}
	if name == DefaultName && g.readableAfter > 0 && !cached && len(g.reads)-1 >= g.readableAfter {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("serviceaccounts"), name)
}

// newPlugin reads accounts from g, names token volumes kube-api-access-xyz12
// and retries without waiting.
func newPlugin(g *accounts) *Plugin {
	p := New(g.get)
	p.generateName = func(prefix string) string { return prefix + "xyz12" }
	p.retryWait = func() time.Duration { return 0 }
	return p
}

func account(name string, mutate ...func(*corev1.ServiceAccount)) *corev1.ServiceAccount {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	for _, m := range mutate {
		m(sa)
	}
	return sa
}

func enforcing(secrets ...string) func(*corev1.ServiceAccount) {
	return func(sa *corev1.ServiceAccount) {
		sa.Annotations = map[string]string{enforceMountableSecrets: "true"}
		for _, s := range secrets {
			sa.Secrets = append(sa.Secrets, corev1.ObjectReference{Name: s})
		}
	}
}

func attrs(op admission.Operation, sub string, obj, old runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: op, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Subresource: sub,
		Namespace: "ns", Name: "p", Object: obj, OldObject: old}
}

func pod(sa string, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{ServiceAccountName: sa, Containers: containers}}
}

var tokenMount = corev1.VolumeMount{Name: "kube-api-access-xyz12", ReadOnly: true, MountPath: mountPath}

// TestAdmitMutations: a new pod's account, token volume, mounts and pull
// secrets.
func TestAdmitMutations(t *testing.T) {
	g := &accounts{byName: map[string]*corev1.ServiceAccount{
		"default": account("default", func(sa *corev1.ServiceAccount) {
			sa.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
		}),
		"quiet": account("quiet", func(sa *corev1.ServiceAccount) { sa.AutomountServiceAccountToken = ptr.To(false) }),
	}}
	p := newPlugin(g)

	// No account: the default one, its token mounted in every container,
	// its pull secrets.
	obj := pod("", corev1.Container{Name: "c"})
	obj.Spec.InitContainers = []corev1.Container{{Name: "i"}}
	if err := p.Admit(context.Background(), attrs(admission.Create, "", obj, nil)); err != nil {
		t.Fatal(err)
	}
	want := pod("default", corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{tokenMount}})
	want.Spec.DeprecatedServiceAccount = "default" //nolint:staticcheck // kube sets it
	want.Spec.InitContainers = []corev1.Container{{Name: "i", VolumeMounts: []corev1.VolumeMount{tokenMount}}}
	want.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access-xyz12", VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()}}}
	want.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	if !reflect.DeepEqual(obj.Spec, want.Spec) {
		t.Errorf("pod without account:\n%+v\nwant\n%+v", obj.Spec, want.Spec)
	}

	// The account says no token; the pod's own setting wins over it.
	quiet := pod("quiet", corev1.Container{Name: "c"})
	if err := p.Admit(context.Background(), attrs(admission.Create, "", quiet, nil)); err != nil || quiet.Spec.Volumes != nil || quiet.Spec.Containers[0].VolumeMounts != nil {
		t.Errorf("account without automount: %v, %+v", err, quiet.Spec)
	}
	loud := pod("quiet", corev1.Container{Name: "c"})
	loud.Spec.AutomountServiceAccountToken = ptr.To(true)
	if err := p.Admit(context.Background(), attrs(admission.Create, "", loud, nil)); err != nil || len(loud.Spec.Volumes) != 1 {
		t.Errorf("pod asking for automount: %v, volumes %+v", err, loud.Spec.Volumes)
	}
	off := pod("default", corev1.Container{Name: "c"})
	off.Spec.AutomountServiceAccountToken = ptr.To(false)
	if err := p.Admit(context.Background(), attrs(admission.Create, "", off, nil)); err != nil || off.Spec.Volumes != nil {
		t.Errorf("pod refusing automount: %v, volumes %+v", err, off.Spec.Volumes)
	}

	// A pod's own token volume is reused; a container mounting something
	// at the path keeps it; the pod's pull secrets stay.
	own := pod("default", corev1.Container{Name: "c"}, corev1.Container{Name: "d", VolumeMounts: []corev1.VolumeMount{{Name: "mine", MountPath: mountPath}}})
	own.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access-own"}}
	own.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "mine"}}
	if err := p.Admit(context.Background(), attrs(admission.Create, "", own, nil)); err != nil {
		t.Fatal(err)
	}
	if got := own.Spec.Containers[0].VolumeMounts; !reflect.DeepEqual(got, []corev1.VolumeMount{{Name: "kube-api-access-own", ReadOnly: true, MountPath: mountPath}}) {
		t.Errorf("mount of the pod's own token volume: %+v", got)
	}
	if got := own.Spec.Containers[1].VolumeMounts; !reflect.DeepEqual(got, []corev1.VolumeMount{{Name: "mine", MountPath: mountPath}}) {
		t.Errorf("a container's own mount at the path: %+v", got)
	}
	if len(own.Spec.Volumes) != 1 || !reflect.DeepEqual(own.Spec.ImagePullSecrets, []corev1.LocalObjectReference{{Name: "mine"}}) {
		t.Errorf("volumes %+v, pull secrets %+v", own.Spec.Volumes, own.Spec.ImagePullSecrets)
	}

	// Every container mounting something at the path: no volume.
	mounted := pod("default", corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "mine", MountPath: mountPath}}})
	if err := p.Admit(context.Background(), attrs(admission.Create, "", mounted, nil)); err != nil || mounted.Spec.Volumes != nil {
		t.Errorf("all containers mount the path: %v, volumes %+v", err, mounted.Spec.Volumes)
	}
}

// TestAccountReads: a missing default account is read again, uncached,
// up to ten times; another account once; read errors are kube's 403.
func TestAccountReads(t *testing.T) {
	missingDefault := []read{{"default", true}}
	for range 10 {
		missingDefault = append(missingDefault, read{"default", false})
	}
	for _, tc := range []struct {
		name    string
		g       *accounts
		sa      string
		reads   []read
		message string // "": admitted
	}{
		{name: "cached", g: &accounts{byName: map[string]*corev1.ServiceAccount{"sa": account("sa")}}, sa: "sa", reads: []read{{"sa", true}, {"sa", true}}},
		{name: "other account missing", g: &accounts{}, sa: "sa", reads: []read{{"sa", true}, {"sa", false}},
			message: `pods "p" is forbidden: error looking up service account ns/sa: serviceaccount "sa" not found`},
		{name: "default account missing", g: &accounts{}, reads: missingDefault,
			message: `pods "p" is forbidden: error looking up service account ns/default: serviceaccount "default" not found`},
		{name: "default account made meanwhile", g: &accounts{readableAfter: 3},
			reads: []read{{"default", true}, {"default", false}, {"default", false}, {"default", false}, {"default", true}, {"default", false}}},
		{name: "account unreadable", g: &accounts{}, sa: "broken", reads: []read{{"broken", true}},
			message: `pods "p" is forbidden: error looking up service account ns/broken: etcd is down`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := newPlugin(tc.g).Admit(context.Background(), attrs(admission.Create, "", pod(tc.sa, corev1.Container{Name: "c"}), nil))
			if tc.message == "" && err != nil {
				t.Errorf("Admit = %v", err)
			}
			if tc.message != "" && (!apierrors.IsForbidden(err) || err.Error() != tc.message) {
				t.Errorf("Admit = %v, want 403 %q", err, tc.message)
			}
			if !reflect.DeepEqual(tc.g.reads, tc.reads) {
				t.Errorf("reads %+v, want %+v", tc.g.reads, tc.reads)
			}
		})
	}
}

// TestValidate: what a pod may not refer to, with kube's messages.
func TestValidate(t *testing.T) {
	g := &accounts{byName: map[string]*corev1.ServiceAccount{
		"open":   account("open"),
		"strict": account("strict", enforcing("allowed"), func(sa *corev1.ServiceAccount) { sa.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}} }),
		"false":  account("false", func(sa *corev1.ServiceAccount) { sa.Annotations = map[string]string{enforceMountableSecrets: "false"} }),
	}}
	secretVolume := func(name string) corev1.Volume {
		return corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}}
	}
	envFrom := func(name string) corev1.Container {
		return corev1.Container{Name: "c", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}}
	}
	envVar := func(name string) corev1.Container {
		return corev1.Container{Name: "c", Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}}}}
	}
	with := func(p *corev1.Pod, f func(*corev1.Pod)) *corev1.Pod { f(p); return p }
	mirror := func(p *corev1.Pod) *corev1.Pod {
		p.Annotations = map[string]string{mirrorPodAnnotation: "x"}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string // "": admitted
	}{
		{"no account", pod(""), `pods "p" is forbidden: no service account specified for pod ns/p`},
		{"secrets of an account that does not enforce", with(pod("open", envVar("any")), func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{secretVolume("any")} }), ""},
		{"an enforce annotation that is false", with(pod("false"), func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{secretVolume("any")} }), ""},
		{"listed secrets", with(pod("strict", envVar("allowed"), envFrom("allowed")), func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{secretVolume("allowed")}
			p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
		}), ""},
		{"secret volume", with(pod("strict"), func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{secretVolume("other")} }),
			`pods "p" is forbidden: volume with secret.secretName="other" is not allowed because service account strict does not reference that secret`},
		{"init container env", with(pod("strict"), func(p *corev1.Pod) { p.Spec.InitContainers = []corev1.Container{envVar("other")} }),
			`pods "p" is forbidden: init container c with envVar TOKEN referencing secret.secretName="other" is not allowed because service account strict does not reference that secret`},
		{"container envFrom", pod("strict", envFrom("other")),
			`pods "p" is forbidden: container c with envFrom referencing secret.secretName="other" is not allowed because service account strict does not reference that secret`},
		{"pull secret", with(pod("strict"), func(p *corev1.Pod) {
			p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}, {Name: "other"}}
		}), `pods "p" is forbidden: imagePullSecrets[1].name="other" is not allowed because service account strict does not reference that imagePullSecret`},
		{"a mirror pod", mirror(pod("")), ""},
		{"a mirror pod with an account", mirror(pod("open")), `pods "p" is forbidden: a mirror pod may not reference service accounts`},
		{"a mirror pod with a secret", mirror(pod("", envFrom("s"))), `pods "p" is forbidden: a mirror pod may not reference secrets`},
		{"a mirror pod with a token", with(mirror(pod("")), func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()}}}
		}), `pods "p" is forbidden: a mirror pod may not use ServiceAccountToken volume projections`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := newPlugin(g).Validate(context.Background(), attrs(admission.Create, "", tc.pod, nil))
			if tc.want == "" {
				if err != nil {
					t.Errorf("Validate = %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tc.want {
				t.Errorf("Validate = %v\nwant 403 %s", err, tc.want)
			}
		})
	}

	// Admit validates too, and leaves a mirror pod unchanged.
	m := mirror(pod(""))
	if err := newPlugin(g).Admit(context.Background(), attrs(admission.Create, "", m, nil)); err != nil || m.Spec.ServiceAccountName != "" || m.Spec.Volumes != nil {
		t.Errorf("Admit of a mirror pod: %v, %+v", err, m.Spec)
	}
	if err := newPlugin(g).Admit(context.Background(), attrs(admission.Create, "", pod("strict", envFrom("other")), nil)); !apierrors.IsForbidden(err) {
		t.Errorf("Admit of a pod naming an unlisted secret: %v", err)
	}
}

// TestEphemeralContainers: an update of pods/ephemeralcontainers checks
// the new containers' secrets, its refusal unwrapped as kube's.
func TestEphemeralContainers(t *testing.T) {
	g := &accounts{byName: map[string]*corev1.ServiceAccount{"strict": account("strict", enforcing("allowed")), "open": account("open")}}
	debug := func(sa, secret string) *corev1.Pod {
		p := pod(sa)
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug",
			Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: secret}}}}}}}}
		return p
	}
	update := func(p *corev1.Pod) *admission.Attributes {
		return attrs(admission.Update, "ephemeralcontainers", p, pod(p.Spec.ServiceAccountName))
	}
	p := newPlugin(g)
	if err := p.Validate(context.Background(), update(debug("strict", "allowed"))); err != nil {
		t.Errorf("a listed secret: %v", err)
	}
	if err := p.Validate(context.Background(), update(debug("open", "any"))); err != nil {
		t.Errorf("an account that does not enforce: %v", err)
	}
	err := p.Validate(context.Background(), update(debug("strict", "other")))
	var status apierrors.APIStatus
	if err == nil || errors.As(err, &status) || err.Error() != `ephemeral container debug with envVar TOKEN referencing secret.secretName="other" is not allowed because service account strict does not reference that secret` {
		t.Errorf("an unlisted secret: %v, want kube's plain error", err)
	}
	err = p.Validate(context.Background(), update(debug("", "other")))
	if !errors.As(err, &status) || status.Status().Code != http.StatusForbidden || err.Error() != `pods "p" is forbidden: no service account specified for pod ns/p` {
		t.Errorf("no account: %v", err)
	}
	err = p.Validate(context.Background(), update(debug("gone", "other")))
	if !apierrors.IsForbidden(err) || err.Error() != `pods "p" is forbidden: error looking up service account ns/gone: serviceaccount "gone" not found` {
		t.Errorf("missing account: %v", err)
	}
}

// TestIgnored: other writes are left alone, and read no account.
func TestIgnored(t *testing.T) {
	g := &accounts{}
	p := newPlugin(g)
	templates := attrs(admission.Create, "", pod(""), nil)
	templates.Resource.Resource = "podtemplates"
	for name, a := range map[string]*admission.Attributes{
		"update":        attrs(admission.Update, "", pod(""), pod("")),
		"status":        attrs(admission.Update, "status", pod(""), pod("")),
		"binding":       attrs(admission.Create, "binding", &corev1.Binding{}, nil),
		"other objects": attrs(admission.Create, "", &corev1.Service{}, nil),
		"podtemplates":  templates,
	} {
		if err := p.Admit(context.Background(), a); err != nil {
			t.Errorf("%s: Admit = %v", name, err)
		}
		if err := p.Validate(context.Background(), a); err != nil {
			t.Errorf("%s: Validate = %v", name, err)
		}
		if obj, ok := a.Object.(*corev1.Pod); ok && obj.Spec.ServiceAccountName != "" {
			t.Errorf("%s: account set to %q", name, obj.Spec.ServiceAccountName)
		}
	}
	if g.reads != nil {
		t.Errorf("accounts read: %+v", g.reads)
	}
	if !p.Handles(admission.Create) || !p.Handles(admission.Update) || p.Handles(admission.Delete) || p.Handles(admission.Connect) {
		t.Error("Handles: want creates and updates")
	}
}

// TestTokenVolumeSource: kube's projection: a token for an hour and seven
// seconds, the cluster's CA, the namespace.
func TestTokenVolumeSource(t *testing.T) {
	want := &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o644), Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
			Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
	}}
	if got := TokenVolumeSource(); !reflect.DeepEqual(got, want) {
		t.Errorf("TokenVolumeSource = %+v", got)
	}
}
