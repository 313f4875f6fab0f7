package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// discoveryPoll is how often the crds workload reads aggregated discovery
// while it waits for the CRDs to be listed.
const discoveryPoll = 250 * time.Millisecond

// aggregatedDiscovery is the media type of the aggregated discovery
// document of /apis.
const aggregatedDiscovery = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// crds measures what CustomResourceDefinitions cost: N CRDs created by C
// workers, then waited for until every one is Established (seen by a
// watch) and listed by aggregated discovery. Memory is read before and,
// after Settle idle seconds, once they are served, both after a garbage
// collection where the server has a debug socket; then one custom
// resource is created in each of FirstCRs CRDs (the request that builds a
// CRD's endpoints), a second one in each, and memory is read again.
// Finally the CRDs are deleted in one request and waited for.
func (r *runner) crds(ctx context.Context, ns string, res *Result) error {
	cc := r.cfg.CRDs
	groups := cc.Groups
	if groups == 0 || groups > cc.N {
		groups = cc.N
	}
	res.Params = map[string]int{"crds": cc.N, "concurrency": cc.C, "groups": groups, "firstCRs": cc.FirstCRs,
		"settleSeconds": int(cc.Settle.Seconds())}
	m := map[string]float64{}
	res.Metrics = m
	specs := make([]crdSpec, cc.N)
	for i := range specs {
		specs[i] = crdSpecFor(r.runID, i, cc.Groups)
	}
	defer r.deleteCRDs(ctx, m, cc.Timeout)

	before, err := r.settledMemory(ctx, cc.Settle, "Before")
	if err != nil {
		return err
	}
	before.put(m, "Before")

	track := newEstablishTracker()
	stop, err := r.watchCRDs(ctx, track)
	if err != nil {
		return err
	}
	defer stop()

	w := r.sampler.Start()
	start := time.Now()
	err = r.createCRDs(ctx, specs, track, res, start)
	served := time.Since(start)
	res.Resources = w.Stop()
	if err != nil {
		return err
	}
	m["servedSeconds"] = served.Seconds()
	m["establishedSeconds"] = track.last().Sub(start).Seconds()
	m["crdsPerSecond"] = float64(cc.N) / served.Seconds()
	if p, err := ReadProc(r.serverPID); r.serverPID > 0 && err == nil {
		m["rssServedMiB"] = mib(p.RSSBytes)
	}

	idle := r.sampler.Start()
	after, err := r.settledMemory(ctx, cc.Settle, "Settled")
	if u := idle.Stop(); err == nil {
		if s, ok := u["server"]; ok {
			m["settleCPUSeconds"] = s.CPUSeconds
		}
	}
	if err != nil {
		return err
	}
	after.put(m, "Settled")
	after.perItem(m, before, cc.N, "PerCRDKiB")
	if cc.FirstCRs == 0 {
		return nil
	}
	return r.crdsBuilt(ctx, ns, specs, after, res)
}

// createCRDs creates the CRDs of specs and waits until they are served:
// Established (track) and in aggregated discovery, which is polled while
// they are created, so that "in discovery" times each CRD from its own
// create, not from the last one.
func (r *runner) createCRDs(ctx context.Context, specs []crdSpec, track *establishTracker, res *Result, start time.Time) error {
	cc := r.cfg.CRDs
	rec, discovered := NewRecorder(), NewRecorder()
	crds := r.client.Dynamic.Resource(crdGVR)
	pollCtx, stopPolling := context.WithCancel(ctx)
	defer stopPolling()
	servedErr := make(chan error, 1)
	go func() { servedErr <- r.waitServed(pollCtx, specs, track, discovered, start, cc.Timeout) }()
	parallel(ctx, cc.N, cc.C, func(i int) {
		track.started(specs[i].Name, time.Now())
		_ = rec.Time("create", func() error {
			_, err := crds.Create(ctx, crdObject(specs[i], r.runID), metav1.CreateOptions{})
			return err
		})
	})
	res.Metrics["createSeconds"] = time.Since(start).Seconds()
	if err := errorOf(ctx, rec); err != nil {
		stopPolling()
		<-servedErr
		res.Ops = rec.Ops(time.Since(start))
		return fmt.Errorf("creating %d CRDs: %w", cc.N, err)
	}
	err := <-servedErr
	served := time.Since(start)
	res.Ops = append(append(rec.Ops(served), track.op(served)), discovered.Ops(served)...)
	return err
}

