package controlplane

import (
	"context"
	"slices"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// recorder collects the resources an OnWritable function is told of.
type recorder struct {
	mu  sync.Mutex
	got []schema.GroupResource
}

func (r *recorder) f(gr schema.GroupResource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, gr)
}

func (r *recorder) seen() []schema.GroupResource {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func TestBuiltinResourcesTellEachResourceOnce(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	jobs := schema.GroupResource{Group: "batch", Resource: "jobs"}
	hpa := schema.GroupResource{Group: "autoscaling", Resource: "horizontalpodautoscalers"}
	var b builtinResources
	podWrite := b.add(pods, nil, "/pods")
	jobWrite := b.add(jobs, nil, "/jobs")
	hpaV1, hpaV2 := b.add(hpa, nil, "/horizontalpodautoscalers"), b.add(hpa, nil, "/horizontalpodautoscalers")

	// Written before anyone listens: told at registration.
	podWrite()
	early := &recorder{}
	b.OnWritable(early.f)
	if got := early.seen(); !slices.Equal(got, []schema.GroupResource{pods}) {
		t.Fatalf("told at registration of %v, want pods only", got)
	}
	// Written after: told once, whichever version's store wrote.
	late := &recorder{}
	b.OnWritable(late.f)
	jobWrite()
	jobWrite()
	hpaV2()
	hpaV1()
	podWrite()
	if got := early.seen(); !slices.Equal(got, []schema.GroupResource{pods, jobs, hpa}) {
		t.Errorf("first listener told of %v, want pods, jobs, hpa once each", got)
	}
	if got := late.seen(); !slices.Equal(got, []schema.GroupResource{pods, jobs, hpa}) {
		t.Errorf("second listener told of %v, want pods, jobs, hpa once each", got)
	}

	if !b.Lazy(jobs) || b.Lazy(schema.GroupResource{Group: "example.com", Resource: "widgets"}) {
		t.Errorf("Lazy: jobs %v (want true), widgets %v (want false)", b.Lazy(jobs), b.Lazy(schema.GroupResource{Group: "example.com", Resource: "widgets"}))
	}
}

// otherLazy is a LazyResources of one resource, as the CRD server's.
type otherLazy struct {
	gr  schema.GroupResource
	has bool
	fs  []func(schema.GroupResource)
}

func (o *otherLazy) Lazy(gr schema.GroupResource) bool { return gr == o.gr }
func (o *otherLazy) HasObjects(context.Context, schema.GroupResource) (bool, error) {
	return o.has, nil
}
func (o *otherLazy) OnWritable(f func(schema.GroupResource)) { o.fs = append(o.fs, f) }

func TestLazyUnion(t *testing.T) {
	widgets := schema.GroupResource{Group: "example.com", Resource: "widgets"}
	gadgets := schema.GroupResource{Group: "example.com", Resource: "gadgets"}
	a, b := &otherLazy{gr: widgets, has: true}, &otherLazy{gr: gadgets}
	u := lazyUnion{a, b}
	for _, tc := range []struct {
		gr        schema.GroupResource
		lazy, has bool
	}{
		{widgets, true, true},
		{gadgets, true, false},
		// Not lazy: watched, so it is taken to have objects.
		{schema.GroupResource{Resource: "pods"}, false, true},
	} {
		has, err := u.HasObjects(context.Background(), tc.gr)
		if u.Lazy(tc.gr) != tc.lazy || has != tc.has || err != nil {
			t.Errorf("%v: Lazy %v HasObjects %v, %v; want %v, %v", tc.gr, u.Lazy(tc.gr), has, err, tc.lazy, tc.has)
		}
	}
	u.OnWritable(func(schema.GroupResource) {})
	if len(a.fs) != 1 || len(b.fs) != 1 {
		t.Errorf("OnWritable reached %d and %d members, want 1 and 1", len(a.fs), len(b.fs))
	}
}
