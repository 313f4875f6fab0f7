package loadtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// toolLabel marks the config maps the tool creates.
const toolLabel, toolLabelValue = "app", "capstan-load"

// configMap returns a config map named name in ns whose data holds about
// size bytes.
func configMap(ns, name string, size int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{toolLabel: toolLabelValue}},
		Data:       map[string]string{"payload": strings.Repeat("x", size)},
	}
}

// parallel runs f(i) for i in [0, n) on workers goroutines and stops early
// when ctx is done.
func parallel(ctx context.Context, n, workers int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

// createConfigMaps creates n config maps prefix-<i> in ns at concurrency c,
// each timed as op in rec.
func createConfigMaps(ctx context.Context, kube kubernetes.Interface, ns, prefix string, n, c, size int, rec *Recorder, op string) {
	parallel(ctx, n, c, func(i int) {
		cm := configMap(ns, fmt.Sprintf("%s-%07d", prefix, i), size)
		_ = rec.Time(op, func() error {
			_, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
			return err
		})
	})
}

// deleteConfigMaps deletes every config map of ns in one request.
func deleteConfigMaps(ctx context.Context, kube kubernetes.Interface, ns string) error {
	return kube.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}

// createNamespace creates ns for one workload.
func createNamespace(ctx context.Context, kube kubernetes.Interface, ns string) error {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"app": "capstan-load"}}}
	_, err := kube.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{})
	return err
}

// deleteNamespace deletes ns and its config maps and waits until it is
// gone. A kube-apiserver without kube-controller-manager never finalizes a
// namespace, so after a while the tool removes the "kubernetes" finalizer
// itself, as the namespace controller would once the content is gone.
func deleteNamespace(ctx context.Context, kube kubernetes.Interface, ns string) error {
	if err := deleteConfigMaps(ctx, kube, ns); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the config maps of %s: %w", ns, err)
	}
	err := kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if waitGone(ctx, kube, ns, 5*time.Second) == nil {
		return nil
	}
	obj, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	obj.Spec.Finalizers = nil
	if _, err := kube.CoreV1().Namespaces().Finalize(ctx, obj, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("finalizing %s: %w", ns, err)
	}
	return waitGone(ctx, kube, ns, 30*time.Second)
}

func waitGone(ctx context.Context, kube kubernetes.Interface, ns string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return errors.Join(fmt.Errorf("namespace %s still exists", ns), err)
	}
	return nil
}
