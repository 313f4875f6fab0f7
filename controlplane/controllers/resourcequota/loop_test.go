package resourcequota_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/controlplane/controllers/resourcequota"
	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

const ns = "quota"

// TestRecount runs the loop, with a resync too long to matter, on a
// server whose own is off: a quota made over existing objects gets their
// usage, and the usage of each object deleted, or pod finished, is given
// back at once: config maps through the fixed informers, pods through the
// pod informer, deployments through the watch the quota's
// count/deployments.apps starts.
func TestRecount(t *testing.T) {
	s := testkit.StartServer(t, "--controllers=")
	// Clients unthrottled, the loop's and the test's apart.
	cfg := rest.CopyConfig(s.Config)
	cfg.QPS = -1
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The loop's metadata client tells when its watch of deployments is
	// open: a deployment deleted after that is seen going.
	watching := make(chan struct{})
	var once sync.Once
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && resp.StatusCode == http.StatusOK && r.URL.Path == "/apis/apps/v1/deployments" && r.URL.Query().Get("watch") == "true" {
				once.Do(func() { close(watching) })
			}
			return resp, err
		})
	}
	c, err := resourcequota.New(resourcequota.Config{Client: kubernetes.NewForConfigOrDie(cfg), Metadata: metadata.NewForConfigOrDie(cfg),
		Discovery: kubernetes.NewForConfigOrDie(cfg).Discovery(), Logger: slog.New(slog.DiscardHandler), Resync: time.Hour})
	if err != nil {
		t.Fatal(err)
	}

	create(t, client)
	quotas := client.CoreV1().ResourceQuotas(ns)
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: list(
		"configmaps", "10", "services", "5", "count/deployments.apps", "3", "pods", "4", "requests.cpu", "2")}}
	if _, err := quotas.Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx, 1) }()
	defer func() { cancel(); <-done }()

	used(t, client, list("configmaps", "2", "services", "1", "count/deployments.apps", "1", "pods", "1", "requests.cpu", "500m"))
	got, err := quotas.Get(ctx, "q", metav1.GetOptions{})
	if err != nil || !same(got.Status.Hard, q.Spec.Hard) {
		t.Fatalf("status.hard %s (%v), want the spec's", render(got.Status.Hard), err)
	}

	if err := client.CoreV1().ConfigMaps(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	used(t, client, list("configmaps", "1", "services", "1", "count/deployments.apps", "1", "pods", "1", "requests.cpu", "500m"))

	pod, err := client.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodSucceeded
	if _, err := client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	used(t, client, list("configmaps", "1", "services", "1", "count/deployments.apps", "1", "pods", "0", "requests.cpu", "0"))

	select {
	case <-watching:
	case <-time.After(30 * time.Second):
		t.Fatal("the loop never watched deployments")
	}
	if err := client.AppsV1().Deployments(ns).Delete(ctx, "d", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	used(t, client, list("configmaps", "1", "services", "1", "count/deployments.apps", "0", "pods", "0", "requests.cpu", "0"))

	// A new limit is in status at once, and the usage of the name it adds.
	if got, err = quotas.Get(ctx, "q", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	got.Spec.Hard = list("configmaps", "10", "services", "6", "count/deployments.apps", "3", "pods", "4", "requests.cpu", "2", "count/secrets", "9")
	if _, err := quotas.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	used(t, client, list("configmaps", "1", "services", "1", "count/deployments.apps", "0", "pods", "0", "requests.cpu", "0", "count/secrets", "0"))
	if got, err = quotas.Get(ctx, "q", metav1.GetOptions{}); err != nil || got.Status.Hard.Name("services", resource.DecimalSI).Value() != 6 {
		t.Errorf("status.hard %s (%v), want services 6", render(got.Status.Hard), err)
	}
}

// create makes the namespace's objects before any quota charges them.
func create(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))
	must(client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}))
	for _, name := range []string{"a", "b"} {
		must(client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}))
	}
	must(client.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}))
	containers := []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: list("cpu", "500m")}}}
	must(client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: containers}},
		metav1.CreateOptions{}))
	labels := map[string]string{"app": "d"}
	must(client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: containers}}}}, metav1.CreateOptions{}))
}

// used waits until the quota's status.used is want.
func used(t *testing.T, client kubernetes.Interface, want corev1.ResourceList) {
	t.Helper()
	var got corev1.ResourceList
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		q, err := client.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = q.Status.Used
		return same(got, want), nil
	})
	if err != nil {
		t.Fatalf("status.used %s, want %s: %v", render(got), render(want), err)
	}
}

// list is a ResourceList of name, quantity pairs.
func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func same(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for n, q := range a {
		if o, ok := b[n]; !ok || o.Cmp(q) != 0 {
			return false
		}
	}
	return true
}

// render is a list as sorted name=quantity pairs.
func render(l corev1.ResourceList) string {
	var out []string
	for n, q := range l {
		out = append(out, string(n)+"="+q.String())
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
