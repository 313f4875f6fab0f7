package kubelet

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bufio"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/kubelettest"
	"github.com/capstan-io/capstan/internal/testkit"
)

// kubeletEnv is a server whose node "node-1" is a test kubelet, and a
// namespace with the pod "web" (one container, "c") on that node.
type kubeletEnv struct {
	*e2eutil.Env
	k  *kubelettest.Kubelet
	ns string
}

func startKubelet(t *testing.T, flags ...string) *kubeletEnv {
	t.Helper()
	k := kubelettest.Start(t)
	flags = append([]string{"--kubelet-client-certificate", k.ClientCertFile, "--kubelet-client-key", k.ClientKeyFile,
		"--kubelet-certificate-authority", k.CAFile}, flags...)
	e := e2eutil.Start(t, flags...)
	ke := &kubeletEnv{Env: e, k: k, ns: e.Namespace(t)}
	ke.node(t, k.Node("node-1"))
	ke.pod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{NodeName: "node-1",
		Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}})
	return ke
}

// node creates a node with its status.
func (ke *kubeletEnv) node(t *testing.T, n *corev1.Node) {
	t.Helper()
	created, err := ke.Clientset.CoreV1().Nodes().Create(e2eutil.Ctx(t), n, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status = n.Status
	if _, err := ke.Clientset.CoreV1().Nodes().UpdateStatus(e2eutil.Ctx(t), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (ke *kubeletEnv) pod(t *testing.T, p *corev1.Pod) {
	t.Helper()
	if _, err := ke.Clientset.CoreV1().Pods(ke.ns).Create(e2eutil.Ctx(t), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (ke *kubeletEnv) kubectl(t *testing.T, stdin io.Reader, args ...string) (string, string, error) {
	t.Helper()
	return testkit.RunKubectl(t, ke.Kubeconfig, stdin, append([]string{"-n", ke.ns}, args...)...)
}

// TestKubeletLogs: kubectl logs reads a container's log from its kubelet,
// with the options passed on; -f follows it as the kubelet writes more.
func TestKubeletLogs(t *testing.T) {
	ke := startKubelet(t)
	ke.k.AppendLog(ke.ns, "web", "c", "one\ntwo\nthree\n")
	out, stderr, err := ke.kubectl(t, nil, "logs", "web")
	if err != nil || out != "one\ntwo\nthree\n" {
		t.Fatalf("kubectl logs: %q, %v\n%s", out, err, stderr)
	}
	out, stderr, err = ke.kubectl(t, nil, "logs", "web", "-c", "c", "--tail=1", "--timestamps", "--limit-bytes=100", "--since=1h")
	if err != nil || out != "three\n" {
		t.Fatalf("kubectl logs --tail=1: %q, %v\n%s", out, err, stderr)
	}
	want := "GET /containerLogs/" + ke.ns + "/web/c?limitBytes=100&sinceSeconds=3600&tailLines=1&timestamps=true"
	if reqs := ke.k.Requests(); !strings.Contains(strings.Join(reqs, "\n"), want) {
		t.Errorf("kubelet requests %q, want %q", reqs, want)
	}

	stream, err := ke.Clientset.CoreV1().Pods(ke.ns).GetLogs("web", &corev1.PodLogOptions{Follow: true}).Stream(e2eutil.Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	r := bufio.NewReader(stream)
	for _, line := range []string{"one\n", "two\n", "three\n"} {
		if got, err := r.ReadString('\n'); got != line || err != nil {
			t.Fatalf("followed %q, %v; want %q", got, err, line)
		}
	}
	ke.k.AppendLog(ke.ns, "web", "c", "four\n")
	if got, err := r.ReadString('\n'); got != "four\n" || err != nil {
		t.Fatalf("followed %q, %v after an append", got, err)
	}
}

// TestKubeletLogsRefused: kube's errors for a missing or unnamed
// container, bad options, a missing pod or node, and an unscheduled pod's
// empty log.
func TestKubeletLogsRefused(t *testing.T) {
	ke := startKubelet(t)
	ke.pod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "two"}, Spec: corev1.PodSpec{NodeName: "node-1",
		InitContainers: []corev1.Container{{Name: "i", Image: "busybox"}},
		Containers:     []corev1.Container{{Name: "a", Image: "busybox"}, {Name: "b", Image: "busybox"}}}})
	ke.pod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}})
	ke.pod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "lost"}, Spec: corev1.PodSpec{NodeName: "node-404",
		Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}})
	// Result.Error decodes the Status of a refused log request (Raw and
	// DoRaw do not).
	json := ke.ClientWith(t, func(cfg *rest.Config) {
		cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	})
	pods := json.CoreV1().Pods(ke.ns)
	logs := func(name string, opts *corev1.PodLogOptions) ([]byte, error) {
		res := pods.GetLogs(name, opts).Do(e2eutil.Ctx(t))
		if err := res.Error(); err != nil {
			return nil, err
		}
		return res.Raw()
	}
	_, err := logs("web", &corev1.PodLogOptions{Container: "nope"})
	e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "container nope is not valid for pod web")
	_, err = logs("two", &corev1.PodLogOptions{})
	e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "a container name must be specified for pod two, choose one of: [i a b]")
	_, err = logs("web", &corev1.PodLogOptions{TailLines: ptr.To[int64](-1)})
	s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "PodLogOptions \"web\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "tailLines")
	_, err = logs("web", &corev1.PodLogOptions{SinceSeconds: ptr.To[int64](1), SinceTime: ptr.To(metav1.Now())})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	_, err = logs("missing", &corev1.PodLogOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `pods "missing" not found`)
	_, err = logs("lost", &corev1.PodLogOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `nodes "node-404" not found`)
	if out, err := logs("pending", &corev1.PodLogOptions{}); err != nil || len(out) != 0 {
		t.Errorf("unscheduled pod's log: %q, %v", out, err)
	}
	// The kubelet knows no log of this container: its 404 becomes kube's.
	_, err = logs("two", &corev1.PodLogOptions{Container: "b"})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, "")
}

