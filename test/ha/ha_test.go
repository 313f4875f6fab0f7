package ha

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/controlplane"
)

// TestHA: three replicas on a three-member etcd cluster over mutual TLS,
// writes through a load balancer from retrying clients; the leading
// replica and an etcd member are killed with SIGKILL, the killed replica
// comes back, then the other two are restarted in turn. No acknowledged
// write is lost and no create is given up. The elected loops run once
// throughout: every version of their Lease shows one holder at a time
// (a holder follows another only after a release or an expiry) and no
// time without one longer than the lease duration; no two replicas say
// they lead at one sample of their metrics; and a namespace created after
// each step gets its service account and root CA from the loops, each
// created once and never rewritten.
func TestHA(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and an etcd cluster")
	}
	dir := t.TempDir()
	etcd := startEtcd(t, dir)
	c := newCluster(t, dir, etcd)
	replicas := []*replica{{name: "r0"}, {name: "r1"}, {name: "r2"}}
	starting := time.Now()
	var wg sync.WaitGroup
	for _, r := range replicas {
		r.addr, r.dir = fmt.Sprintf("127.0.0.1:%d", freePort(t)), t.TempDir()
		wg.Go(func() { c.startReplica(t, r) })
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("etcd and three replicas ready in %.1fs", time.Since(starting).Seconds())
	direct := map[string]kubernetes.Interface{}
	var addrs []string
	for _, r := range replicas {
		direct[r.name] = kubernetes.NewForConfigOrDie(c.admin(r.addr))
		addrs = append(addrs, r.addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	seenAcrossReplicas(t, ctx, direct["r0"], direct["r1"], direct["r2"])

	lb := startBalancer(t, addrs, func(a string) kubernetes.Interface { return kubernetes.NewForConfigOrDie(c.admin(a)) })
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "load"}}
	if _, err := direct["r0"].CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l := &leaders{seen: map[string]bool{}, last: map[string]string{}}
	stopSampling := sampleLeaders(ctx, l, direct)
	viaLB := kubernetes.NewForConfigOrDie(c.admin(lb.addr()))
	var lease *leaseHistory
	var stopLease func()
	if err := poll(ctx, func() bool {
		var err error
		lease, stopLease, err = watchLease(ctx, viaLB, leaseDuration)
		return err == nil
	}); err != nil {
		t.Fatalf("no %s Lease: %v", controlplane.ControllersLease, err)
	}
	defer stopLease()
	fx, err := watchEffects(ctx, viaLB)
	if err != nil {
		t.Fatal(err)
	}
	defer fx.stop()
	w := startWriters(6, "load", func() kubernetes.Interface { return kubernetes.NewForConfigOrDie(c.admin(lb.addr())) })
	began := time.Now()
	var namespaces []string
	step := func(what string, err error) {
		t.Helper()
		t.Logf("%5.1fs %s", time.Since(began).Seconds(), what)
		if err != nil {
			w.finish()
			stopSampling()
			for _, r := range replicas {
				t.Logf("%s: last scrape %q; log:\n%s", r.name, l.last[r.name], r.logTail())
			}
			t.Fatalf("%s: %v", what, err)
		}
		// A namespace after each step, for the elected loops to fill
		// whoever leads now.
		ns := fmt.Sprintf("step-%d", len(namespaces))
		namespaces = append(namespaces, ns)
		w.createNamespace(ctx, viaLB, ns)
	}
	step("writes", w.waitWrites(ctx, 20))

	// SIGKILL the leader and an etcd member.
	var first string
	step("a leader", poll(ctx, func() bool { first = l.leader(); return first != "" }))
	dead := byName(replicas, first)
	dead.kill()
	etcd.kill(0)
	t.Logf("killed %s (leading) and etcd member m0", first)
	step("another leader", poll(ctx, func() bool { return l.leader() != "" && l.leader() != first }))
	step("writes after the kills", w.waitWrites(ctx, 20))
	c.startReplica(t, dead)

	// A rolling restart of the others: each stops (SIGTERM), then starts
	// again. The killed one has just started.
	for _, r := range replicas {
		if r == dead {
			continue
		}
		r.stop(t)
		c.startReplica(t, r)
		step("writes after restarting "+r.name, w.waitWrites(ctx, 20))
	}
	step("a leader after the restarts", poll(ctx, func() bool { return l.leader() != "" }))
	unfilled := false
	for _, ns := range namespaces {
		if err := poll(ctx, func() bool { return fx.created(ns) }); err != nil {
			unfilled = true
			t.Errorf("namespace %s: the elected loops did not create its service account and root CA: %v", ns, err)
		}
	}
	if unfilled {
		for _, r := range replicas {
			t.Logf("%s: last scrape %q; log:\n%s", r.name, l.last[r.name], r.logTail())
		}
	}
	t.Logf("effects: watches resumed from a list %d times", fx.resumed())
	acked := w.finish()
	stopSampling()
	stopLease()
	fx.stop()

	checkNothingLost(t, ctx, kubernetes.NewForConfigOrDie(c.admin(lb.addr())), acked)
	for _, be := range lb.backends {
		t.Logf("balancer: %d connections to %s", be.conns.Load(), be.addr)
	}
	t.Logf("%d creates acknowledged, %d attempts retried, %d given up; leaders seen %v over %d samples, at most %d at once (%d handoffs caught between two scrapes)",
		len(acked), w.transient.Load(), w.failed.Load(), l.seen, l.samples, l.most, l.handoffs)
	if n := w.failed.Load(); n > 0 {
		t.Errorf("%d creates failed after retries", n)
	}
	if l.most > 1 {
		t.Errorf("%d replicas led the elected loops at two consecutive samples", l.most)
	}
	summary, violations := lease.report()
	t.Logf("lease: %s", summary)
	for _, v := range violations {
		t.Errorf("lease: %s", v)
	}
	for _, ns := range namespaces {
		for _, p := range fx.problems(ns) {
			t.Errorf("elected loops: %s", p)
		}
	}
	deleteNamespace(t, ctx, kubernetes.NewForConfigOrDie(c.admin(lb.addr())), "load")
}

