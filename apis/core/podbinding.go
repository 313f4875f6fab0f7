package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
)

// BindingREST serves pods/binding: the scheduler binds a pod to a node by
// POSTing a Binding, which sets spec.nodeName once.
type BindingREST struct {
	store *registry.Store
}

var (
	_ rest.NamedCreater = (*BindingREST)(nil)
	_ rest.Scoper       = (*BindingREST)(nil)
)

// NewBindingREST returns the storage of pods/binding over the pods store.
func NewBindingREST(pods *registry.Store) *BindingREST {
	return &BindingREST{store: pods.WithStrategy(podBindingStrategy{})}
}

// New returns an empty Binding.
func (*BindingREST) New() runtime.Object { return &corev1.Binding{} }

// NamespaceScoped is true.
func (*BindingREST) NamespaceScoped() bool { return true }

// bindingGroupResource is the resource kube names in the conflicts of a
// binding.
var bindingGroupResource = schema.GroupResource{Resource: "pods/binding"}

// Create binds the pod name to the node the Binding targets. The Binding's
// uid and resourceVersion, when set, must be the pod's. The pod gains the
// Binding's annotations and labels and a PodScheduled condition.
func (r *BindingREST) Create(ctx context.Context, name string, obj runtime.Object, validate rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	b, ok := obj.(*corev1.Binding)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Binding object: %T", obj))
	}
	if name != b.Name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	if errs := ValidateBinding(b); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Binding"}, name, errs)
	}
	if validate != nil {
		if err := validate(ctx, b.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	bind := func(_ context.Context, old runtime.Object) (runtime.Object, error) {
		if old == nil {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
		}
		pod := old.DeepCopyObject().(*corev1.Pod)
		if err := bindPod(pod, b); err != nil {
			return nil, apierrors.NewConflict(bindingGroupResource, name, err)
		}
		return pod, nil
	}
	_, _, err := r.store.Update(ctx, name, rest.UpdatedObjectFunc(bind), nil, nil, false, &metav1.UpdateOptions{DryRun: opts.DryRun})
	if err != nil {
		return nil, err
	}
	return &metav1.Status{Status: metav1.StatusSuccess}, nil
}

// bindPod assigns pod to the Binding's node, or says why it cannot be.
func bindPod(pod *corev1.Pod, b *corev1.Binding) error {
	switch {
	case b.UID != "" && b.UID != pod.UID:
		return fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID)
	case b.ResourceVersion != "" && b.ResourceVersion != pod.ResourceVersion:
		return fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", b.ResourceVersion, pod.ResourceVersion)
	case pod.DeletionTimestamp != nil:
		return fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name)
	case pod.Spec.NodeName != "":
		return fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName)
	case len(pod.Spec.SchedulingGates) > 0:
		return fmt.Errorf("pod %v has non-empty .spec.schedulingGates", pod.Name)
	}
	pod.Spec.NodeName = b.Target.Name
	pod.Status.NominatedNodeName = ""
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	for k, v := range b.Annotations {
		pod.Annotations[k] = v
	}
	for _, k := range legacyInitContainerAnnotations {
		delete(pod.Annotations, k)
	}
	if len(b.Labels) > 0 && pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	for k, v := range b.Labels {
		pod.Labels[k] = v
	}
	setPodCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
	return nil
}

// legacyInitContainerAnnotations are the alpha and beta forms of init
// containers, long gone, that a binding must not bring back.
var legacyInitContainerAnnotations = []string{
	"pod.beta.kubernetes.io/init-containers", "pod.alpha.kubernetes.io/init-containers",
	"pod.beta.kubernetes.io/init-container-statuses", "pod.alpha.kubernetes.io/init-container-statuses",
}

// ValidateBinding requires a target node, by name.
func ValidateBinding(b *corev1.Binding) field.ErrorList {
	var errs field.ErrorList
	kindPath, namePath := field.NewPath("target", "kind"), field.NewPath("target", "name")
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(kindPath, b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		return append(errs, field.Required(namePath, ""))
	}
	if b.Target.Kind == "" || b.Target.Kind == "Node" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(b.Target.Name, false) {
			errs = append(errs, field.Invalid(namePath, b.Target.Name, msg))
		}
	}
	return errs
}

// podBindingStrategy updates a pod through pods/binding: the binding
// computes the whole new pod from the stored one, so nothing is carried
// over and the pod rules on updates, which forbid a change of nodeName,
// do not apply.
type podBindingStrategy struct{ PodStrategy }

func (podBindingStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

func (podBindingStrategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}
