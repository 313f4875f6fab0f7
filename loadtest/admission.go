package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// admissionPolicies is how many ValidatingAdmissionPolicies the second
// phase binds: issue 17's "a create that passes ten policies".
const admissionPolicies = 10

// admission times creates of config maps through admission, in three
// phases of N creates on C workers each, in namespaces of their own so
// that the configurations match nothing else: with no webhook or policy
// (the baseline), through one mutating and one validating webhook served
// by this process over HTTPS, and through ten ValidatingAdmissionPolicies
// with their bindings. Each phase waits until what it registered is in
// force (the server picks configurations up from its watches).
func (r *runner) admission(ctx context.Context, ns string, res *Result) error {
	n, c := r.cfg.CRUD.N, r.cfg.CRUD.C
	res.Params = map[string]int{"objects": n, "concurrency": c, "objectBytes": r.cfg.ObjectBytes, "policies": admissionPolicies}
	hook, err := startWebhookServer()
	if err != nil {
		return err
	}
	defer hook.close()
	var ops []Op
	phases := []struct {
		op    string
		setup func(ctx context.Context, ns string) (cleanup func(), err error)
	}{
		{"create, no admission", func(context.Context, string) (func(), error) { return func() {}, nil }},
		{"create, 2 webhooks", func(ctx context.Context, ns string) (func(), error) { return r.registerWebhooks(ctx, ns, hook) }},
		{"create, 10 policies", r.bindPolicies},
	}
	for i, p := range phases {
		pns := fmt.Sprintf("%s-%d", ns, i)
		if err := createNamespace(ctx, r.client.Kube, pns); err != nil {
			return err
		}
		cleanup, err := p.setup(ctx, pns)
		if err != nil {
			return fmt.Errorf("%s: %w", p.op, err)
		}
		rec := NewRecorder()
		start := time.Now()
		createConfigMaps(ctx, r.client.Kube, pns, "adm", n, c, r.cfg.ObjectBytes, rec, p.op)
		ops = append(ops, rec.Ops(time.Since(start))...)
		cleanup()
		// The namespaces go at the end: capstan's namespace loop would
		// otherwise empty this one during the next phase, and kube's
		// (in kube-controller-manager, not running here) never would.
		defer r.client.Kube.CoreV1().Namespaces().Delete(ctx, pns, metav1.DeleteOptions{}) //nolint:errcheck
		if err := errorOf(ctx, rec); err != nil {
			res.Ops = ops
			return fmt.Errorf("%s: %w", p.op, err)
		}
	}
	res.Ops = ops
	return nil
}

// admissionLabel marks the namespace each phase's configurations match.
const admissionLabel = "capstan-load/admission"

// registerWebhooks registers a mutating webhook that labels each config
// map of ns and a validating one that allows it, both at hook, and waits
// until a create comes back labelled and has been validated.
func (r *runner) registerWebhooks(ctx context.Context, ns string, hook *webhookServer) (func(), error) {
	if err := labelNamespace(ctx, r, ns); err != nil {
		return nil, err
	}
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{admissionLabel: ns}}
	client := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(hook.url + path), CABundle: hook.caPEM}
	}
	none := admissionregistrationv1.SideEffectClassNone
	reg := r.client.Kube.AdmissionregistrationV1()
	m := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-mutating"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "label.capstan-load.example.com", ClientConfig: client("/mutate"), Rules: rules,
			NamespaceSelector: sel, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-validating"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "allow.capstan-load.example.com", ClientConfig: client("/validate"), Rules: rules,
			NamespaceSelector: sel, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	cleanup := func() {
		_ = reg.MutatingWebhookConfigurations().Delete(ctx, m.Name, metav1.DeleteOptions{})
		_ = reg.ValidatingWebhookConfigurations().Delete(ctx, v.Name, metav1.DeleteOptions{})
	}
	if _, err := reg.MutatingWebhookConfigurations().Create(ctx, m, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	if _, err := reg.ValidatingWebhookConfigurations().Create(ctx, v, metav1.CreateOptions{}); err != nil {
		cleanup()
		return nil, err
	}
	// In force when a probe is labelled by the one and seen by the other.
	cms := r.client.Kube.CoreV1().ConfigMaps(ns)
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		seen := hook.validated.Load()
		probe := configMap(ns, "", 0)
		probe.GenerateName = "probe-"
		cm, err := cms.Create(ctx, probe, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return cm.Labels[webhookLabel] == "true" && hook.validated.Load() > seen, nil
	})
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("waiting for the webhooks: %w", err)
	}
	return cleanup, nil
}