// TestKubeletDiscovery: the node-facing pod subresources are listed with
// kube's kinds and verbs.
func TestKubeletDiscovery(t *testing.T) {
	ke := startKubelet(t)
	list, err := ke.Clientset.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"pods/log": "Pod get", "pods/exec": "PodExecOptions create,get",
		"pods/attach": "PodAttachOptions create,get", "pods/portforward": "PodPortForwardOptions create,get"}
	for _, r := range list.APIResources {
		if w, ok := want[r.Name]; ok {
			if got := r.Kind + " " + strings.Join(r.Verbs, ","); got != w || !r.Namespaced {
				t.Errorf("%s: %s (namespaced %v), want %s", r.Name, got, r.Namespaced, w)
			}
			delete(want, r.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("not listed: %v", want)
	}
}

// TestKubeletUnreachable: a kubelet that refuses the server's missing
// client certificate, and a node whose kubelet port is closed, give
// errors at once, not hung requests.
func TestKubeletUnreachable(t *testing.T) {
	k := kubelettest.Start(t)
	// No --kubelet-client-certificate: the kubelet refuses the handshake.
	e := e2eutil.Start(t, "--kubelet-certificate-authority", k.CAFile)
	ke := &kubeletEnv{Env: e, k: k, ns: e.Namespace(t)}
	ke.node(t, k.Node("node-1"))
	closed := k.Node("node-2")
	closed.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(freePort(t))
	ke.node(t, closed)
	for node, pod := range map[string]string{"node-1": "refused", "node-2": "closed"} {
		ke.pod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod}, Spec: corev1.PodSpec{NodeName: node,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}})
		k.AppendLog(ke.ns, pod, "c", "never read\n")
		out, stderr, err := ke.kubectl(t, nil, "logs", pod)
		t.Logf("kubectl logs %s: %s", pod, stderr)
		if err == nil || out != "" || !strings.Contains(stderr, "Error from server") {
			t.Errorf("kubectl logs %s: %q, %v\n%s", pod, out, err, stderr)
		}
		_, stderr, err = ke.kubectl(t, nil, "exec", pod, "--", "true")
		if err == nil {
			t.Errorf("kubectl exec %s succeeded\n%s", pod, stderr)
		}
	}
}
