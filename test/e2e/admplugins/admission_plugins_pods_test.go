package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// kubePodDefaults are what kube-apiserver v1.37.2 gives a pod with two
// containers and an init container, one container mounting its own volume
// at the token's path (read from kube's answer to the same pod): the volume
// name's last five characters are random.
func kubeTokenVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](420),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
}

func kubeTolerations(seconds int64) []corev1.Toleration {
	return []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(seconds)},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(seconds)},
	}
}

const tokenPath = "/var/run/secrets/kubernetes.io/serviceaccount"

func twoContainerPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "i", Image: "busybox"}},
		Containers: []corev1.Container{{Name: "c", Image: "busybox"},
			{Name: "d", Image: "busybox", VolumeMounts: []corev1.VolumeMount{{Name: "x", MountPath: tokenPath}}}},
		Volumes: []corev1.Volume{{Name: "x", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}}
}

// TestPodAdmissionDefaults: a pod created in a namespace made a moment ago
// gets kube's defaults: the namespace's default ServiceAccount (made by the
// in-process serviceaccount controller, which the plugin waits for), the
// kube-api-access volume mounted where nothing else is, the tolerations of
// DefaultTolerationSeconds; each namespace gets kube-root-ca.crt.
func TestPodAdmissionDefaults(t *testing.T) {
	e := e2eutil.Start(t, "--default-unreachable-toleration-seconds=60", "--controllers=*")
	ns := e.Namespace(t)
	pod, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), twoContainerPod("p"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.ServiceAccountName != "default" || pod.Spec.DeprecatedServiceAccount != "default" { //nolint:staticcheck // kube sets both
		t.Errorf("service account %q/%q, want default", pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount) //nolint:staticcheck
	}
	if len(pod.Spec.Volumes) != 2 || !strings.HasPrefix(pod.Spec.Volumes[1].Name, "kube-api-access-") || len(pod.Spec.Volumes[1].Name) != len("kube-api-access-")+5 {
		t.Fatalf("volumes %+v", pod.Spec.Volumes)
	}
	vol := pod.Spec.Volumes[1]
	if want := kubeTokenVolume(vol.Name); !equality.Semantic.DeepEqual(vol, want) {
		t.Errorf("token volume %+v\nwant %+v", vol, want)
	}
	mount := corev1.VolumeMount{Name: vol.Name, ReadOnly: true, MountPath: tokenPath}
	for _, c := range []corev1.Container{pod.Spec.InitContainers[0], pod.Spec.Containers[0]} {
		if len(c.VolumeMounts) != 1 || !equality.Semantic.DeepEqual(c.VolumeMounts[0], mount) {
			t.Errorf("container %s mounts %+v, want %+v", c.Name, c.VolumeMounts, mount)
		}
	}
	if m := pod.Spec.Containers[1].VolumeMounts; len(m) != 1 || m[0].Name != "x" {
		t.Errorf("container d mounts %+v, want only its own", m)
	}
	tol := kubeTolerations(300)
	tol[1].TolerationSeconds = ptr.To[int64](60)
	if !equality.Semantic.DeepEqual(pod.Spec.Tolerations, tol) {
		t.Errorf("tolerations %+v, want %+v", pod.Spec.Tolerations, tol)
	}

	ca, err := os.ReadFile(filepath.Join(e.DataDir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	var cm *corev1.ConfigMap
	e2eutil.Eventually(t, time.Minute, "kube-root-ca.crt", func(ctx context.Context) (bool, error) {
		cm, err = e.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, nil
	})
	if cm.Data["ca.crt"] != string(ca) || !strings.HasPrefix(cm.Annotations["kubernetes.io/description"], "Contains a CA bundle") {
		t.Errorf("kube-root-ca.crt %+v", cm)
	}
	// Changed or deleted, it comes back as it was.
	cm.Data["ca.crt"] = "changed"
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Update(e2eutil.Ctx(t), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, time.Minute, "kube-root-ca.crt restored", func(ctx context.Context) (bool, error) {
		cm, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil && cm.Data["ca.crt"] == string(ca), nil
	})
	if err := e.Clientset.CoreV1().ServiceAccounts(ns).Delete(e2eutil.Ctx(t), "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, time.Minute, "default ServiceAccount made again", func(ctx context.Context) (bool, error) {
		_, err := e.Clientset.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// TestServiceAccountAdmission: kube's refusals (messages read from
// kube-apiserver v1.37.2 for the same requests) and pull secrets.
func TestServiceAccountAdmission(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "withpull", Annotations: map[string]string{"kubernetes.io/enforce-mountable-secrets": "true"}},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "reg"}}}
	if _, err := e.Clientset.CoreV1().ServiceAccounts(ns).Create(e2eutil.Ctx(t), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name string, mutate func(*corev1.Pod)) (*corev1.Pod, error) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		mutate(p)
		return e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), p, metav1.CreateOptions{})
	}
	p, err := pod("pulls", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "withpull" })
	if err != nil {
		t.Fatal(err)
	}
	if want := []corev1.LocalObjectReference{{Name: "reg"}}; !equality.Semantic.DeepEqual(p.Spec.ImagePullSecrets, want) {
		t.Errorf("pull secrets %+v, want %+v", p.Spec.ImagePullSecrets, want)
	}
	p, err = pod("nomount", func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr.To(false) })
	if err != nil || len(p.Spec.Volumes) != 0 || len(p.Spec.Containers[0].VolumeMounts) != 0 {
		t.Errorf("automountServiceAccountToken false: %v %+v", err, p.Spec)
	}
	for _, tc := range []struct {
		name, msg string
		mutate    func(*corev1.Pod)
	}{
		{"missing", `pods "missing" is forbidden: error looking up service account ` + ns + `/missing: serviceaccount "missing" not found`,
			func(p *corev1.Pod) { p.Spec.ServiceAccountName = "missing" }},
		{"mirror", `pods "mirror" is forbidden: a mirror pod may not reference service accounts`, func(p *corev1.Pod) {
			p.Annotations = map[string]string{"kubernetes.io/config.mirror": "x"}
			p.Spec.ServiceAccountName = "withpull"
		}},
		{"secret", `pods "secret" is forbidden: volume with secret.secretName="nope" is not allowed because service account withpull does not reference that secret`,
			func(p *corev1.Pod) {
				p.Spec.ServiceAccountName = "withpull"
				p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "nope"}}}}
			}},
		{"pull", `pods "pull" is forbidden: imagePullSecrets[0].name="other" is not allowed because service account withpull does not reference that imagePullSecret`,
			func(p *corev1.Pod) {
				p.Spec.ServiceAccountName = "withpull"
				p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "other"}}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pod(tc.name, tc.mutate)
			e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, tc.msg)
			if _, err := e.Clientset.CoreV1().Pods(ns).Get(e2eutil.Ctx(t), tc.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("refused pod stored: %v", err)
			}
		})
	}
}

// TestServiceAccountLoopOff: with --controllers turning the serviceaccount
// loop off (as kube without a controller-manager) a namespace gets no
// default account, and its pods are refused as kube refuses them.
func TestServiceAccountLoopOff(t *testing.T) {
	e := e2eutil.Start(t, "--controllers=*,-serviceaccount")
	ns := e.Namespace(t)
	_, err := e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), twoContainerPod("p"), metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 403, metav1.StatusReasonForbidden, `pods "p" is forbidden: error looking up service account `+ns+`/default: serviceaccount "default" not found`)
}
