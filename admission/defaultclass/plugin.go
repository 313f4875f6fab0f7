// Package defaultclass is kube's DefaultStorageClass and DefaultIngressClass
// plugins: a PersistentVolumeClaim or an Ingress that names no class gets
// the default one, the newest of those annotated default (by name when
// made at once).
package defaultclass

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/admission"
)

// Lister lists the metadata of every class.
type Lister func(ctx context.Context) ([]metav1.ObjectMeta, error)

// Plugin gives a class to the objects of one resource that name none.
type Plugin struct {
	list     Lister
	defaults []string // annotations marking a default class, "true"
	resource string   // group/resource
	admit    func(a *admission.Attributes, def func() (string, error)) error
}

var (
	_ admission.Mutator = (*Plugin)(nil)
	_ admission.Handles = (*Plugin)(nil)
)

// Handles creates.
func (*Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit names the default class, when there is one, for an object naming none.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Subresource != "" || a.Resource.GroupResource().String() != p.resource {
		return nil
	}
	return p.admit(a, func() (string, error) {
		name, err := p.defaultClass(ctx)
		if err != nil {
			return "", admission.NewForbidden(a, err)
		}
		return name, nil
	})
}

// defaultClass is the newest default class ("" if none).
func (p *Plugin) defaultClass(ctx context.Context) (string, error) {
	metas, err := p.list(ctx)
	if err != nil {
		return "", err
	}
	metas = slices.DeleteFunc(metas, func(m metav1.ObjectMeta) bool {
		return !slices.ContainsFunc(p.defaults, func(k string) bool { return m.Annotations[k] == "true" })
	})
	if len(metas) == 0 {
		return "", nil
	}
	slices.SortFunc(metas, func(x, y metav1.ObjectMeta) int {
		if c := y.CreationTimestamp.Compare(x.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
	return metas[0].Name, nil
}

// NewStorage is DefaultStorageClass over the storage classes.
func NewStorage(list Lister) *Plugin {
	return &Plugin{
		list: list, resource: "persistentvolumeclaims",
		defaults: []string{"storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"},
		admit: func(a *admission.Attributes, def func() (string, error)) error {
			pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
			if !ok || pvc.Spec.StorageClassName != nil {
				return nil
			}
			if _, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
				return nil
			}
			name, err := def()
			if err == nil && name != "" {
				pvc.Spec.StorageClassName = &name
			}
			return err
		},
	}
}

// NewIngress is DefaultIngressClass over the ingress classes.
func NewIngress(list Lister) *Plugin {
	return &Plugin{
		list: list, resource: "ingresses.networking.k8s.io", defaults: []string{networkingv1.AnnotationIsDefaultIngressClass},
		admit: func(a *admission.Attributes, def func() (string, error)) error {
			ing, ok := a.Object.(*networkingv1.Ingress)
			if !ok {
				return apierrors.NewInternalError(fmt.Errorf("Expected Ingress resource, got: %v", a.Kind))
			}
			if ing.Spec.IngressClassName != nil {
				return nil
			}
			if _, ok := ing.Annotations["kubernetes.io/ingress.class"]; ok {
				return nil
			}
			name, err := def()
			if err == nil && name != "" {
				ing.Spec.IngressClassName = &name
			}
			return err
		},
	}
}
