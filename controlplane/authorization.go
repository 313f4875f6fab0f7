package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-io/capstan/apis/authorization"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/authz/abac"
	"github.com/capstan-io/capstan/authz/authzconfig"
	authznode "github.com/capstan-io/capstan/authz/node"
	authzrbac "github.com/capstan-io/capstan/authz/rbac"
	"github.com/capstan-io/capstan/authz/rbac/bootstrap"
	"github.com/capstan-io/capstan/authz/webhook"
	"github.com/capstan-io/capstan/endpoints"
)

// priorityAuthorization orders authorization.k8s.io in /apis, as kube.
const priorityAuthorization = 17600

// AuthorizationConfig are the authorization flags.
type AuthorizationConfig struct {
	// Modes is --authorization-mode, with the --authorization-webhook-*
	// flags; ignored with ConfigFile.
	Modes                                        []string
	WebhookConfigFile, WebhookVersion            string
	WebhookAuthorizedTTL, WebhookUnauthorizedTTL time.Duration
	// PolicyFile is --authorization-policy-file, ABAC's policies.
	PolicyFile string
	// ConfigFile is --authorization-config: an AuthorizationConfiguration,
	// reloaded when it changes.
	ConfigFile string
	Logger     *slog.Logger
}

// Authorization is the authorization of the server chain: the authorizer
// to be set in the generic config and, for RBAC and Node, the sources their
// authorizers read, which the kube server feeds (from its registry at
// first, then from informers).
type Authorization struct {
	Authorizer authz.Authorizer
	rbac       *authzrbac.Deferred   // nil without RBAC
	node       *authznode.Authorizer // nil without Node
	reload     *reloader             // nil without ConfigFile
}

// NewAuthorization builds the authorizer chain of cfg.
func NewAuthorization(cfg AuthorizationConfig) (*Authorization, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	var (
		conf *apiserverv1.AuthorizationConfiguration
		data []byte
		err  error
	)
	if cfg.ConfigFile != "" {
		if conf, data, err = authzconfig.LoadFile(cfg.ConfigFile); err != nil {
			return nil, err
		}
	} else {
		if err := authz.ValidateModes(cfg.Modes); err != nil {
			return nil, err
		}
		conf = authzconfig.FromLegacy(authzconfig.Legacy{
			Modes: cfg.Modes, WebhookConfigFile: cfg.WebhookConfigFile, WebhookVersion: cfg.WebhookVersion,
			WebhookAuthorizedTTL: cfg.WebhookAuthorizedTTL, WebhookUnauthTTL: cfg.WebhookUnauthorizedTTL,
		})
	}
	a := &Authorization{}
	// A reloaded file may add RBAC or Node: their informers run whenever
	// the file is used.
	if cfg.ConfigFile != "" || hasType(conf, authz.ModeRBAC) {
		a.rbac = &authzrbac.Deferred{}
	}
	if cfg.ConfigFile != "" || hasType(conf, authz.ModeNode) {
		a.node = authznode.New(bootstrap.NodeRules())
	}
	b := chainBuilder{a: a, policyFile: cfg.PolicyFile, logger: cfg.Logger}
	chain, err := b.build(conf)
	if err != nil {
		return nil, err
	}
	if cfg.ConfigFile == "" {
		a.Authorizer = chain
		return a, nil
	}
	a.reload = &reloader{path: cfg.ConfigFile, data: data, build: b.build, logger: cfg.Logger}
	a.reload.current.Store(&chain)
	a.Authorizer = a.reload
	return a, nil
}

func hasType(c *apiserverv1.AuthorizationConfiguration, t string) bool {
	return slices.ContainsFunc(c.Authorizers, func(a apiserverv1.AuthorizerConfiguration) bool { return a.Type == t })
}

// chainBuilder turns a configuration into an authorizer chain.
type chainBuilder struct {
	a          *Authorization
	policyFile string
	logger     *slog.Logger
}

func (b chainBuilder) build(c *apiserverv1.AuthorizationConfiguration) (authz.Authorizer, error) {
	var chain []authz.Named
	for _, ac := range c.Authorizers {
		var (
			one authz.Authorizer
			err error
		)
		switch ac.Type {
		case authz.ModeAlwaysAllow, authz.ModeAlwaysDeny:
			one = authz.Constant(ac.Type)
		case authz.ModeRBAC:
			one = authzrbac.New(b.a.rbac)
		case authz.ModeNode:
			one = b.a.node
		case authz.ModeABAC:
			one, err = abac.NewFromFile(b.policyFile)
		case authz.ModeWebhook:
			one, err = b.webhook(ac.Name, ac.Webhook)
		default:
			err = fmt.Errorf("unknown authorization mode %s specified", ac.Type)
		}
		if err != nil {
			return nil, err
		}
		chain = append(chain, authz.Named{Name: ac.Name, Authorizer: one})
	}
	return authz.Chain(chain...), nil
}

