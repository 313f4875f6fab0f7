package storageprotection_test

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/admission/storageprotection"
	loops "github.com/capstan-io/capstan/controlplane/controllers/storageprotection"
	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

const ns = "storage"

// TestLoops runs the three loops on a server whose own are off, with one
// worker each: keys are synced in the order their events came, so once a
// "barrier" object stripped of its finalizer has it back, every object
// whose event came before has been synced too, and what its loop left
// alone it left alone for good.
func TestLoops(t *testing.T) {
	s := testkit.StartServer(t, "--controllers=")
	cfg := rest.CopyConfig(s.Config)
	cfg.QPS = -1 // the test polls
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := slog.New(slog.DiscardHandler)
	loopClient := kubernetes.NewForConfigOrDie(cfg)
	claims, err1 := loops.NewClaims(loopClient, logger)
	volumes, err2 := loops.NewVolumes(loopClient, logger)
	classes, err3 := loops.NewClasses(loopClient, logger)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	done := make(chan struct{}, 3)
	for _, l := range []interface{ Run(context.Context, int) }{claims, volumes, classes} {
		go func() { l.Run(ctx, 1); done <- struct{}{} }()
	}
	defer func() { cancel(); <-done; <-done; <-done }()
	must(client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))(t)
	must(client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}))(t)

	t.Run("volumes", func(t *testing.T) { testVolumes(t, client) })
	t.Run("claims", func(t *testing.T) { testClaims(t, client) })
	t.Run("classes", func(t *testing.T) { testClasses(t, client) })
}

// testVolumes: a volume stripped of its finalizer gets it back; a bound
// volume being deleted keeps it until it is released.
func testVolumes(t *testing.T, client kubernetes.Interface) {
	ctx := context.Background()
	pvs := client.CoreV1().PersistentVolumes()
	for _, name := range []string{"bound", "pv-barrier"} {
		must(pvs.Create(ctx, volume(name), metav1.CreateOptions{}))(t)
	}
	strip(t, pvs.Get, pvs.Update, "bound", storageprotection.PVFinalizer)
	pv := must(pvs.Get(ctx, "bound", metav1.GetOptions{}))(t)
	pv.Status.Phase = corev1.VolumeBound
	must(pvs.UpdateStatus(ctx, pv, metav1.UpdateOptions{}))(t)
	if err := pvs.Delete(ctx, "bound", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	strip(t, pvs.Get, pvs.Update, "pv-barrier", storageprotection.PVFinalizer)
	pv = must(pvs.Get(ctx, "bound", metav1.GetOptions{}))(t)
	if pv.DeletionTimestamp == nil || !slices.Contains(pv.Finalizers, storageprotection.PVFinalizer) {
		t.Fatalf("a bound volume being deleted: %v %q, want it kept by its finalizer", pv.DeletionTimestamp, pv.Finalizers)
	}
	pv.Status.Phase = corev1.VolumeReleased
	must(pvs.UpdateStatus(ctx, pv, metav1.UpdateOptions{}))(t)
	gone(t, pvs.Get, "bound")
}

// testClaims: a bound claim's Unused condition follows its pods; a claim
// a scheduled pod mounts stays while the pod does.
func testClaims(t *testing.T, client kubernetes.Interface) {
	ctx := context.Background()
	pvcs := client.CoreV1().PersistentVolumeClaims(ns)
	for _, name := range []string{"data", "pvc-barrier"} {
		must(pvcs.Create(ctx, claim(name, ""), metav1.CreateOptions{}))(t)
	}
	pvc := must(pvcs.Get(ctx, "data", metav1.GetOptions{}))(t)
	pvc.Status.Phase = corev1.ClaimBound
	must(pvcs.UpdateStatus(ctx, pvc, metav1.UpdateOptions{}))(t)
	unused(t, pvcs.Get, corev1.ConditionTrue, "NoPodsUsingPVC", "No pods are currently referencing this PVC")

	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user"}, Spec: corev1.PodSpec{NodeName: "node-1",
		Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
	must(client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}))(t)
	unused(t, pvcs.Get, corev1.ConditionFalse, "PodUsingPVC", "A pod is currently referencing this PVC")

	if err := pvcs.Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	strip(t, pvcs.Get, pvcs.Update, "pvc-barrier", storageprotection.PVCFinalizer)
	if pvc := must(pvcs.Get(ctx, "data", metav1.GetOptions{}))(t); !slices.Contains(pvc.Finalizers, storageprotection.PVCFinalizer) {
		t.Fatalf("a claim a pod mounts lost its finalizer: %q", pvc.Finalizers)
	}
	zero := int64(0)
	if err := client.CoreV1().Pods(ns).Delete(ctx, "user", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	gone(t, pvcs.Get, "data")
}

