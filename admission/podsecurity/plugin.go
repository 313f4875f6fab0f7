// Package podsecurity is kube's PodSecurity admission plugin, written over
// k8s.io/pod-security-admission's policy checks: a pod in a namespace
// labelled pod-security.kubernetes.io/enforce=<level> that violates the
// level is refused, audit and warn levels add an audit annotation or a
// Warning; workload templates get the warnings only; invalid labels on a
// namespace are refused, and raising a namespace's enforce level warns of
// the pods already there that violate it.
package podsecurity

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/warning"
)

// NamespaceGetter reads a namespace.
type NamespaceGetter func(ctx context.Context, name string) (*corev1.Namespace, error)

// PodLister lists a namespace's pods.
type PodLister func(ctx context.Context, namespace string) ([]corev1.Pod, error)

// Plugin is the PodSecurity plugin.
type Plugin struct {
	evaluator  policy.Evaluator
	defaults   api.Policy
	exemptions Exemptions
	namespace  NamespaceGetter
	pods       PodLister
}

// New returns the plugin configured by config (nil: kube's defaults).
func New(config []byte, namespaces NamespaceGetter, pods PodLister) (*Plugin, error) {
	c, defaults, err := ParseConfiguration(config)
	if err != nil {
		return nil, err
	}
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return nil, err
	}
	return &Plugin{evaluator: ev, defaults: defaults, exemptions: c.Exemptions, namespace: namespaces, pods: pods}, nil
}

var (
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles creates and updates.
func (*Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// ignoredPodSubresources are the pod subresources whose writes change no
// spec the policy looks at.
var ignoredPodSubresources = map[string]bool{
	"exec": true, "attach": true, "binding": true, "eviction": true, "log": true, "portforward": true, "proxy": true, "status": true,
}

// Validate checks pods, workload templates and namespaces.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	switch {
	case a.Resource.Group == "" && a.Resource.Resource == "namespaces":
		return p.validateNamespace(ctx, a)
	case a.Resource.Group == "" && a.Resource.Resource == "pods":
		if ignoredPodSubresources[a.Subresource] {
			return nil
		}
		pod, ok := a.Object.(*corev1.Pod)
		if !ok {
			return decodeError(ctx, a, "failed to decode pod")
		}
		unchanged := false
		if a.Operation == admission.Update {
			old, ok := a.OldObject.(*corev1.Pod)
			if !ok {
				return decodeError(ctx, a, "failed to decode old pod")
			}
			unchanged = !significantUpdate(pod, old)
		}
		return p.evaluate(ctx, a, &pod.ObjectMeta, &pod.Spec, podMode{enforce: true, unchanged: unchanged})
	}
	if a.Subresource != "" {
		return nil
	}
	meta, spec := podTemplate(a.Object)
	if spec == nil {
		return nil
	}
	return p.evaluate(ctx, a, meta, spec, podMode{})
}

// decodeError refuses a pod write whose object is not a pod, as kube does,
// telling why in an audit annotation.
func decodeError(ctx context.Context, a *admission.Attributes, msg string) error {
	metrics.PodSecurityError(request(a), true)
	annotate(ctx, "error", msg)
	return apierrors.NewBadRequest(msg)
}

// podTemplate is the pod template of a workload, nil for other objects.
func podTemplate(obj runtime.Object) (*metav1.ObjectMeta, *corev1.PodSpec) {
	var t *corev1.PodTemplateSpec
	switch o := obj.(type) {
	case *corev1.PodTemplate:
		t = &o.Template
	case *corev1.ReplicationController:
		t = o.Spec.Template
	case *appsv1.ReplicaSet:
		t = &o.Spec.Template
	case *appsv1.Deployment:
		t = &o.Spec.Template
	case *appsv1.DaemonSet:
		t = &o.Spec.Template
	case *appsv1.StatefulSet:
		t = &o.Spec.Template
	case *batchv1.Job:
		t = &o.Spec.Template
	case *batchv1.CronJob:
		t = &o.Spec.JobTemplate.Spec.Template
	}
	if t == nil {
		return nil, nil
	}
	return &t.ObjectMeta, &t.Spec
}

// podMode is how evaluate treats a pod spec: a pod's is enforced, a
// template's only warned of; an update that changes nothing the policy
// reads is not checked (after the exemptions, which kube reports for it).
type podMode struct {
	enforce, unchanged bool
}