func (b chainBuilder) webhook(name string, w *apiserverv1.WebhookConfiguration) (authz.Authorizer, error) {
	var (
		client *rest.Config
		err    error
	)
	switch w.ConnectionInfo.Type {
	case apiserverv1.AuthorizationWebhookConnectionInfoTypeInCluster:
		client, err = rest.InClusterConfig()
	default:
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: *w.ConnectionInfo.KubeConfigFile}
		client, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("authorizer %q: %w", name, err)
	}
	authorizedTTL, unauthorizedTTL := w.AuthorizedTTL.Duration, w.UnauthorizedTTL.Duration
	if w.CacheAuthorizedRequests != nil && !*w.CacheAuthorizedRequests {
		authorizedTTL = 0
	}
	if w.CacheUnauthorizedRequests != nil && !*w.CacheUnauthorizedRequests {
		unauthorizedTTL = 0
	}
	onError := authz.NoOpinion
	if w.FailurePolicy == apiserverv1.FailurePolicyDeny {
		onError = authz.Deny
	}
	var conditions []string
	for _, m := range w.MatchConditions {
		conditions = append(conditions, m.Expression)
	}
	return webhook.New(webhook.Config{
		Name: name, Client: client, Version: w.SubjectAccessReviewVersion, Timeout: w.Timeout.Duration,
		AuthorizedTTL: authorizedTTL, UnauthorizedTTL: unauthorizedTTL, DecisionOnError: onError,
		MatchConditions: conditions, Backoff: webhook.DefaultRetryBackoff(), Logger: b.logger,
	})
}

// reloader is the chain of an --authorization-config file, rebuilt when the
// file changes; a change that does not load or build keeps the chain in
// use and is logged, as kube does.
type reloader struct {
	path    string
	data    []byte
	build   func(*apiserverv1.AuthorizationConfiguration) (authz.Authorizer, error)
	logger  *slog.Logger
	current atomic.Pointer[authz.Authorizer]
}

// reloadInterval is how often kube looks at the file.
const reloadInterval = time.Minute

func (r *reloader) Authorize(ctx context.Context, a authz.Attributes) (authz.Decision, string, error) {
	return (*r.current.Load()).Authorize(ctx, a)
}

func (r *reloader) RulesFor(ctx context.Context, u *authn.User, namespace string) (authz.Rules, error) {
	if rr, ok := (*r.current.Load()).(authz.RuleResolver); ok {
		return rr.RulesFor(ctx, u, namespace)
	}
	return authz.Rules{}, nil
}

// run checks the file every reloadInterval until ctx ends.
func (r *reloader) run(ctx context.Context) {
	t := time.NewTicker(reloadInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := r.check(); err != nil {
				r.logger.Error("error reloading authorization config", "path", r.path, "err", err)
			}
		}
	}
}

// check rebuilds the chain if the file's content changed.
func (r *reloader) check() error {
	conf, data, err := authzconfig.LoadFile(r.path)
	if err != nil {
		return err
	}
	if string(data) == string(r.data) {
		return nil
	}
	chain, err := r.build(conf)
	if err != nil {
		return err
	}
	r.current.Store(&chain)
	r.data = data
	r.logger.Info("reloaded authorization config", "path", r.path)
	return nil
}

// rbacSource is the source the RBAC authorizer reads, or nil.
func (a *Authorization) rbacSource() *authzrbac.Deferred {
	if a == nil {
		return nil
	}
	return a.rbac
}

// authorizationGroup is authorization.k8s.io/v1: reviews answered by a,
// not stored.
func authorizationGroup(a authz.Authorizer) builtGroup {
	resources := []endpoints.Resource{
		{Name: "subjectaccessreviews", Kind: "SubjectAccessReview", Storage: authorization.SubjectAccessReviewREST{Authorizer: a}},
		{Name: "selfsubjectaccessreviews", Kind: "SelfSubjectAccessReview", Storage: authorization.SelfSubjectAccessReviewREST{Authorizer: a}},
		{Name: "localsubjectaccessreviews", Kind: "LocalSubjectAccessReview", Storage: authorization.LocalSubjectAccessReviewREST{Authorizer: a}},
		{Name: "selfsubjectrulesreviews", Kind: "SelfSubjectRulesReview", Storage: authorization.SelfSubjectRulesReviewREST{Authorizer: a}},
	}
	return builtGroup{group: endpoints.APIGroup{
		Name: authorizationv1.GroupName, Priority: priorityAuthorization,
		Versions: []endpoints.GroupVersion{{Version: "v1", Resources: resources}},
	}}
}
