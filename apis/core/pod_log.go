package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/proxy"
	"github.com/capstan-io/capstan/registry/rest"
)

// LogREST serves pods/log: a container's log, streamed from its kubelet's
// containerLogs endpoint as plain text.
type LogREST struct{ k *Kubelets }

var (
	_ rest.Connecter = (*LogREST)(nil)
	_ rest.Scoper    = (*LogREST)(nil)
)

// NewLogREST returns the storage of pods/log.
func NewLogREST(k *Kubelets) *LogREST { return &LogREST{k: k} }

// New returns an empty Pod, the kind kube's discovery names.
func (*LogREST) New() runtime.Object { return &corev1.Pod{} }

// NamespaceScoped is true.
func (*LogREST) NamespaceScoped() bool { return true }

// NewConnectOptions returns empty PodLogOptions.
func (*LogREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &corev1.PodLogOptions{}, false, ""
}

// ConnectMethods is GET: a log is read.
func (*LogREST) ConnectMethods() []string { return []string{http.MethodGet} }

// ConnectReads: kube serves pods/log as a get, not admitted.
func (*LogREST) ConnectReads() {}

var _ rest.ReadingConnecter = (*LogREST)(nil)

// Connect checks the options and finds the container's kubelet.
func (r *LogREST) Connect(ctx context.Context, name string, obj runtime.Object) (http.Handler, error) {
	opts, ok := obj.(*corev1.PodLogOptions)
	if !ok {
		return nil, fmt.Errorf("invalid options object: %T", obj)
	}
	if errs := ValidatePodLogOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "PodLogOptions"}, name, errs)
	}
	pod, err := r.k.pod(ctx, name)
	if err != nil {
		return nil, err
	}
	container, err := podContainer(pod, opts.Container)
	if err != nil {
		return nil, err
	}
	if pod.Spec.NodeName == "" {
		// kube answers an unscheduled pod's log with an empty one.
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusOK)
		}), nil
	}
	conn, err := r.k.connect(ctx, pod, opts.InsecureSkipTLSVerifyBackend)
	if err != nil {
		return nil, err
	}
	loc := conn.URL(fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container), logQuery(opts))
	return &logStreamer{location: loc, transport: conn.Transport, name: name, follow: opts.Follow}, nil
}

// ValidatePodLogOptions is kube's check of PodLogOptions (without the
// PodLogsQuerySplitStreams gate, off in v1.37: no stream).
func ValidatePodLogOptions(opts *corev1.PodLogOptions) field.ErrorList {
	var errs field.ErrorList
	if opts.TailLines != nil && *opts.TailLines < 0 {
		errs = append(errs, field.Invalid(field.NewPath("tailLines"), *opts.TailLines, "must be greater than or equal to 0"))
	}
	if opts.LimitBytes != nil && *opts.LimitBytes < 1 {
		errs = append(errs, field.Invalid(field.NewPath("limitBytes"), *opts.LimitBytes, "must be greater than 0"))
	}
	switch {
	case opts.SinceSeconds != nil && opts.SinceTime != nil:
		errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
	case opts.SinceSeconds != nil && *opts.SinceSeconds < 1:
		errs = append(errs, field.Invalid(field.NewPath("sinceSeconds"), *opts.SinceSeconds, "must be greater than 0"))
	}
	if opts.Stream != nil {
		errs = append(errs, field.Forbidden(field.NewPath("stream"), "may not be specified"))
	}
	return errs
}

// logQuery is the kubelet's query for opts.
func logQuery(opts *corev1.PodLogOptions) url.Values {
	q := url.Values{}
	for key, on := range map[string]bool{"follow": opts.Follow, "previous": opts.Previous, "timestamps": opts.Timestamps} {
		if on {
			q.Set(key, "true")
		}
	}
	for key, n := range map[string]*int64{"sinceSeconds": opts.SinceSeconds, "tailLines": opts.TailLines, "limitBytes": opts.LimitBytes} {
		if n != nil {
			q.Set(key, strconv.FormatInt(*n, 10))
		}
	}
	if opts.SinceTime != nil {
		q.Set("sinceTime", opts.SinceTime.UTC().Format(time.RFC3339))
	}
	return q
}

// logStreamer copies a kubelet's log answer to the client.
type logStreamer struct {
	location  *url.URL
	transport http.RoundTripper
	name      string
	follow    bool
}

// maxErrorBody is how much of a kubelet's error answer is read.
const maxErrorBody = 50000

// errRedirect is kube's refusal of a kubelet's redirect.
var errRedirect = errors.New("redirects forbidden")

func (s *logStreamer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client := &http.Client{Transport: s.transport, CheckRedirect: func(*http.Request, []*http.Request) error { return errRedirect }}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, s.location.String(), nil)
	if err == nil {
		var resp *http.Response
		if resp, err = client.Do(req); err == nil {
			defer resp.Body.Close()
			if err = s.check(resp); err == nil {
				s.copy(w, resp.Body)
				return
			}
		}
	}
	proxy.WriteStatus(w, proxy.StatusOf(err))
}

// check turns a kubelet's error answer into kube's error.
func (s *logStreamer) check(resp *http.Response) error {
	if resp.StatusCode >= http.StatusOK && resp.StatusCode <= http.StatusPartialContent {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	switch resp.StatusCode {
	case http.StatusInternalServerError:
		return apierrors.NewInternalError(errors.New(string(body)))
	case http.StatusBadRequest:
		return apierrors.NewBadRequest(string(body))
	}
	return apierrors.NewGenericServerResponse(resp.StatusCode, "", schema.GroupResource{Resource: "pods/log"}, s.name, string(body), 0, false)
}

// copy streams the log, flushing each chunk when the client follows it.
func (s *logStreamer) copy(w http.ResponseWriter, body io.Reader) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if s.follow {
				_ = rc.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}