// crdsBuilt creates the first custom resources of FirstCRs CRDs, which
// builds their endpoints, and reports the memory that costs over after.
func (r *runner) crdsBuilt(ctx context.Context, ns string, specs []crdSpec, after memory, res *Result) error {
	cc, m := r.cfg.CRDs, res.Metrics
	crs := NewRecorder()
	crStart := time.Now()
	err := r.firstCRs(ctx, ns, specs, crs, m)
	res.Ops = append(res.Ops, crs.Ops(time.Since(crStart))...)
	if err != nil {
		return err
	}
	built, err := r.settledMemory(ctx, cc.Settle, "Built")
	if err != nil {
		return err
	}
	built.put(m, "Built")
	// Only the heap: the RSS keeps shrinking for minutes after the
	// creates, far more than 50 CRDs' endpoints weigh.
	built.hasRSS = false
	built.perItem(m, after, cc.FirstCRs, "PerBuiltCRDKiB")
	return nil
}

// firstCRs creates a custom resource in each of FirstCRs CRDs spread over
// specs, one after the other: the first request to a CRD builds its
// endpoints. Then a second one in each, which finds them built.
func (r *runner) firstCRs(ctx context.Context, ns string, specs []crdSpec, rec *Recorder, m map[string]float64) error {
	k := r.cfg.CRDs.FirstCRs
	start := time.Now()
	for round, op := range []string{"first CR create", "second CR create"} {
		for j := range k {
			s := specs[j*len(specs)/k]
			cr := crObject(s, ns, fmt.Sprintf("cr-%d", round))
			err := rec.Time(op, func() error {
				_, err := r.client.Dynamic.Resource(s.GVR()).Namespace(ns).Create(ctx, cr, metav1.CreateOptions{})
				return err
			})
			if err != nil {
				return fmt.Errorf("%s of %s: %w", op, s.Name, err)
			}
		}
		if round == 0 {
			m["firstCRsSeconds"] = time.Since(start).Seconds()
		}
	}
	return nil
}

// waitServed polls aggregated discovery until it lists every CRD's
// resource and the tracker has seen every CRD Established, recording when
// discovery first listed each as "in discovery".
func (r *runner) waitServed(ctx context.Context, specs []crdSpec, track *establishTracker, rec *Recorder, start time.Time, timeout time.Duration) error {
	pending := map[string]crdSpec{}
	for _, s := range specs {
		pending[s.Name] = s
	}
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, discoveryPoll, timeout, true, func(ctx context.Context) (bool, error) {
		listed, err := r.discoveredResources(ctx)
		if err != nil {
			lastErr = err // a server busy with CRDs may time out; try again
			return false, nil
		}
		now := time.Now()
		for name, s := range pending {
			if listed[s.Group+"/"+crdVersion+"/"+s.Plural] {
				rec.Observe("in discovery", now.Sub(track.startOf(name)), nil)
				delete(pending, name)
			}
		}
		return len(pending) == 0 && track.count() == len(specs), nil
	})
	if err != nil {
		return fmt.Errorf("after %s, %d CRDs not in discovery and %d not Established (last discovery error: %v): %w",
			time.Since(start).Round(time.Second), len(pending), len(specs)-track.count(), lastErr, err)
	}
	return nil
}

// discoveredResources reads /apis as an aggregated discovery document and
// returns its "group/version/resource"s.
func (r *runner) discoveredResources(ctx context.Context) (map[string]bool, error) {
	body, err := r.client.Kube.Discovery().RESTClient().Get().AbsPath("/apis").
		SetHeader("Accept", aggregatedDiscovery).Timeout(time.Minute).Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var list apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("aggregated discovery: %w", err)
	}
	if list.Kind != "APIGroupDiscoveryList" {
		return nil, fmt.Errorf("/apis answered %q, not an aggregated discovery document", list.Kind)
	}
	out := map[string]bool{}
	for _, g := range list.Items {
		for _, v := range g.Versions {
			for _, res := range v.Resources {
				out[g.Name+"/"+v.Version+"/"+res.Resource] = true
			}
		}
	}
	return out, nil
}

// watchCRDs runs an informer over the run's CRDs that tells track when
// each becomes Established; stop ends it.
func (r *runner) watchCRDs(ctx context.Context, track *establishTracker) (stop func(), err error) {
	inf := dynamicinformer.NewFilteredDynamicInformer(r.client.Dynamic, crdGVR, "", 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = crdRunLabel + "=" + r.runID }).Informer()
	see := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok && established(u) {
			track.established(u.GetName(), time.Now())
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: see, UpdateFunc: func(_, obj any) { see(obj) },
	}); err != nil {
		return nil, err
	}
	ictx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ictx) }()
	stop = func() { cancel(); <-done }
	select {
	case <-inf.HasSyncedChecker().Done():
		return stop, nil
	case <-time.After(time.Minute):
		stop()
		return nil, errors.New("the CRD informer did not sync within a minute")
	}
}

