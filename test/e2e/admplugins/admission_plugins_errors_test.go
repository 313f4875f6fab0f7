package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"errors"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPluginPlainErrors: where kube's plugins fail with an error that is
// not an API Status, kube answers a 500 with no reason and the error's own
// message (not an InternalError): a namespace annotation that does not
// parse (PodNodeSelector, PodTolerationRestriction), and AlwaysPullImages'
// aggregate of refusals. Messages as kube-apiserver v1.37.2 answers them.
func TestPluginPlainErrors(t *testing.T) {
	e := e2eutil.Start(t, "--enable-admission-plugins=PodNodeSelector,PodTolerationRestriction,AlwaysPullImages")
	annotatedNamespace(t, e, "bad-selector", map[string]string{"scheduler.alpha.kubernetes.io/node-selector": "a=b=c"})
	_, err := e.Clientset.CoreV1().Pods("bad-selector").Create(e2eutil.Ctx(t), plainPod("p"), metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 500, metav1.StatusReasonUnknown, "invalid selector: [a b c]")

	annotatedNamespace(t, e, "bad-tolerations", map[string]string{"scheduler.alpha.kubernetes.io/defaultTolerations": "nope"})
	_, err = e.Clientset.CoreV1().Pods("bad-tolerations").Create(e2eutil.Ctx(t), plainPod("p"), metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 500, metav1.StatusReasonUnknown, "invalid character 'o' in literal null (expecting 'u')")

	// A mutating policy after AlwaysPullImages sets the pull policies
	// back; the chain runs again (the object changed), and so does the
	// policy (IfNeeded): AlwaysPullImages' validation refuses each
	// container.
	ns := e.MapNamespace(t, "pull")
	policy := e2eutil.MapOf("pull-if-not-present", "pull", "", "pods", "pull-",
		e2eutil.JSONPatchOf(`[JSONPatch{op: "replace", path: "/spec/containers/0/imagePullPolicy", value: "IfNotPresent"},
			JSONPatch{op: "replace", path: "/spec/initContainers/0/imagePullPolicy", value: "Never"}]`))
	policy.Spec.ReinvocationPolicy = arv1.IfNeededReinvocationPolicy
	e.BindMutating(t, policy, nil)
	pod := plainPod("")
	pod.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "x"}}
	var status *apierrors.StatusError
	e2eutil.Eventually(t, 30*time.Second, "the policy refused by AlwaysPullImages", func(ctx context.Context) (bool, error) {
		pod.Name = e2eutil.Unique("pull")
		_, err := e.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return errors.As(err, &status), nil
	})
	e2eutil.WantStatus(t, status, 500, metav1.StatusReasonUnknown, `[pods "`+pod.Name+`" is forbidden: spec.initContainers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always", `+
		`pods "`+pod.Name+`" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"]`)
}
