package etcd3

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	defaultLeaseReuse = time.Minute
	// leaseMaxObjects bounds how many keys share one lease, so that its
	// expiry does not delete an unbounded number of keys at once.
	leaseMaxObjects = 1000
	// leaseReuseFraction of the TTL is the most an object may outlive its
	// TTL by sharing a lease (5%, kube's choice).
	leaseReuseFraction = 0.05
)

// leaseManager hands out etcd leases for objects with a TTL (events).
// Granting a lease per write would cost a round trip and a lease in etcd
// per object; instead a lease is shared by the writes of a short window,
// at the price of objects living up to min(LeaseReuse, 5% of TTL) longer.
type leaseManager struct {
	client *clientv3.Client
	reuse  time.Duration

	mu       sync.Mutex // guards the fields below
	id       clientv3.LeaseID
	expires  time.Time
	attached int64
}

func newLeaseManager(client *clientv3.Client, reuse time.Duration) *leaseManager {
	if reuse <= 0 {
		reuse = defaultLeaseReuse
	}
	return &leaseManager{client: client, reuse: reuse}
}

// lease returns a lease that expires between ttl seconds from now and ttl
// plus the reuse window.
func (m *leaseManager) lease(ctx context.Context, ttl int64) (clientv3.LeaseID, error) {
	now := time.Now()
	window := min(m.reuse, time.Duration(leaseReuseFraction*float64(ttl))*time.Second).Truncate(time.Second)
	earliest := now.Add(time.Duration(ttl) * time.Second)

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.id != 0 && m.attached < leaseMaxObjects &&
		m.expires.After(earliest) && m.expires.Before(earliest.Add(window)) {
		m.attached++
		return m.id, nil
	}
	grantTTL := ttl + int64(window/time.Second)
	resp, err := m.client.Grant(ctx, grantTTL)
	if err != nil {
		return 0, etcdError("lease grant", "", err)
	}
	m.id, m.expires, m.attached = resp.ID, now.Add(time.Duration(grantTTL)*time.Second), 1
	return m.id, nil
}

// putOptions returns the options of a put of an object with ttl seconds
// to live (0: forever).
func (m *leaseManager) putOptions(ctx context.Context, ttl uint64) ([]clientv3.OpOption, error) {
	if ttl == 0 {
		return nil, nil
	}
	id, err := m.lease(ctx, int64(ttl))
	if err != nil {
		return nil, err
	}
	return []clientv3.OpOption{clientv3.WithLease(id)}, nil
}
