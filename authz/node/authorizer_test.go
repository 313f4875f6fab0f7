package node

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/authz/rbac/bootstrap"
	"github.com/capstan-io/capstan/request"
)

func testGraph(t *testing.T, objs ...any) *Graph {
	t.Helper()
	g := &Graph{
		pods:        cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{refsIndex: podIndex}),
		pvs:         cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{refsIndex: pvIndex}),
		attachments: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
	}
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *corev1.Pod:
			err = g.pods.Add(o)
		case *corev1.PersistentVolume:
			err = g.pvs.Add(o)
		case *storagev1.VolumeAttachment:
			err = g.attachments.Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func TestAuthorize(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
		Spec: corev1.PodSpec{
			NodeName: "n1", ServiceAccountName: "sa",
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}},
			InitContainers:   []corev1.Container{{Name: "i", EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "envcm"}}}}}},
			Volumes: []corev1.Volume{
				{Name: "claim", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "pvc"}}},
				{Name: "eph", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
				{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projected"}}}}}}},
			},
		},
	}
	mirror := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "static", Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "x"}},
		Spec:       corev1.PodSpec{NodeName: "n1", Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "from-mirror"}}}}},
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}, Spec: corev1.PersistentVolumeSpec{
		ClaimRef: &corev1.ObjectReference{Namespace: "ns", Name: "pvc"},
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
			NodePublishSecretRef:       &corev1.SecretReference{Namespace: "csi", Name: "publish"},
			ControllerPublishSecretRef: &corev1.SecretReference{Namespace: "csi", Name: "controller"},
		}},
	}}
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va"}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "n1"}}
	a := New(bootstrap.NodeRules())
	a.SetGraph(testGraph(t, pod, mirror, pv, va))

	n1 := &authn.User{Name: "system:node:n1", Groups: []string{NodesGroup}}
	get := func(group, ns, resource, name string) *request.Info {
		return &request.Info{IsResourceRequest: true, Verb: "get", APIGroup: group, Namespace: ns, Resource: resource, Name: name}
	}
	with := func(i *request.Info, f func(*request.Info)) *request.Info { f(i); return i }
	noRel := "no relationship found between node 'n1' and this object"
	for _, tc := range []struct {
		name   string
		user   *authn.User
		info   *request.Info
		want   authz.Decision
		reason string
	}{
		{"image pull secret", n1, get("", "ns", "secrets", "pull"), authz.Allow, ""},
		{"projected secret", n1, get("", "ns", "secrets", "projected"), authz.Allow, ""},
		{"init container config map", n1, get("", "ns", "configmaps", "envcm"), authz.Allow, ""},
		{"secret of another namespace", n1, get("", "other", "secrets", "pull"), authz.NoOpinion, noRel},
		{"mirror pod refers to nothing", n1, get("", "ns", "secrets", "from-mirror"), authz.NoOpinion, noRel},
		{"claim", n1, get("", "ns", "persistentvolumeclaims", "pvc"), authz.Allow, ""},
		{"ephemeral claim", n1, get("", "ns", "persistentvolumeclaims", "p-eph"), authz.Allow, ""},
		{"claim update", n1, with(get("", "ns", "persistentvolumeclaims", "pvc"), func(i *request.Info) { i.Verb = "update" }), authz.NoOpinion, "can only get individual resources of this type"},
		{"claim status", n1, with(get("", "ns", "persistentvolumeclaims", "pvc"), func(i *request.Info) { i.Verb, i.Subresource = "patch", "status" }), authz.Allow, ""},
		{"volume of the claim", n1, get("", "", "persistentvolumes", "pv"), authz.Allow, ""},
		{"csi node publish secret", n1, get("", "csi", "secrets", "publish"), authz.Allow, ""},
		{"csi controller secret", n1, get("", "csi", "secrets", "controller"), authz.NoOpinion, noRel},
		{"volume attachment", n1, get("storage.k8s.io", "", "volumeattachments", "va"), authz.Allow, ""},
		{"service account", n1, get("", "ns", "serviceaccounts", "sa"), authz.Allow, ""},
		{"token", n1, with(get("", "ns", "serviceaccounts", "sa"), func(i *request.Info) { i.Verb, i.Subresource = "create", "token" }), authz.Allow, ""},
		{"token of another account", n1, with(get("", "ns", "serviceaccounts", "x"), func(i *request.Info) { i.Verb, i.Subresource = "create", "token" }), authz.NoOpinion, noRel},
		{"secret update", n1, with(get("", "ns", "secrets", "pull"), func(i *request.Info) { i.Verb = "update" }), authz.NoOpinion, "can only read resources of this type"},
		{"secret watch by name", n1, with(get("", "ns", "secrets", ""), func(i *request.Info) { i.Verb, i.FieldSelector = "watch", "metadata.name=pull" }), authz.Allow, ""},
		{"secret list", n1, with(get("", "ns", "secrets", ""), func(i *request.Info) { i.Verb = "list" }), authz.NoOpinion, "No Object name found"},
		{"own pod", n1, get("", "ns", "pods", "p"), authz.Allow, ""},
		{"pods on node", n1, with(get("", "", "pods", ""), func(i *request.Info) { i.Verb, i.FieldSelector = "watch", "spec.nodeName=n1" }), authz.Allow, ""},
		{"pods on other node", n1, with(get("", "", "pods", ""), func(i *request.Info) { i.Verb, i.FieldSelector = "list", "spec.nodeName!=n1" }), authz.NoOpinion, "can only list/watch pods with spec.nodeName field selector"},
		{"own lease", n1, with(get("coordination.k8s.io", "kube-node-lease", "leases", "n1"), func(i *request.Info) { i.Verb = "update" }), authz.Allow, ""},
		{"other lease", n1, get("coordination.k8s.io", "kube-node-lease", "leases", "n2"), authz.NoOpinion, "can only access node lease with the same name as the requesting node"},
		{"node rules", n1, with(get("", "", "services", ""), func(i *request.Info) { i.Verb = "list" }), authz.Allow, ""},
		{"beyond node rules", n1, with(get("", "", "namespaces", ""), func(i *request.Info) { i.Verb = "list" }), authz.NoOpinion, ""},
		{"not in system:nodes", &authn.User{Name: "system:node:n1"}, get("", "ns", "secrets", "pull"), authz.NoOpinion, ""},
		{"unknown node", &authn.User{Name: "system:node:", Groups: []string{NodesGroup}}, get("", "ns", "secrets", "pull"), authz.NoOpinion, `unknown node for user "system:node:"`},
		{"other node", &authn.User{Name: "system:node:n2", Groups: []string{NodesGroup}}, get("", "ns", "secrets", "pull"), authz.NoOpinion, "no relationship found between node 'n2' and this object"},
	} {
		d, reason, err := a.Authorize(context.Background(), authz.Attributes{User: tc.user, Info: tc.info})
		if d != tc.want || reason != tc.reason || err != nil {
			t.Errorf("%s: %v %q %v, want %v %q", tc.name, d, reason, err, tc.want, tc.reason)
		}
	}
}

// Before its informers have synced, the authorizer reaches nothing.
func TestNoGraph(t *testing.T) {
	a := New(nil)
	d, reason, _ := a.Authorize(context.Background(), authz.Attributes{
		User: &authn.User{Name: "system:node:n1", Groups: []string{NodesGroup}},
		Info: &request.Info{IsResourceRequest: true, Verb: "get", Namespace: "ns", Resource: "secrets", Name: "s"},
	})
	if d != authz.NoOpinion || reason != "no relationship found between node 'n1' and this object" {
		t.Errorf("%v %q", d, reason)
	}
}
