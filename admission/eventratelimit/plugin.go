// Package eventratelimit is kube's EventRateLimit plugin: writes of core/v1
// Events are rate limited by token buckets, one for the server, or one per
// namespace, user, or event source and object (the last three in an LRU
// cache of buckets); a write over a limit gets 429 Too Many Requests.
package eventratelimit

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authn"
)

// defaultCacheSize is kube's number of buckets an LRU limit keeps.
const defaultCacheSize = 4096

// Plugin is the EventRateLimit plugin.
type Plugin struct {
	limits []*limiter
}

// New returns the plugin configured by data, an
// eventratelimit.admission.k8s.io/v1alpha1 Configuration; kube requires one
// with at least one limit.
func New(data []byte) (*Plugin, error) {
	c, err := readConfiguration(data)
	if err != nil {
		return nil, err
	}
	return newPlugin(c, clock.RealClock{})
}

func newPlugin(c *Configuration, clock flowcontrol.Clock) (*Plugin, error) {
	p := &Plugin{}
	for _, l := range c.Limits {
		lim, err := newLimiter(l, clock)
		if err != nil {
			return nil, err
		}
		p.limits = append(p.limits, lim)
	}
	return p, nil
}

var (
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles creates and updates.
func (*Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate takes a token from each limit's bucket for the event; a dry
// run takes none.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Kind.Group != "" || a.Kind.Kind != "Event" || a.DryRun {
		return nil
	}
	var errs []error
	for _, l := range p.limits {
		if err := l.accept(ctx, a); err != nil {
			errs = append(errs, err)
		}
	}
	if agg := utilerrors.NewAggregate(errs); agg != nil {
		return apierrors.NewTooManyRequestsError(agg.Error())
	}
	return nil
}

// limiter is one configured limit: its buckets and how a write picks one.
type limiter struct {
	typ     LimitType
	key     func(ctx context.Context, a *admission.Attributes) string
	newOne  func() flowcontrol.RateLimiter
	server  flowcontrol.RateLimiter // the one bucket of a Server limit
	mu      sync.Mutex              // guards buckets' reads and adds
	buckets *lru.Cache
}

func newLimiter(l Limit, clock flowcontrol.Clock) (*limiter, error) {
	lim := &limiter{typ: l.Type, newOne: func() flowcontrol.RateLimiter {
		return flowcontrol.NewTokenBucketRateLimiterWithClock(float32(l.QPS), int(l.Burst), clock)
	}}
	switch l.Type {
	case ServerLimitType:
		lim.server = lim.newOne()
		lim.key = func(context.Context, *admission.Attributes) string { return "" }
		return lim, nil
	case NamespaceLimitType:
		lim.key = func(_ context.Context, a *admission.Attributes) string { return a.Namespace }
	case UserLimitType:
		lim.key = userKey
	case SourceAndObjectLimitType:
		lim.key = sourceAndObjectKey
	default:
		return nil, fmt.Errorf("unknown event rate limit type: %v", l.Type)
	}
	size := int(l.CacheSize)
	if size == 0 {
		size = defaultCacheSize
	}
	lim.buckets = lru.New(size)
	return lim, nil
}

func (l *limiter) accept(ctx context.Context, a *admission.Attributes) error {
	key := l.key(ctx, a)
	if !l.bucket(key).TryAccept() {
		return fmt.Errorf("limit reached on type %v for key %v", l.typ, key)
	}
	return nil
}

// bucket is the key's bucket, made when the cache has none.
func (l *limiter) bucket(key string) flowcontrol.RateLimiter {
	if l.server != nil {
		return l.server
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets.Get(key); ok {
		return b.(flowcontrol.RateLimiter)
	}
	b := l.newOne()
	l.buckets.Add(key, b)
	return b
}

func userKey(ctx context.Context, _ *admission.Attributes) string {
	if u, ok := authn.UserFrom(ctx); ok {
		return u.Name
	}
	return ""
}

// sourceAndObjectKey is kube's: the event's source and involved object,
// joined with no separator.
func sourceAndObjectKey(_ context.Context, a *admission.Attributes) string {
	e, ok := a.Object.(*corev1.Event)
	if !ok {
		return ""
	}
	o := e.InvolvedObject
	return strings.Join([]string{e.Source.Component, e.Source.Host, o.Kind, o.Namespace, o.Name, string(o.UID), o.APIVersion}, "")
}