// bindPolicies binds admissionPolicies ValidatingAdmissionPolicies to the
// config maps of ns, policy k refusing names that start with deny-k-, and
// waits until each refuses its probe.
func (r *runner) bindPolicies(ctx context.Context, ns string) (func(), error) {
	if err := labelNamespace(ctx, r, ns); err != nil {
		return nil, err
	}
	reg := r.client.Kube.AdmissionregistrationV1()
	var names []string
	cleanup := func() {
		for _, name := range names {
			_ = reg.ValidatingAdmissionPolicyBindings().Delete(ctx, name, metav1.DeleteOptions{})
			_ = reg.ValidatingAdmissionPolicies().Delete(ctx, name, metav1.DeleteOptions{})
		}
	}
	for k := range admissionPolicies {
		name := fmt.Sprintf("%s-%d", ns, k)
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
					},
				}}},
				Validations: []admissionregistrationv1.Validation{{
					Expression: fmt.Sprintf("!object.metadata.name.startsWith('deny-%d-') && size(object.data) < 100", k),
					Message:    "refused by the load tool's policy",
				}},
			},
		}
		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
				MatchResources: &admissionregistrationv1.MatchResources{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{admissionLabel: ns}},
				},
			},
		}
		names = append(names, name)
		if _, err := reg.ValidatingAdmissionPolicies().Create(ctx, p, metav1.CreateOptions{}); err != nil {
			cleanup()
			return nil, err
		}
		if _, err := reg.ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			cleanup()
			return nil, err
		}
	}
	cms := r.client.Kube.CoreV1().ConfigMaps(ns)
	for k := range admissionPolicies {
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			cm := configMap(ns, "", 0)
			cm.GenerateName = fmt.Sprintf("deny-%d-", k)
			_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
			if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
				return true, nil
			}
			return false, err
		})
		if err != nil {
			cleanup()
			return nil, fmt.Errorf("waiting for policy %d: %w", k, err)
		}
	}
	return cleanup, nil
}

// labelNamespace labels ns for its phase's configurations.
func labelNamespace(ctx context.Context, r *runner, ns string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, admissionLabel, ns)
	_, err := r.client.Kube.CoreV1().Namespaces().Patch(ctx, ns, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
	return err
}

// webhookLabel is the label the mutating webhook adds.
const webhookLabel = "capstan-load-mutated"

// webhookServer is the admission webhook the workload registers: HTTPS on
// loopback with a certificate of its own.
type webhookServer struct {
	url       string
	caPEM     []byte
	srv       *http.Server
	validated atomic.Int64 // reviews the validating webhook answered
}

func startWebhookServer() (*webhookServer, error) {
	cert, caPEM, err := selfSignedLoopback()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &webhookServer{url: "https://" + l.Addr().String(), caPEM: caPEM}
	mux := http.NewServeMux()
	patch, _ := json.Marshal([]map[string]any{{"op": "add", "path": "/metadata/labels/" + webhookLabel, "value": "true"}})
	mux.HandleFunc("/mutate", func(w http.ResponseWriter, req *http.Request) {
		h.review(w, req, func(resp *admissionv1.AdmissionResponse) {
			pt := admissionv1.PatchTypeJSONPatch
			resp.Patch, resp.PatchType = patch, &pt
		})
	})
	mux.HandleFunc("/validate", func(w http.ResponseWriter, req *http.Request) {
		h.validated.Add(1)
		h.review(w, req, func(*admissionv1.AdmissionResponse) {})
	})
	h.srv = &http.Server{Handler: mux, TLSConfig: tlsConfigWith(cert), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = h.srv.ServeTLS(l, "", "") }()
	return h, nil
}

// review answers an AdmissionReview v1 with an allowing response that
// respond completes.
func (h *webhookServer) review(w http.ResponseWriter, req *http.Request, respond func(*admissionv1.AdmissionResponse)) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(req.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	respond(resp)
	review.Request, review.Response = nil, resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

func (h *webhookServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		_ = h.srv.Close()
	}
}