// seenAcrossReplicas: a write through one replica is seen by a watch on
// another and by a consistent list on a third.
func seenAcrossReplicas(t *testing.T, ctx context.Context, a, b, c kubernetes.Interface) {
	list, err := b.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wi, err := b.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer wi.Stop()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "across"}}
	if _, err := a.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for ev := range wi.ResultChan() {
		if ev.Type == watch.Added && ev.Object.(*corev1.ConfigMap).Name == "across" {
			break
		}
	}
	if _, err := c.CoreV1().ConfigMaps("default").Get(ctx, "across", metav1.GetOptions{}); err != nil {
		t.Fatalf("a write through one replica, read through another: %v", err)
	}
}

// checkNothingLost lists the load's config maps (a consistent list) and
// checks every acknowledged name is there.
func checkNothingLost(t *testing.T, ctx context.Context, c kubernetes.Interface, acked []string) {
	list, err := c.CoreV1().ConfigMaps("load").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, cm := range list.Items {
		stored[cm.Name] = true
	}
	lost := 0
	for _, name := range acked {
		if !stored[name] {
			lost++
			t.Errorf("acknowledged create of %s lost", name)
		}
	}
	t.Logf("%d config maps stored, %d acknowledged, %d lost", len(list.Items), len(acked), lost)
}

// deleteNamespace deletes ns; only the namespace controller, which runs on
// the leader, finishes that.
func deleteNamespace(t *testing.T, ctx context.Context, c kubernetes.Interface, ns string) {
	if err := c.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := poll(ctx, func() bool {
		_, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if err != nil {
		t.Fatalf("namespace %s not deleted by the elected namespace controller: %v", ns, err)
	}
}

func sampleLeaders(ctx context.Context, l *leaders, clients map[string]kubernetes.Interface) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			l.sample(ctx, clients)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() { cancel(); <-done }
}

// poll waits for cond, checking every 50 ms until ctx ends.
func poll(ctx context.Context, cond func() bool) error {
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) { return cond(), nil })
}

func byName(rs []*replica, name string) *replica {
	for _, r := range rs {
		if r.name == name {
			return r
		}
	}
	return nil
}
