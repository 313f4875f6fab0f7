package filters

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/request"
)

// WithAuditID gives every request an audit ID, the client's Audit-ID
// header or a new UUID, and returns it in the Audit-ID response header, as
// kube does whether or not it audits. When auditing is on, the request
// also gets the audit Context its event is collected in.
func WithAuditID(auditing audit.Config) Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := headerValue(r.Header, auditIDKey)
			if id == "" {
				id = uuid.NewString()
			}
			if h := w.Header(); headerValue(h, auditIDKey) == "" {
				h[auditIDKey] = []string{id}
			}
			if auditing.Enabled() {
				ctx, _ := audit.NewContext(r.Context(), auditing, id, time.Now())
				r = r.WithContext(ctx)
			}
			h.ServeHTTP(w, r)
		})
	}
}

// auditIDKey is the Audit-ID header's key in a Header map. Get and Set
// canonicalize a key they are given on every call, and "Audit-ID" is not
// canonical: each call cost a new string.
var auditIDKey = http.CanonicalHeaderKey(audit.HeaderAuditID)

// headerValue is h.Get(key) for a key already canonical.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// WithAudit records the authenticated request at the level the policy
// gives it: RequestReceived before it goes on, ResponseStarted when a
// long-running answer starts, then ResponseComplete, or Panic.
func WithAudit(c audit.Config, logger *slog.Logger) Filter {
	return func(h http.Handler) http.Handler {
		if !c.Enabled() {
			return h
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ac := startEvent(r)
			if !ac.Audited() {
				h.ServeHTTP(w, r)
				return
			}
			if !ac.ProcessStage(auditv1.StageRequestReceived) {
				logger.Error("failed to store audit event", "auditID", ac.AuditID())
				metrics.AuditRejected()
				writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError,
					"Internal error occurred: failed to store audit event")
				return
			}
			info, _ := request.InfoFrom(r.Context())
			longRunning := LongRunning(info)
			defer func() {
				if rec := recover(); rec != nil {
					ac.SetResponseStatus(&metav1.Status{Code: http.StatusInternalServerError, Status: metav1.StatusFailure,
						Reason: metav1.StatusReasonInternalError, Message: fmt.Sprintf("APIServer panic'd: %v", rec)})
					ac.ProcessStage(auditv1.StagePanic)
					panic(rec)
				}
				if !ac.HasResponseStatus() {
					// The handler wrote nothing: the client went away.
					ac.SetResponseStatus(&metav1.Status{Code: http.StatusOK, Status: metav1.StatusSuccess, Message: "Connection closed early"})
					if longRunning {
						ac.ProcessStage(auditv1.StageResponseStarted)
					}
				}
				ac.ProcessStage(auditv1.StageResponseComplete)
			}()
			h.ServeHTTP(&auditWriter{ResponseWriter: w, ac: ac, started: longRunning}, r)
		})
	}
}

// startEvent evaluates the policy for r and fills the event's metadata.
func startEvent(r *http.Request) *audit.Context {
	ac := audit.From(r.Context())
	if ac == nil {
		return nil
	}
	user, _ := authn.UserFrom(r.Context())
	info, _ := request.InfoFrom(r.Context())
	if info == nil {
		info = &request.Info{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	}
	ac.Evaluate(user, info)
	ac.LogRequestMetadata(r, user, info)
	return ac
}

// auditFailedAuthentication records a request that failed authentication,
// as kube does: one ResponseStarted event, without a user, saying which
// credentials were tried. It returns the writer of the 401.
func auditFailedAuthentication(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	ac := startEvent(r)
	if !ac.Audited() {
		return w
	}
	ac.SetResponseStatus(&metav1.Status{Message: authMethods(r)})
	return &auditWriter{ResponseWriter: w, ac: ac, started: true}
}

// authMethods says which credentials a request carried.
func authMethods(r *http.Request) string {
	var methods []string
	if _, _, ok := r.BasicAuth(); ok {
		methods = append(methods, "basic")
	}
	if parts := strings.Split(strings.TrimSpace(r.Header.Get("Authorization")), " "); len(parts) > 1 && strings.ToLower(parts[0]) == "bearer" {
		methods = append(methods, "bearer")
	}
	if strings.TrimSpace(r.URL.Query().Get("access_token")) != "" {
		methods = append(methods, "access_token")
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		methods = append(methods, "x509")
	}
	if len(methods) == 0 {
		return "Authentication failed, no credentials provided"
	}
	return "Authentication failed, attempted: " + strings.Join(methods, ", ")
}

// auditWriter records the response code when the answer starts, and for
// long-running requests the ResponseStarted stage.
type auditWriter struct {
	http.ResponseWriter
	ac      *audit.Context
	started bool // whether to process ResponseStarted
	once    sync.Once
}

func (a *auditWriter) recordCode(code int) {
	a.once.Do(func() {
		a.ac.SetResponseCode(code)
		if a.started {
			a.ac.ProcessStage(auditv1.StageResponseStarted)
		}
	})
}

func (a *auditWriter) WriteHeader(code int) {
	a.recordCode(code)
	a.ResponseWriter.WriteHeader(code)
}

func (a *auditWriter) Write(b []byte) (int, error) {
	a.recordCode(http.StatusOK)
	return a.ResponseWriter.Write(b)
}

// Flush lets watches flush through the writer.
func (a *auditWriter) Flush() {
	a.recordCode(http.StatusOK)
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack records the switch of protocols of an upgraded connection.
func (a *auditWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	a.recordCode(http.StatusSwitchingProtocols)
	return http.NewResponseController(a.ResponseWriter).Hijack()
}

// Unwrap is for http.ResponseController.
func (a *auditWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }
