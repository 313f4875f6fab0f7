package jwt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-io/capstan/authn"
)

// Options are what an Authenticator is built with besides its Config.
type Options struct {
	// SigningAlgs are the algorithms tokens may be signed with: RS256 when
	// empty (--oidc-signing-algs); a file allows SigningAlgorithms.
	SigningAlgs []string
	// DisallowedIssuers are the service account issuers.
	DisallowedIssuers []string
	// UpdateTimeout bounds how long Update waits for new issuers' discovery
	// (a minute, as kube, when zero).
	UpdateTimeout time.Duration
	// RetireAfter is how long the issuers an Update replaced keep serving
	// the requests that already picked them (a minute when zero).
	RetireAfter time.Duration
	Logger      *slog.Logger
}

// Authenticator is the union of a Config's jwt issuers; Update replaces
// them all at once (a reload of the file).
type Authenticator struct {
	opts    Options
	ctx     context.Context // the server's lifetime
	current atomic.Pointer[issuerSet]
}

type issuerSet struct {
	issuers []*issuer
	cancel  context.CancelFunc
}

// New compiles c, which Validate accepted, and starts the discovery of its issuers,
// which runs until ctx ends.
func New(ctx context.Context, c *Config, opts Options) (*Authenticator, error) {
	a := &Authenticator{opts: opts, ctx: ctx}
	set, err := a.build(c)
	if err != nil {
		return nil, err
	}
	a.current.Store(set)
	return a, nil
}

// build compiles c's issuers and starts their discovery. As kube, each is
// checked again, now against the service account issuers, with paths
// relative to the issuer ("issuer.url").
func (a *Authenticator) build(c *Config) (_ *issuerSet, err error) {
	disallowed := sets.New(a.opts.DisallowedIssuers...)
	ctx, cancel := context.WithCancel(a.ctx)
	defer func() {
		if err != nil {
			cancel()
		}
	}()
	set := &issuerSet{cancel: cancel}
	for _, ja := range c.JWT {
		compiled, errs := compileAuthenticator(ja, nil, disallowed)
		if len(errs) > 0 {
			return nil, errs.ToAggregate()
		}
		iss, err := newIssuer(ctx, ja, compiled, a.opts.SigningAlgs, a.opts.Logger)
		if err != nil {
			return nil, err
		}
		set.issuers = append(set.issuers, iss)
	}
	return set, nil
}

// AuthenticateToken asks the issuers in order: the first that accepts the
// token or fails it answers (only the token's own issuer does either).
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*authn.Response, bool, error) {
	for _, iss := range a.current.Load().issuers {
		resp, ok, err := iss.AuthenticateToken(ctx, token)
		if ok || err != nil {
			return resp, ok, err
		}
	}
	return nil, false, nil
}

// Healthy is nil once every issuer's discovery document was fetched.
func (a *Authenticator) Healthy() error {
	var errs []error
	for _, iss := range a.current.Load().issuers {
		errs = append(errs, iss.healthy())
	}
	return utilerrors.NewAggregate(errs)
}

// Update replaces the issuers by those of c once all of them are healthy,
// as kube does; when c is invalid, or its issuers do not become healthy
// within UpdateTimeout, the current ones stay.
func (a *Authenticator) Update(c *Config) error {
	set, err := a.build(c)
	if err != nil {
		return err
	}
	timeout := a.opts.UpdateTimeout
	if timeout == 0 {
		timeout = time.Minute
	}
	if err := set.waitHealthy(a.ctx, timeout); err != nil {
		set.cancel()
		return err
	}
	old := a.current.Swap(set)
	retire := a.opts.RetireAfter
	if retire == 0 {
		retire = time.Minute
	}
	time.AfterFunc(retire, old.cancel)
	return nil
}

func (s *issuerSet) waitHealthy(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, iss := range s.issuers {
		select {
		case <-iss.ready:
		case <-ctx.Done():
			return errors.Join(iss.healthy(), ctx.Err())
		}
	}
	return nil
}

// FailedToLoad is kube's error for a file that cannot be read or decoded.
func FailedToLoad(path string, err error) error {
	return fmt.Errorf("failed to load authentication configuration from file %q: %w", path, err)
}