// established reports whether a CRD's Established condition is True.
func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
			return true
		}
	}
	return false
}

// deleteCRDs deletes the run's CRDs in one request and waits until they
// are gone (their custom resources deleted by the server first), recording
// how long that took, or how many were left after timeout.
func (r *runner) deleteCRDs(ctx context.Context, m map[string]float64, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	crds := r.client.Dynamic.Resource(crdGVR)
	sel := metav1.ListOptions{LabelSelector: crdRunLabel + "=" + r.runID}
	start := time.Now()
	if err := crds.DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil && !apierrors.IsNotFound(err) {
		r.log.Warn("deleting the CRDs", "err", err)
		return
	}
	left := -1
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := crds.List(ctx, sel)
		if err != nil {
			return false, nil
		}
		left = len(l.Items)
		return left == 0, nil
	})
	if err != nil {
		r.log.Warn("the CRDs are not all gone", "left", left, "after", time.Since(start).Round(time.Second))
		if left >= 0 {
			m["crdsLeftAfterDelete"] = float64(left)
		}
		return
	}
	m["deleteSeconds"] = time.Since(start).Seconds()
}

// memory is the server's RSS and, where it has a debug socket, its Go heap
// after a garbage collection.
type memory struct {
	rss, heapInuse uint64
	hasRSS, hasGC  bool
}

// settledMemory reads what the server holds when idle: where it has a
// debug socket, it collects garbage first (so that what was garbage
// before is not counted, and the runtime can return it to the system
// meanwhile), then waits settle, reads the server's RSS, and collects
// garbage again to read the live heap.
func (r *runner) settledMemory(ctx context.Context, settle time.Duration, when string) (memory, error) {
	var out memory
	if r.debugSocket != "" {
		if _, err := ReadHeapAfterGC(ctx, r.debugSocket); err != nil {
			return out, err
		}
	}
	if err := sleep(ctx, settle); err != nil {
		return out, err
	}
	if r.serverPID > 0 {
		p, err := ReadProc(r.serverPID)
		if err != nil {
			return out, err
		}
		out.rss, out.hasRSS = p.RSSBytes, true
	}
	if r.debugSocket != "" {
		h, err := ReadHeapAfterGC(ctx, r.debugSocket)
		if err != nil {
			return out, err
		}
		out.heapInuse, out.hasGC = h.HeapInuse, true
		if dir := r.cfg.CRDs.ProfileDir; dir != "" {
			file := filepath.Join(dir, "heap-"+strings.ToLower(when)+".pb.gz")
			if err := SaveHeapProfile(ctx, r.debugSocket, file); err != nil {
				r.log.Warn("saving a heap profile", "err", err)
			}
		}
	}
	return out, nil
}

// put records the readings as rss<when>MiB and heap<when>MiB.
func (mem memory) put(m map[string]float64, when string) {
	if mem.hasRSS {
		m["rss"+when+"MiB"] = mib(mem.rss)
	}
	if mem.hasGC {
		m["heap"+when+"MiB"] = mib(mem.heapInuse)
	}
}

// perItem records the growth from base to mem per item, in KiB, as
// rss<suffix> and heap<suffix>.
func (mem memory) perItem(m map[string]float64, base memory, n int, suffix string) {
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / 1024 / float64(n) }
	if mem.hasRSS && base.hasRSS {
		m["rss"+suffix] = per(mem.rss, base.rss)
	}
	if mem.hasGC && base.hasGC {
		m["heap"+suffix] = per(mem.heapInuse, base.heapInuse)
	}
}

// establishTracker records when each CRD's create was sent and when a
// watch first saw it Established.
type establishTracker struct {
	mu        sync.Mutex
	start     map[string]time.Time
	est       map[string]time.Time
	latest    time.Time
	latencies []time.Duration
}

func newEstablishTracker() *establishTracker {
	return &establishTracker{start: map[string]time.Time{}, est: map[string]time.Time{}}
}

func (t *establishTracker) started(name string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start[name] = at
}

func (t *establishTracker) startOf(name string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.start[name]
}

func (t *establishTracker) established(name string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, seen := t.est[name]; seen {
		return
	}
	s, ok := t.start[name]
	if !ok {
		return // not created by this run's workers
	}
	t.est[name] = at
	t.latencies = append(t.latencies, at.Sub(s))
	if at.After(t.latest) {
		t.latest = at
	}
}

func (t *establishTracker) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.est)
}

func (t *establishTracker) last() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.latest
}

// op is the create-to-Established latency of every CRD.
func (t *establishTracker) op(wall time.Duration) Op {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Op{Name: "established", Summary: Summarize(append([]time.Duration(nil), t.latencies...), 0, wall)}
}
