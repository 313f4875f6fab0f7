package perns

import (
	"context"
	"log/slog"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// The controllers' names, kube-controller-manager's.
const (
	ServiceAccountName = "serviceaccount"
	RootCAName         = "root-ca-cert-publisher"
)

const (
	// DefaultServiceAccount is the account every namespace gets.
	DefaultServiceAccount = "default"
	// RootCAConfigMap is the config map of the cluster's CA.
	RootCAConfigMap = "kube-root-ca.crt"

	descriptionAnnotation = "kubernetes.io/description"
	rootCADescription     = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// named lists and watches only the objects called name.
func named(name string) func(*metav1.ListOptions) {
	return func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}
}

// gone reports an error a create in a namespace being deleted gets, which
// the loop need not retry.
func gone(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}

// NewServiceAccounts is the serviceaccount controller: a "default"
// ServiceAccount in every active namespace.
func NewServiceAccounts(client kubernetes.Interface, logger *slog.Logger) (*Controller, error) {
	return New(Config{
		Name: ServiceAccountName, Client: client, Logger: logger, ObjectName: DefaultServiceAccount,
		Objects: coreinformers.NewFilteredServiceAccountInformer(client, metav1.NamespaceAll, 0, cache.Indexers{}, named(DefaultServiceAccount)),
		Sync: func(ctx context.Context, ns string, current any) error {
			if current != nil {
				return nil
			}
			sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceAccount}}
			_, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) && !gone(err) {
				return err
			}
			return nil
		},
	})
}

// NewRootCA is the root-ca-cert-publisher: the kube-root-ca.crt config map
// with the cluster's CA (ca.crt) in every active namespace, put back as it
// was when changed.
func NewRootCA(client kubernetes.Interface, rootCA []byte, logger *slog.Logger) (*Controller, error) {
	data := map[string]string{"ca.crt": string(rootCA)}
	return New(Config{
		Name: RootCAName, Client: client, Logger: logger, ObjectName: RootCAConfigMap,
		Objects: coreinformers.NewFilteredConfigMapInformer(client, metav1.NamespaceAll, 0, cache.Indexers{}, named(RootCAConfigMap)),
		Sync: func(ctx context.Context, ns string, current any) error {
			if current == nil {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: RootCAConfigMap, Annotations: map[string]string{descriptionAnnotation: rootCADescription}},
					Data:       data,
				}
				_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
				if err != nil && !gone(err) {
					return err
				}
				return nil
			}
			cm := current.(*corev1.ConfigMap)
			if maps.Equal(cm.Data, data) && cm.Annotations[descriptionAnnotation] != "" {
				return nil
			}
			cm = cm.DeepCopy()
			cm.Data = maps.Clone(data)
			if cm.Annotations == nil {
				cm.Annotations = map[string]string{}
			}
			cm.Annotations[descriptionAnnotation] = rootCADescription
			_, err := client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
			return err
		},
	})
}
