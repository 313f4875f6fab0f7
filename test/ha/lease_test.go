package ha

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/capstan-io/capstan/controlplane"
)

// leaseHistory follows every version of the elected loops' Lease (a
// watch through the load balancer that resumes where it left off) and
// checks each change of holder: a replica takes the lease only once its
// holder gave it up (client-go's release: no holder) or it expired (last
// renewal plus its duration), so one replica holds it at a time; and the
// time without a holder, from that release or expiry to the next
// acquisition, stays under maxGap.
type leaseHistory struct {
	maxGap time.Duration

	mu        sync.Mutex // guards the fields below
	versions  int
	holders   []string // each holder, once per tenure
	last      *coordinationv1.LeaseSpec
	vacantAt  time.Time // when the last holder released it, if it did
	longest   time.Duration
	overlaps  []string
	longGaps  []string
	watchErrs int
}

// watchLease starts following the Lease, which must exist.
func watchLease(ctx context.Context, c kubernetes.Interface, maxGap time.Duration) (*leaseHistory, func(), error) {
	leases := c.CoordinationV1().Leases("kube-system")
	lease, err := leases.Get(ctx, controlplane.ControllersLease, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	h := &leaseHistory{maxGap: maxGap}
	h.observe(lease)
	selector := fields.OneTermEqualSelector("metadata.name", controlplane.ControllersLease).String()
	ctx, cancel := context.WithCancel(ctx)
	w, err := watchtools.NewRetryWatcherWithContext(ctx, lease.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return leases.Watch(ctx, o)
		},
	})
	if err != nil {
		cancel()
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			switch l, ok := ev.Object.(*coordinationv1.Lease); {
			case ok:
				h.observe(l)
			case ev.Type == watch.Error:
				h.mu.Lock()
				h.watchErrs++
				h.mu.Unlock()
			}
		}
	}()
	var once sync.Once
	return h, func() { once.Do(func() { cancel(); w.Stop(); <-done }) }, nil
}

// observe checks one version of the Lease against the one before.
func (h *leaseHistory) observe(l *coordinationv1.Lease) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.versions++
	spec := l.Spec.DeepCopy()
	prev := h.last
	h.last = spec
	holder, before := holderOf(spec), ""
	if prev != nil {
		before = holderOf(prev)
	}
	switch {
	case holder == before:
		return
	case holder == "":
		// Given up: vacant from its renewal (client-go's release writes
		// the time it gave up as both times).
		h.vacantAt = timeOf(spec.RenewTime)
		return
	}
	h.holders = append(h.holders, holder)
	acquired := timeOf(spec.AcquireTime)
	vacant := h.vacantAt
	if before != "" {
		// Taken from a holder that did not give it up: only once its
		// lease had expired.
		vacant = timeOf(prev.RenewTime).Add(time.Duration(ptrValue(prev.LeaseDurationSeconds)) * time.Second)
		if acquired.Before(vacant) {
			h.overlaps = append(h.overlaps, fmt.Sprintf("%s acquired at %s, while %s held it until %s",
				holder, acquired.Format(time.StampMicro), before, vacant.Format(time.StampMicro)))
		}
	}
	if !vacant.IsZero() {
		gap := acquired.Sub(vacant)
		h.longest = max(h.longest, gap)
		if gap > h.maxGap {
			h.longGaps = append(h.longGaps, fmt.Sprintf("no holder for %v before %s", gap, holder))
		}
	}
	h.vacantAt = time.Time{}
}

// report is the history's summary and every violation seen.
func (h *leaseHistory) report() (summary string, violations []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	summary = fmt.Sprintf("%d versions of the Lease, %d tenures (%v), longest time without a holder %v, %d watch errors",
		h.versions, len(h.holders), h.holders, h.longest, h.watchErrs)
	return summary, append(append([]string(nil), h.overlaps...), h.longGaps...)
}

func holderOf(s *coordinationv1.LeaseSpec) string { return ptrValue(s.HolderIdentity) }

func timeOf(t *metav1.MicroTime) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// TestLeaseHistory: the checks of watchLease on made-up versions of the
// Lease, so that an overlap or a long vacancy is known to fail TestHA.
func TestLeaseHistory(t *testing.T) {
	at := func(s float64) *metav1.MicroTime {
		m := metav1.NewMicroTime(time.Unix(1000, 0).Add(time.Duration(s * float64(time.Second))))
		return &m
	}
	version := func(holder string, acquired, renewed float64, seconds int32) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder,
			AcquireTime: at(acquired), RenewTime: at(renewed), LeaseDurationSeconds: &seconds}}
	}
	for _, tc := range []struct {
		name     string
		versions []*coordinationv1.Lease
		want     int // violations
	}{
		{"renewals, then a takeover after expiry", []*coordinationv1.Lease{
			version("a", 0, 0, 4), version("a", 0, 1, 4), version("b", 5.5, 5.5, 4)}, 0},
		{"a takeover before expiry", []*coordinationv1.Lease{
			version("a", 0, 1, 4), version("b", 3, 3, 4)}, 1},
		{"a release, then a takeover", []*coordinationv1.Lease{
			version("a", 0, 1, 4), version("", 2, 2, 1), version("b", 2.5, 2.5, 4)}, 0},
		{"vacant longer than the lease duration after an expiry", []*coordinationv1.Lease{
			version("a", 0, 1, 4), version("b", 10, 10, 4)}, 1},
		{"vacant longer than the lease duration after a release", []*coordinationv1.Lease{
			version("a", 0, 1, 4), version("", 2, 2, 1), version("b", 7, 7, 4)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &leaseHistory{maxGap: 4 * time.Second}
			for _, v := range tc.versions {
				h.observe(v)
			}
			if _, violations := h.report(); len(violations) != tc.want {
				t.Errorf("violations %q, want %d", violations, tc.want)
			}
		})
	}
}
