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
	"github.com/capstan-io/capstan/authn"
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
			return apierrors.NewBadRequest("failed to decode pod")
		}
		if old, ok := a.OldObject.(*corev1.Pod); a.Operation == admission.Update && ok && !significantUpdate(pod, old) {
			return nil
		}
		return p.evaluate(ctx, a, &pod.ObjectMeta, &pod.Spec, true)
	}
	if a.Subresource != "" {
		return nil
	}
	meta, spec := podTemplate(a.Object)
	if spec == nil {
		return nil
	}
	return p.evaluate(ctx, a, meta, spec, false)
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

// evaluate checks a pod spec against the namespace's levels: enforce
// refuses (pods only), warn adds a Warning.
func (p *Plugin) evaluate(ctx context.Context, a *admission.Attributes, meta *metav1.ObjectMeta, spec *corev1.PodSpec, enforce bool) error {
	if slices.Contains(p.exemptions.Namespaces, a.Namespace) || p.exemptUser(ctx) {
		return nil
	}
	ns, err := p.namespace(ctx, a.Namespace)
	if err != nil {
		if !enforce {
			return nil
		}
		return apierrors.NewInternalError(fmt.Errorf("failed to lookup namespace %q", a.Namespace))
	}
	nsPolicy, errs := api.PolicyToEvaluate(ns.Labels, p.defaults)
	if len(errs) == 0 && nsPolicy.FullyPrivileged() {
		return nil
	}
	if spec.RuntimeClassName != nil && slices.Contains(p.exemptions.RuntimeClasses, *spec.RuntimeClassName) {
		return nil
	}
	results := map[api.LevelVersion]policy.AggregateCheckResult{}
	check := func(lv api.LevelVersion) policy.AggregateCheckResult {
		r, ok := results[lv]
		if !ok {
			r = policy.AggregateCheckResults(p.evaluator.EvaluatePod(lv, meta, spec))
			results[lv] = r
		}
		return r
	}
	if enforce {
		if r := check(nsPolicy.Enforce); !r.Allowed {
			return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
				fmt.Errorf("violates PodSecurity %q: %s", nsPolicy.Enforce.String(), r.ForbiddenDetail()))
		}
	}
	if r := check(nsPolicy.Warn); !r.Allowed {
		warning.Add(ctx, fmt.Sprintf("would violate PodSecurity %q: %s", nsPolicy.Warn.String(), r.ForbiddenDetail()))
	}
	return nil
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
