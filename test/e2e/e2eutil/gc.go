package e2eutil

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// GcWait bounds how long the collector may take to act on a change.
const GcWait = 30 * time.Second

func OwnedBy(apiVersion, kind, name string, uid types.UID, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, BlockOwnerDeletion: &block}
}

func (e *Env) OwnedConfigMap(t *testing.T, ns, name string, finalizers []string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners, Finalizers: finalizers}}
	out, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(Ctx(t), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s/%s: %v", ns, name, err)
	}
	return out
}

func (e *Env) OwnedSecret(t *testing.T, ns, name string, owners ...metav1.OwnerReference) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners}}
	out, err := e.Clientset.CoreV1().Secrets(ns).Create(Ctx(t), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating secret %s/%s: %v", ns, name, err)
	}
	return out
}

// Gone waits until get answers NotFound.
func Gone(t *testing.T, what string, get func(ctx context.Context) error) {
	t.Helper()
	Eventually(t, GcWait, what+" deleted", func(ctx context.Context) (bool, error) {
		err := get(ctx)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, nil
	})
}

func (e *Env) CMGone(t *testing.T, ns, name string) {
	t.Helper()
	Gone(t, "configmap "+name, func(ctx context.Context) error {
		_, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	})
}

func (e *Env) SecretGone(t *testing.T, ns, name string) {
	t.Helper()
	Gone(t, "secret "+name, func(ctx context.Context) error {
		_, err := e.Clientset.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	})
}

func (e *Env) DeleteCM(t *testing.T, ns, name string, policy *metav1.DeletionPropagation) {
	t.Helper()
	if err := e.Clientset.CoreV1().ConfigMaps(ns).Delete(Ctx(t), name, metav1.DeleteOptions{PropagationPolicy: policy}); err != nil {
		t.Fatalf("deleting configmap %s: %v", name, err)
	}
}

// CollectorSawConfigMaps returns once the collector has processed every
// config map written to ns so far: it has deleted a dangling one written
// after them, and it reads one informer's events in order.
func (e *Env) CollectorSawConfigMaps(t *testing.T, ns string) {
	t.Helper()
	e.OwnedConfigMap(t, ns, "gc-barrier", nil, OwnedBy("v1", "ConfigMap", "nobody", "0f8c3a2e-0000-4000-8000-000000000002", false))
	e.CMGone(t, ns, "gc-barrier")
}

// stays checks for a while that the configmap is still there and returns it.
func (e *Env) CMStays(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	time.Sleep(time.Second)
	cm, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(Ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("configmap %s should still exist: %v", name, err)
	}
	return cm
}