// evaluate checks a pod spec against the namespace's levels: enforce
// refuses (pods only), audit adds an audit annotation, warn a Warning;
// exemptions, the policy enforced and a namespace's invalid labels are
// told in audit annotations, kube's pod-security.kubernetes.io/* ones.
func (p *Plugin) evaluate(ctx context.Context, a *admission.Attributes, meta *metav1.ObjectMeta, spec *corev1.PodSpec, mode podMode) error {
	enforce := mode.enforce
	if a.Namespace != "" && slices.Contains(p.exemptions.Namespaces, a.Namespace) {
		annotate(ctx, api.ExemptionReasonAnnotationKey, "namespace")
		metrics.PodSecurityExemption(request(a))
		return nil
	}
	if p.exemptUser(ctx) {
		annotate(ctx, api.ExemptionReasonAnnotationKey, "user")
		metrics.PodSecurityExemption(request(a))
		return nil
	}
	ns, err := p.namespace(ctx, a.Namespace)
	if err != nil {
		metrics.PodSecurityError(request(a), true)
		if !enforce {
			annotate(ctx, "error", fmt.Sprintf("failed to lookup namespace %q: %v", a.Namespace, err))
			return nil
		}
		refused := apierrors.NewInternalError(fmt.Errorf("failed to lookup namespace %q", a.Namespace))
		annotate(ctx, "error", fmt.Sprintf("%s: %v", refused.ErrStatus.Message, err))
		return refused
	}
	nsPolicy, errs := api.PolicyToEvaluate(ns.Labels, p.defaults)
	switch {
	case len(errs) > 0:
	case enforce && nsPolicy.FullyPrivileged():
		annotate(ctx, api.EnforcedPolicyAnnotationKey, api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()}.String())
		recordEvaluation(a, true, nsPolicy.Enforce, "enforce")
		return nil
	case !enforce && nsPolicy.Warn.Level == api.LevelPrivileged && nsPolicy.Audit.Level == api.LevelPrivileged:
		return nil
	}
	if mode.unchanged {
		return nil
	}
	if p.exemptRuntimeClass(spec.RuntimeClassName) {
		annotate(ctx, api.ExemptionReasonAnnotationKey, "runtimeClass")
		metrics.PodSecurityExemption(request(a))
		return nil
	}
	if len(errs) > 0 {
		annotate(ctx, "error", fmt.Sprintf("Failed to parse policy: %v", errs.ToAggregate()))
		metrics.PodSecurityError(request(a), false)
	}
	return p.check(ctx, a, nsPolicy, meta, spec, enforce)
}

// check evaluates the policy's levels, each level and version once.
func (p *Plugin) check(ctx context.Context, a *admission.Attributes, nsPolicy api.Policy, meta *metav1.ObjectMeta, spec *corev1.PodSpec, enforce bool) error {
	results := map[api.LevelVersion]policy.AggregateCheckResult{}
	result := func(lv api.LevelVersion) policy.AggregateCheckResult {
		r, ok := results[lv]
		if !ok {
			r = policy.AggregateCheckResults(p.evaluator.EvaluatePod(lv, meta, spec))
			results[lv] = r
		}
		return r
	}
	var refused error
	if enforce {
		annotate(ctx, api.EnforcedPolicyAnnotationKey, nsPolicy.Enforce.String())
		r := result(nsPolicy.Enforce)
		if !r.Allowed {
			refused = apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
				fmt.Errorf("violates PodSecurity %q: %s", nsPolicy.Enforce.String(), r.ForbiddenDetail()))
		}
		recordEvaluation(a, r.Allowed, nsPolicy.Enforce, "enforce")
	}
	if r := result(nsPolicy.Audit); !r.Allowed {
		recordEvaluation(a, false, nsPolicy.Audit, "audit")
		annotate(ctx, api.AuditViolationsAnnotationKey, fmt.Sprintf("would violate PodSecurity %q: %s", nsPolicy.Audit.String(), r.ForbiddenDetail()))
	}
	if refused != nil {
		return refused
	}
	if r := result(nsPolicy.Warn); !r.Allowed {
		recordEvaluation(a, false, nsPolicy.Warn, "warn")
		warning.Add(ctx, fmt.Sprintf("would violate PodSecurity %q: %s", nsPolicy.Warn.String(), r.ForbiddenDetail()))
	}
	return nil
}

// annotate adds kube's PodSecurity audit annotation key to the request's
// audit event.
func annotate(ctx context.Context, key, value string) {
	audit.AddAnnotation(ctx, api.AuditAnnotationPrefix+key, value)
}

func (p *Plugin) exemptRuntimeClass(name *string) bool {
	return name != nil && *name != "" && slices.Contains(p.exemptions.RuntimeClasses, *name)
}

func (p *Plugin) exemptUser(ctx context.Context) bool {
	if len(p.exemptions.Usernames) == 0 {
		return false
	}
	u, ok := authn.UserFrom(ctx)
	return ok && slices.Contains(p.exemptions.Usernames, u.Name)
}

// significantUpdate reports whether an update changes what the policy
// looks at (kube: an image, or the containers themselves).
func significantUpdate(pod, old *corev1.Pod) bool {
	if len(pod.Spec.Containers) != len(old.Spec.Containers) || len(pod.Spec.InitContainers) != len(old.Spec.InitContainers) {
		return true
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Image != old.Spec.Containers[i].Image {
			return true
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Image != old.Spec.InitContainers[i].Image {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		i := slices.IndexFunc(old.Spec.EphemeralContainers, func(o corev1.EphemeralContainer) bool { return o.Name == c.Name })
		if i < 0 || old.Spec.EphemeralContainers[i].Image != c.Image {
			return true
		}
	}
	return false
}
