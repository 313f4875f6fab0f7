package core

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"

	"github.com/capstan-io/capstan/proxy"
	"github.com/capstan-io/capstan/registry/rest"
)

// StreamREST serves pods/exec, pods/attach and pods/portforward: the
// request is proxied to the pod's kubelet, where it must upgrade (SPDY or
// WebSocket). A remote command on WebSocket v5 (kubectl's default) is
// translated to SPDY toward kubelets, and port forwarding's SPDY tunnelled
// in a WebSocket is carried over a SPDY connection to the kubelet, as kube
// does, unless the node declares that its kubelet speaks WebSocket itself.
type StreamREST struct {
	k *Kubelets
	// path is the kubelet's: exec, attach or portForward.
	path    string
	options func() runtime.Object
}

var (
	_ rest.Connecter = (*StreamREST)(nil)
	_ rest.Scoper    = (*StreamREST)(nil)
)

// NewExecREST returns the storage of pods/exec.
func NewExecREST(k *Kubelets) *StreamREST {
	return &StreamREST{k: k, path: "exec", options: func() runtime.Object { return &corev1.PodExecOptions{} }}
}

// NewAttachREST returns the storage of pods/attach.
func NewAttachREST(k *Kubelets) *StreamREST {
	return &StreamREST{k: k, path: "attach", options: func() runtime.Object { return &corev1.PodAttachOptions{} }}
}

// NewPortForwardREST returns the storage of pods/portforward.
func NewPortForwardREST(k *Kubelets) *StreamREST {
	return &StreamREST{k: k, path: "portForward", options: func() runtime.Object { return &corev1.PodPortForwardOptions{} }}
}

// New returns empty options, the kind kube's discovery names.
func (r *StreamREST) New() runtime.Object { return r.options() }

// NamespaceScoped is true.
func (*StreamREST) NamespaceScoped() bool { return true }

// NewConnectOptions returns empty options.
func (r *StreamREST) NewConnectOptions() (runtime.Object, bool, string) {
	return r.options(), false, ""
}

// ConnectMethods are GET (WebSocket) and POST (SPDY).
func (*StreamREST) ConnectMethods() []string { return []string{http.MethodGet, http.MethodPost} }

// extendWebSocketsToKubelet is the node feature of kubelets that take
// remote command WebSockets themselves.
const extendWebSocketsToKubelet = "ExtendWebSocketsToKubelet"

// Connect finds the pod's kubelet and returns the proxy to it.
func (r *StreamREST) Connect(ctx context.Context, name string, obj runtime.Object) (http.Handler, error) {
	if err := r.k.authorizeCreate(ctx); err != nil {
		return nil, err
	}
	pod, err := r.k.pod(ctx, name)
	if err != nil {
		return nil, err
	}
	path := fmt.Sprintf("/%s/%s/%s", r.path, pod.Namespace, pod.Name)
	query, stdio, err := streamQuery(pod, obj)
	if err != nil {
		return nil, err
	}
	if container := query.Get("container"); container != "" {
		path += "/" + container
		query.Del("container")
	}
	conn, err := r.k.connect(ctx, pod, false)
	if err != nil {
		return nil, err
	}
	loc := conn.URL(path, query)
	h := &proxy.Handler{Target: loc, Transport: conn.Transport, UpgradeTransport: conn.UpgradeTransport,
		UpgradeRequired: true, RejectRedirects: true}
	if slices.Contains(conn.Features, extendWebSocketsToKubelet) {
		return h, nil
	}
	if stdio == nil {
		return translating(wsstream.IsWebSocketRequestWithTunnelingProtocol,
			&portForwardTunnel{location: loc, transport: conn.UpgradeTransport}, h), nil
	}
	return translating(wsstream.IsWebSocketRequestWithStreamCloseProtocol,
		&streamTranslator{location: loc, transport: conn.UpgradeTransport, opts: *stdio}, h), nil
}

// translating serves a request that is reports true of with translator,
// any other with h.
func translating(is func(*http.Request) bool, translator, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if is(req) {
			translator.ServeHTTP(w, req)
			return
		}
		h.ServeHTTP(w, req)
	})
}

// streamQuery is the kubelet's query for the options, with the container
// (checked) as "container"; stdio is nil for port forwarding.
func streamQuery(pod *corev1.Pod, obj runtime.Object) (url.Values, *stdioOptions, error) {
	q := url.Values{}
	flag := func(key string, on bool) {
		if on {
			q.Set(key, "1")
		}
	}
	var container string
	var stdio *stdioOptions
	switch o := obj.(type) {
	case *corev1.PodExecOptions:
		container, stdio = o.Container, &stdioOptions{Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, TTY: o.TTY}
		q["command"] = o.Command
	case *corev1.PodAttachOptions:
		container, stdio = o.Container, &stdioOptions{Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, TTY: o.TTY}
	case *corev1.PodPortForwardOptions:
		if len(o.Ports) > 0 {
			ports := make([]string, len(o.Ports))
			for i, p := range o.Ports {
				ports[i] = strconv.Itoa(int(p))
			}
			q.Set(corev1.PortHeader, strings.Join(ports, ","))
		}
		return q, nil, nil
	default:
		return nil, nil, fmt.Errorf("invalid options object: %T", obj)
	}
	flag(corev1.ExecStdinParam, stdio.Stdin)
	flag(corev1.ExecStdoutParam, stdio.Stdout)
	flag(corev1.ExecStderrParam, stdio.Stderr)
	flag(corev1.ExecTTYParam, stdio.TTY)
	container, err := podContainer(pod, container)
	if err != nil {
		return nil, nil, err
	}
	q.Set("container", container)
	return q, stdio, nil
}