// testClasses: a class being deleted stays while a claim names it.
func testClasses(t *testing.T, client kubernetes.Interface) {
	ctx := context.Background()
	vacs := client.StorageV1().VolumeAttributesClasses()
	for _, name := range []string{"gold", "vac-barrier"} {
		must(vacs.Create(ctx, &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: name}, DriverName: "csi.example.com",
			Parameters: map[string]string{"iops": "3000"}},
			metav1.CreateOptions{}))(t)
	}
	strip(t, vacs.Get, vacs.Update, "gold", storageprotection.VACFinalizer)
	pvcs := client.CoreV1().PersistentVolumeClaims(ns)
	must(pvcs.Create(ctx, claim("gold-user", "gold"), metav1.CreateOptions{}))(t)
	if err := vacs.Delete(ctx, "gold", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	strip(t, vacs.Get, vacs.Update, "vac-barrier", storageprotection.VACFinalizer)
	if vac := must(vacs.Get(ctx, "gold", metav1.GetOptions{}))(t); !slices.Contains(vac.Finalizers, storageprotection.VACFinalizer) {
		t.Fatalf("a class a claim names lost its finalizer: %q", vac.Finalizers)
	}
	// The claim, unused and unbound, goes at once; then the class.
	if err := pvcs.Delete(ctx, "gold-user", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone(t, pvcs.Get, "gold-user")
	gone(t, vacs.Get, "gold")
}

func volume(name string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}}}}
}

func claim(name, class string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if class != "" {
		pvc.Spec.VolumeAttributesClassName = &class
	}
	return pvc
}

// object is what the three kinds have in common here.
type object interface {
	metav1.Object
	*corev1.PersistentVolume | *corev1.PersistentVolumeClaim | *storagev1.VolumeAttributesClass
}

// strip takes the finalizer off a live object and waits for its loop to
// put it back.
func strip[T object](t *testing.T, get func(context.Context, string, metav1.GetOptions) (T, error),
	update func(context.Context, T, metav1.UpdateOptions) (T, error), name, finalizer string) {
	t.Helper()
	obj := must(get(context.Background(), name, metav1.GetOptions{}))(t)
	if !slices.Contains(obj.GetFinalizers(), finalizer) {
		t.Fatalf("%s has no %s to strip: %q", name, finalizer, obj.GetFinalizers())
	}
	obj.SetFinalizers(slices.DeleteFunc(obj.GetFinalizers(), func(f string) bool { return f == finalizer }))
	must(update(context.Background(), obj, metav1.UpdateOptions{}))(t)
	eventually(t, name+" given "+finalizer+" back", func(ctx context.Context) (bool, error) {
		obj, err := get(ctx, name, metav1.GetOptions{})
		return err == nil && slices.Contains(obj.GetFinalizers(), finalizer), err
	})
}

func gone[T any](t *testing.T, get func(context.Context, string, metav1.GetOptions) (T, error), name string) {
	t.Helper()
	eventually(t, name+" deleted", func(ctx context.Context) (bool, error) {
		_, err := get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// unused waits for the claim data's Unused condition to be as given.
func unused(t *testing.T, get func(context.Context, string, metav1.GetOptions) (*corev1.PersistentVolumeClaim, error),
	status corev1.ConditionStatus, reason, message string) {
	t.Helper()
	eventually(t, "data's Unused condition "+reason, func(ctx context.Context) (bool, error) {
		pvc, err := get(ctx, "data", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range pvc.Status.Conditions {
			if c.Type == corev1.PersistentVolumeClaimUnused {
				return c.Status == status && c.Reason == reason && c.Message == message && !c.LastTransitionTime.IsZero(), nil
			}
		}
		return false, nil
	})
}

func eventually(t *testing.T, what string, cond wait.ConditionWithContextFunc) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// must is v, failing the test on err: must(f())(t).
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
