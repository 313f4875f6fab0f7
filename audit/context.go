// Package audit records what the server does for each request as
// audit.k8s.io/v1 Events: a Policy picks the level of a request, a
// per-request Context in the request's context collects the event as the
// request goes down the handler chain, and a Sink receives it at each
// stage. Requests carry no Context when auditing is off, and handlers ask
// Level before doing any work for it.
package audit

import (
	"context"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/request"
)

// HeaderAuditID is the header that carries a request's audit ID, in the
// request (chosen by the client) and in every response.
const HeaderAuditID = "Audit-ID"

// Config is auditing for a server: off unless both are set.
type Config struct {
	Policy *Policy
	Sink   Sink
}

// Enabled reports whether requests are audited at all.
func (c Config) Enabled() bool { return c.Policy != nil && c.Sink != nil }

// Context is the audit event of one request while it is served.
type Context struct {
	auditing Config

	mu          sync.Mutex // guards the fields below
	event       auditv1.Event
	config      RequestConfig
	initialized bool
}

type contextKey struct{}

// NewContext returns ctx carrying a new audit Context for a request with
// auditID received at received, to be audited as auditing says.
func NewContext(ctx context.Context, auditing Config, auditID string, received time.Time) (context.Context, *Context) {
	ac := &Context{auditing: auditing, event: auditv1.Event{
		AuditID:                  types.UID(auditID),
		RequestReceivedTimestamp: metav1.NewMicroTime(received),
	}}
	return context.WithValue(ctx, contextKey{}, ac), ac
}

// From returns the request's audit Context, nil when auditing is off.
func From(ctx context.Context) *Context {
	ac, _ := ctx.Value(contextKey{}).(*Context)
	return ac
}

// Evaluate sets the level the policy gives the request of user (nil if
// authentication failed) with info. Until then the Context records
// nothing.
func (ac *Context) Evaluate(user *authn.User, info *request.Info) {
	cfg := ac.auditing.Policy.Evaluate(user, info)
	ac.mu.Lock()
	defer ac.mu.Unlock()
	ac.config, ac.initialized = cfg, true
	ac.event.Level = cfg.Level
	metrics.AuditLevel(string(cfg.Level))
}

// Level is the request's audit level: None without a Context or before
// the policy was evaluated.
func (ac *Context) Level() auditv1.Level {
	if ac == nil {
		return auditv1.LevelNone
	}
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if !ac.initialized {
		return auditv1.LevelNone
	}
	return ac.config.Level
}

// AuditID is the request's audit ID.
func (ac *Context) AuditID() string {
	return string(ac.event.AuditID) // set once, before the Context is shared
}

// Audited reports whether the request is recorded at some level.
func (ac *Context) Audited() bool { return ac.Level() != auditv1.LevelNone }

// ProcessStage stamps the event with stage and hands it to the sink,
// unless the policy omits the stage. It reports false when the sink
// failed to take the event.
func (ac *Context) ProcessStage(stage auditv1.Stage) bool {
	if ac == nil {
		return true
	}
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if !ac.initialized || ac.config.Level == auditv1.LevelNone {
		return true
	}
	for _, omit := range ac.config.OmitStages {
		if omit == stage {
			return true
		}
	}
	ac.event.Stage = stage
	if stage == auditv1.StageRequestReceived {
		ac.event.StageTimestamp = ac.event.RequestReceivedTimestamp
	} else {
		ac.event.StageTimestamp = metav1.NewMicroTime(time.Now())
	}
	metrics.AuditEvent()
	return ac.auditing.Sink.ProcessEvents(&ac.event)
}

// visit runs f on the event of an audited request.
func (ac *Context) visit(f func(ev *auditv1.Event)) {
	if ac == nil {
		return
	}
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if !ac.initialized || ac.config.Level == auditv1.LevelNone {
		return
	}
	f(&ac.event)
}

// SetResponseStatus records the status the request ends with.
func (ac *Context) SetResponseStatus(status *metav1.Status) {
	ac.visit(func(ev *auditv1.Event) { ev.ResponseStatus = status })
}

// SetResponseCode records the HTTP code of the response, keeping any
// status details already recorded.
func (ac *Context) SetResponseCode(code int) {
	ac.visit(func(ev *auditv1.Event) {
		if ev.ResponseStatus == nil {
			ev.ResponseStatus = &metav1.Status{}
		}
		ev.ResponseStatus.Code = int32(code)
	})
}

// HasResponseStatus reports whether a status was recorded.
func (ac *Context) HasResponseStatus() bool {
	has := false
	ac.visit(func(ev *auditv1.Event) { has = ev.ResponseStatus != nil })
	return has
}

// AddAnnotation adds key=value to the request's event. A key keeps its
// first value, as in kube. Admission plugins and filters call it.
func AddAnnotation(ctx context.Context, key, value string) {
	From(ctx).visit(func(ev *auditv1.Event) {
		if ev.Annotations == nil {
			ev.Annotations = map[string]string{}
		}
		if _, ok := ev.Annotations[key]; !ok {
			ev.Annotations[key] = value
		}
	})
}

// LogImpersonatedUser records who the request acts as and, when a
// constrained impersonation mode allowed it, that mode's verb
// (impersonate:user-info).
func LogImpersonatedUser(ctx context.Context, u *authn.User, constraint string) {
	From(ctx).visit(func(ev *auditv1.Event) {
		ev.ImpersonatedUser = userInfo(u)
		if constraint != "" {
			ev.AuthenticationMetadata = &auditv1.AuthenticationMetadata{ImpersonationConstraint: constraint}
		}
	})
}

func userInfo(u *authn.User) *authenticationv1.UserInfo {
	info := &authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups,
		Extra: map[string]authenticationv1.ExtraValue{}}
	for k, v := range u.Extra {
		info.Extra[k] = v
	}
	return info
}
