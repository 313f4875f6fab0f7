// Package webhook is kube's Webhook authorizer: it asks a remote service
// with a SubjectAccessReview (authorization.k8s.io v1 or v1beta1), caches
// the answers for a while, retries transient failures with backoff, and on
// failure answers with its failure policy (NoOpinion or Deny).
package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/cache"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/authz"
)

// DefaultRetryBackoff is kube's backoff of webhook calls: 500ms growing by
// half each time, five attempts.
func DefaultRetryBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// Config configures one webhook authorizer.
type Config struct {
	// Name names the authorizer in reasons and logs.
	Name string
	// Client reaches the webhook: its Host is the URL reviews are posted to.
	Client *rest.Config
	// Version is the SubjectAccessReview version: "v1" or "v1beta1".
	Version string
	// Timeout bounds one call (0: the client's).
	Timeout time.Duration
	// AuthorizedTTL and UnauthorizedTTL are how long answers are cached
	// (0: not cached).
	AuthorizedTTL, UnauthorizedTTL time.Duration
	// DecisionOnError is the answer when the webhook cannot be asked or a
	// match condition fails: NoOpinion or Deny.
	DecisionOnError authz.Decision
	// MatchConditions are CEL expressions on `request` (the review's spec);
	// the webhook is asked only when all are true.
	MatchConditions []string
	Backoff         wait.Backoff
	Logger          *slog.Logger
}

// Authorizer is one webhook.
type Authorizer struct {
	cfg     Config
	client  *rest.RESTClient
	gv      schema.GroupVersion
	cache   *cache.LRUExpireCache
	matcher *Matcher
}

var _ authz.Authorizer = (*Authorizer)(nil)

// New checks cfg and builds the authorizer.
func New(cfg Config) (*Authorizer, error) {
	gv := authorizationv1.SchemeGroupVersion
	switch cfg.Version {
	case "v1":
	case "v1beta1":
		gv = authorizationv1beta1.SchemeGroupVersion
	default:
		return nil, fmt.Errorf("unsupported webhook authorizer version %q, supported versions are %q, %q", cfg.Version, "v1", "v1beta1")
	}
	matcher, err := CompileMatchConditions(cfg.MatchConditions)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := authorizationv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := authorizationv1beta1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	codec := serializer.NewCodecFactory(scheme).LegacyCodec(gv)
	rc := rest.CopyConfig(cfg.Client)
	if cfg.Timeout != 0 {
		rc.Timeout = cfg.Timeout
	}
	rc.ContentConfig.NegotiatedSerializer = serializer.NegotiatedSerializerWrapper(runtime.SerializerInfo{Serializer: codec})
	client, err := rest.UnversionedRESTClientFor(rc)
	if err != nil {
		return nil, err
	}
	if cfg.Backoff.Steps <= 0 {
		cfg.Backoff = DefaultRetryBackoff()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Authorizer{cfg: cfg, client: client, gv: gv, cache: cache.NewLRUExpireCache(8192), matcher: matcher}, nil
}

// maxCachedAttrs bounds the size of the attributes a request controls for
// its answer to be cached, as kube does: bigger ones are asked every time.
const maxCachedAttrs = 10000

// Authorize asks the webhook, or its cache, about a request.
func (w *Authorizer) Authorize(ctx context.Context, a authz.Attributes) (authz.Decision, string, error) {
	spec := SpecOf(a)
	if ok, err := w.matcher.Matches(ctx, spec); err != nil {
		return w.cfg.DecisionOnError, "", err
	} else if !ok {
		return authz.NoOpinion, "", nil
	}
	key, err := json.Marshal(spec)
	if err != nil {
		return w.cfg.DecisionOnError, "", err
	}
	var status authorizationv1.SubjectAccessReviewStatus
	if entry, ok := w.cache.Get(string(key)); ok {
		status = entry.(authorizationv1.SubjectAccessReviewStatus)
	} else {
		status, err = w.askWithRetries(ctx, spec)
		if err != nil {
			w.cfg.Logger.Error("Failed to make webhook authorizer request", "authorizer", w.cfg.Name, "err", err)
			return w.cfg.DecisionOnError, "", err
		}
		if len(key) < maxCachedAttrs {
			ttl := w.cfg.UnauthorizedTTL
			if status.Allowed {
				ttl = w.cfg.AuthorizedTTL
			}
			if ttl > 0 {
				w.cache.Add(string(key), status, ttl)
			}
		}
	}
	switch {
	case status.Denied && status.Allowed:
		return authz.Deny, status.Reason, fmt.Errorf("webhook subject access review returned both allow and deny response")
	case status.Denied:
		return authz.Deny, status.Reason, nil
	case status.Allowed:
		return authz.Allow, status.Reason, nil
	}
	return authz.NoOpinion, status.Reason, nil
}

// askWithRetries posts the review, retrying what ShouldRetry says: lost
// connections, 500s, timeouts, 429s and answers asking to come back later.
func (w *Authorizer) askWithRetries(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
	var (
		status  authorizationv1.SubjectAccessReviewStatus
		lastErr error
	)
	err := wait.ExponentialBackoffWithContext(ctx, w.cfg.Backoff, func(ctx context.Context) (bool, error) {
		status, lastErr = w.ask(ctx, spec)
		switch {
		case lastErr == nil:
			return true, nil
		case ShouldRetry(lastErr):
			return false, nil
		}
		return false, lastErr
	})
	switch {
	case lastErr != nil:
		return status, lastErr
	case err != nil:
		return status, fmt.Errorf("webhook call failed: %s", err.Error())
	}
	return status, nil
}

// ShouldRetry reports whether a webhook call that failed with err is
// worth retrying, as kube's webhooks judge it.
func ShouldRetry(err error) bool {
	if utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) || apierrors.IsInternalError(err) ||
		apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) {
		return true
	}
	_, later := apierrors.SuggestsClientDelay(err)
	return later
}

// ask posts one review in the configured version.
func (w *Authorizer) ask(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
	if w.gv.Version == "v1" {
		in := &authorizationv1.SubjectAccessReview{Spec: spec}
		out := &authorizationv1.SubjectAccessReview{}
		err := w.client.Post().Body(in).Do(ctx).Into(out)
		return out.Status, err
	}
	in := &authorizationv1beta1.SubjectAccessReview{Spec: toV1beta1(spec)}
	out := &authorizationv1beta1.SubjectAccessReview{}
	err := w.client.Post().Body(in).Do(ctx).Into(out)
	return authorizationv1.SubjectAccessReviewStatus{
		Allowed: out.Status.Allowed, Denied: out.Status.Denied, Reason: out.Status.Reason, EvaluationError: out.Status.EvaluationError,
	}, err
}
