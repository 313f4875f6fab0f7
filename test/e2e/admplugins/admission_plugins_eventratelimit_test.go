package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func coreEvent(ns string) *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "e-"}, Type: corev1.EventTypeNormal, Reason: "Test", Message: "m",
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "p", APIVersion: "v1"},
		Source:         corev1.EventSource{Component: "test"}, FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1}
}

// TestEventRateLimit: a namespace's events past its bucket get kube's 429;
// another namespace has its own bucket; dry runs and other kinds are not
// counted. The bucket refills at one event a second, so the test creates
// events until the first 429 rather than counting on a pace.
func TestEventRateLimit(t *testing.T) {
	cfg := admissionConfigFile(t, `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: EventRateLimit
  path: limits.yaml
`, map[string]string{"limits.yaml": "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits:\n- type: Namespace\n  qps: 1\n  burst: 3\n"})
	e := e2eutil.Start(t, "--enable-admission-plugins=EventRateLimit", "--admission-control-config-file="+cfg)
	busy, quiet := e.Namespace(t), e.Namespace(t)
	events := e.Clientset.CoreV1().Events(busy)
	accepted := 0
	deadline := time.Now().Add(time.Minute)
	var err error
	for ; time.Now().Before(deadline); accepted++ {
		if _, err = events.Create(e2eutil.Ctx(t), coreEvent(busy), metav1.CreateOptions{}); err != nil {
			break
		}
	}
	if accepted < 3 {
		t.Errorf("%d events accepted before the first refusal, want at least the burst of 3", accepted)
	}
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("no 429 within a minute: %v", err)
	}
	e2eutil.WantStatus(t, err, 429, metav1.StatusReasonTooManyRequests, "Too many requests: limit reached on type Namespace for key "+busy)

	for i := 0; i < 5; i++ { // more than the bucket can have refilled since
		if _, err := events.Create(e2eutil.Ctx(t), coreEvent(busy), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("dry run %d is not counted: %v", i, err)
		}
	}
	if _, err := e.Clientset.CoreV1().Events(quiet).Create(e2eutil.Ctx(t), coreEvent(quiet), metav1.CreateOptions{}); err != nil {
		t.Errorf("another namespace's bucket: %v", err)
	}
	e.ConfigMap(t, busy, "not-an-event", nil)
}
