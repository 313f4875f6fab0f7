package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/controlplane"
	"github.com/capstan-io/capstan/controlplane/controllers/apiserveridentity"
	"github.com/capstan-io/capstan/internal/testkit"
)

// TestIdentityLease: every server keeps kube's identity lease in
// kube-system, named by the hash of its host name, labelled and timed as
// kube's, and renews it.
func TestIdentityLease(t *testing.T) {
	e := e2eutil.Start(t)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	name := apiserveridentity.LeaseName(host, "kube-apiserver")
	leases := e.Clientset.CoordinationV1().Leases(metav1.NamespaceSystem)
	var l *coordinationv1.Lease
	e2eutil.Eventually(t, time.Minute, "the identity lease "+name, func(ctx context.Context) (bool, error) {
		l, err = leases.Get(ctx, name, metav1.GetOptions{})
		return err == nil, ignoreNotFound(err)
	})
	if got := l.Labels["apiserver.kubernetes.io/identity"]; got != "kube-apiserver" {
		t.Errorf("identity label = %q", got)
	}
	if got := l.Labels[corev1.LabelHostname]; got != host {
		t.Errorf("hostname label = %q, want %q", got, host)
	}
	if h := l.Spec.HolderIdentity; h == nil || !strings.HasPrefix(*h, name+"_") {
		t.Errorf("holderIdentity = %v, want %s_<uuid>", h, name)
	}
	if d := l.Spec.LeaseDurationSeconds; d == nil || *d != 3600 {
		t.Errorf("leaseDurationSeconds = %v, want 3600", d)
	}
	if l.Spec.RenewTime == nil {
		t.Fatal("no renewTime")
	}
	first := l.Spec.RenewTime.Time
	// kube renews every 10 s.
	e2eutil.Eventually(t, time.Minute, "a renewal of the identity lease", func(ctx context.Context) (bool, error) {
		l, err = leases.Get(ctx, name, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime.After(first), err
	})
}

// TestIdentityLeaseGC: expired identity leases are deleted by the
// collector every replica runs after its start; other leases stay.
func TestIdentityLeaseGC(t *testing.T) {
	e := e2eutil.Start(t)
	ctx := e2eutil.Ctx(t)
	leases := e.Clientset.CoordinationV1().Leases(metav1.NamespaceSystem)
	lease := func(name string, labelled bool, renewed time.Duration) *coordinationv1.Lease {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: coordinationv1.LeaseSpec{
			LeaseDurationSeconds: ptrTo[int32](3600), RenewTime: &metav1.MicroTime{Time: time.Now().Add(-renewed)},
		}}
		if labelled {
			l.Labels = map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver"}
		}
		return l
	}
	for _, l := range []*coordinationv1.Lease{
		lease("apiserver-gone", true, 2*time.Hour), lease("apiserver-alive", true, time.Minute), lease("not-an-identity", false, 2*time.Hour),
	} {
		if _, err := leases.Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.Restart(t) // the collector runs at start, then hourly
	c := e.Client(t)
	e2eutil.Eventually(t, time.Minute, "the expired identity lease deleted", func(ctx context.Context) (bool, error) {
		_, err := c.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, "apiserver-gone", metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	})
	for _, name := range []string{"apiserver-alive", "not-an-identity"} {
		if _, err := c.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("lease %s: %v", name, err)
		}
	}
}

// TestLeaderElectionHandsOver: two replicas on one etcd run the loops kube
// leaves to kube-controller-manager on the holder of one lease; when it
// stops, it gives the lease up and the other takes over, running the
// namespace controller there. A third server only hosts the etcd, with
// no loops of its own.
func TestLeaderElectionHandsOver(t *testing.T) {
	host := testkit.StartServer(t, "--controllers=", "--leader-elect=false")
	etcd := "--etcd-servers=" + strings.Join(host.EtcdEndpoints(), ",")
	first := testkit.StartServer(t, etcd)
	second := testkit.StartServer(t, etcd)
	c := second.Client(t)
	leases := c.CoordinationV1().Leases(metav1.NamespaceSystem)
	var holder string
	e2eutil.Eventually(t, time.Minute, "a leader", func(ctx context.Context) (bool, error) {
		l, err := leases.Get(ctx, controlplane.ControllersLease, metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		return holder != "", ignoreNotFound(err)
	})
	first.Stop(t) // the first to campaign leads; it gives the lease up
	e2eutil.Eventually(t, time.Minute, "another leader", func(ctx context.Context) (bool, error) {
		l, err := leases.Get(ctx, controlplane.ControllersLease, metav1.GetOptions{})
		return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" && *l.Spec.HolderIdentity != holder, err
	})
	deleteNamespaceThroughController(t, c)
}

// deleteNamespaceThroughController deletes a namespace with a config map
// in it; only the namespace controller finishes that deletion.
func deleteNamespaceThroughController(t *testing.T, c kubernetes.Interface) {
	ctx := e2eutil.Ctx(t)
	ns := e2eutil.Unique("ha")
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, time.Minute, "namespace "+ns+" deleted", func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	})
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
