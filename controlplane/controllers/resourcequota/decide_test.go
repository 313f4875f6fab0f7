package resourcequota

import (
	"context"
	"log/slog"
	"slices"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

func hard(names ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for _, n := range names {
		l[corev1.ResourceName(n)] = resource.MustParse("10")
	}
	return l
}

func TestResourcesOf(t *testing.T) {
	for _, tc := range []struct {
		hard []string
		want []string
	}{
		{[]string{"pods", "requests.cpu", "limits.memory", "count/pods", "cpu"}, []string{"pods"}},
		{[]string{"requests.example.com/gpu", "requests.hugepages-2Mi"}, []string{"pods"}},
		{[]string{"services.nodeports", "services.loadbalancers"}, []string{"services"}},
		{[]string{"requests.storage", "gold.storageclass.storage.k8s.io/persistentvolumeclaims"}, []string{"persistentvolumeclaims"}},
		{[]string{"configmaps", "count/configmaps", "secrets", "replicationcontrollers", "resourcequotas"},
			[]string{"configmaps", "replicationcontrollers", "resourcequotas", "secrets"}},
		{[]string{"count/deployments.apps", "count/widgets.stable.example.com", "count/foos"},
			[]string{"deployments.apps", "foos", "widgets.stable.example.com"}},
		{[]string{"no-such-name", "gold.storageclass.storage.k8s.io/limits.cpu"}, nil},
	} {
		var got []string
		for _, gr := range resourcesOf(hard(tc.hard...)) {
			got = append(got, gr.String())
		}
		sort.Strings(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("resourcesOf(%q) = %q, want %q", tc.hard, got, tc.want)
		}
	}
}

func TestEqualLists(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name string
		a, b corev1.ResourceList
		want bool
	}{
		{"nil and empty", nil, corev1.ResourceList{}, true},
		{"same amount written differently", corev1.ResourceList{"cpu": q("1")}, corev1.ResourceList{"cpu": q("1000m")}, true},
		{"different amount", corev1.ResourceList{"cpu": q("1")}, corev1.ResourceList{"cpu": q("2")}, false},
		{"different names", corev1.ResourceList{"cpu": q("1")}, corev1.ResourceList{"memory": q("1")}, false},
		{"one more name", corev1.ResourceList{"cpu": q("1")}, corev1.ResourceList{"cpu": q("1"), "pods": q("0")}, false},
	} {
		if got := equalLists(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFixed(t *testing.T) {
	for gr, want := range map[schema.GroupResource]bool{
		{Resource: "pods"}: true, {Resource: "resourcequotas"}: true, {Resource: "configmaps"}: true, {Resource: "secrets"}: true,
		{Resource: "services"}: true, {Resource: "persistentvolumeclaims"}: true, {Resource: "replicationcontrollers"}: true,
		{Resource: "endpoints"}: false, {Group: "apps", Resource: "deployments"}: false, {Group: "example.com", Resource: "pods"}: false,
	} {
		if got := fixed(gr); got != want {
			t.Errorf("fixed(%s) = %v, want %v", gr, got, want)
		}
	}
}

// newController is a controller whose clients are never used: the tests
// here call its handlers with quotas put in its informer's store.
func newController(t *testing.T, quotas ...*corev1.ResourceQuota) *Controller {
	t.Helper()
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	c, err := New(Config{Client: kubernetes.NewForConfigOrDie(cfg), Metadata: metadata.NewForConfigOrDie(cfg),
		Discovery: discovery.NewDiscoveryClientForConfigOrDie(cfg), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	for _, q := range quotas {
		if err := c.informer.GetStore().Add(q); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func newQuota(ns, name string, names ...string) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: hard(names...)}}
}

// taken is what the controller was asked to do: the quota keys queued,
// and whether the watches were asked to follow the quotas.
func taken(c *Controller) (keys []string, kicked bool) {
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		c.queue.Done(k)
		keys = append(keys, k)
	}
	sort.Strings(keys)
	select {
	case <-c.dynamic.kick:
		kicked = true
	default:
	}
	return keys, kicked
}

func TestUpdated(t *testing.T) {
	c := newController(t)
	synced := func(q *corev1.ResourceQuota) *corev1.ResourceQuota {
		q.Status.Hard = q.Spec.Hard
		return q
	}
	charged := synced(newQuota("a", "q", "pods"))
	charged.Status.Used = corev1.ResourceList{"pods": resource.MustParse("3")}
	for _, tc := range []struct {
		name     string
		old, obj *corev1.ResourceQuota
		queued   bool
		kicked   bool
	}{
		{"a charge (status.used) only", synced(newQuota("a", "q", "pods")), charged, false, false},
		{"spec.hard changed", synced(newQuota("a", "q", "pods")), newQuota("a", "q", "pods", "count/deployments.apps"), true, true},
		{"status.hard not yet the spec's", newQuota("a", "q", "pods"), newQuota("a", "q", "pods"), true, false},
	} {
		c.updated(tc.old, tc.obj)
		keys, kicked := taken(c)
		if want := map[bool][]string{true: {"a/q"}}[tc.queued]; !slices.Equal(keys, want) || kicked != tc.kicked {
			t.Errorf("%s: queued %q, kicked %v; want %q, %v", tc.name, keys, kicked, want, tc.kicked)
		}
	}
}

func TestReplenish(t *testing.T) {
	c := newController(t, newQuota("a", "pods", "pods", "requests.cpu"), newQuota("a", "maps", "configmaps"),
		newQuota("a", "deploys", "count/deployments.apps"), newQuota("a", "quotas", "resourcequotas"), newQuota("b", "pods", "pods"))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p"}}
	cm := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "cm"}}
	for _, tc := range []struct {
		name   string
		do     func()
		want   []string
		kicked bool
	}{
		{"a pod of a", func() { c.replenishDeleted(schema.GroupResource{Resource: "pods"}, pod) }, []string{"a/pods"}, false},
		{"a config map of a, deleted unseen", func() {
			c.replenishDeleted(schema.GroupResource{Resource: "configmaps"}, cache.DeletedFinalStateUnknown{Key: "a/cm", Obj: cm})
		}, []string{"a/maps"}, false},
		{"a deployment of a", func() { c.replenish(schema.GroupResource{Group: "apps", Resource: "deployments"}, "a") }, []string{"a/deploys"}, false},
		{"a secret of a: no quota counts it", func() { c.replenish(schema.GroupResource{Resource: "secrets"}, "a") }, nil, false},
		{"a quota of a deleted", func() { c.deleted(newQuota("a", "gone", "pods")) }, []string{"a/quotas"}, true},
	} {
		tc.do()
		if keys, kicked := taken(c); !slices.Equal(keys, tc.want) || kicked != tc.kicked {
			t.Errorf("%s: queued %q, kicked %v; want %q, %v", tc.name, keys, kicked, tc.want, tc.kicked)
		}
	}
}

func TestWatchesWanted(t *testing.T) {
	c := newController(t, newQuota("a", "q1", "pods", "count/deployments.apps"), newQuota("b", "q2", "count/widgets.example.com", "count/secrets"),
		newQuota("b", "q3", "count/deployments.apps"))
	var got []string
	for gr := range c.dynamic.wanted() {
		got = append(got, gr.String())
	}
	sort.Strings(got)
	if want := []string{"deployments.apps", "widgets.example.com"}; !slices.Equal(got, want) {
		t.Errorf("wanted %q, want %q", got, want)
	}

	// A quota counting a resource without a watch asks for one; once it
	// runs, the quota asks nothing.
	q := newQuota("a", "q1", "count/deployments.apps")
	c.dynamic.follow(q)
	if _, kicked := taken(c); !kicked {
		t.Error("a quota whose counted resource has no watch did not ask for one")
	}
	_, stop := context.WithCancel(context.Background())
	c.dynamic.running[schema.GroupResource{Group: "apps", Resource: "deployments"}] = &watch{stop: stop}
	c.dynamic.follow(q)
	if _, kicked := taken(c); kicked {
		t.Error("a quota whose counted resource is watched asked for a watch")
	}
	c.dynamic.stopAll()
	if len(c.dynamic.running) != 0 {
		t.Errorf("after stopAll %d watches run", len(c.dynamic.running))
	}
}
