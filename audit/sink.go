package audit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Sink receives events. It reports false when it could not take them; the
// event it is handed is reused by the request afterwards, so a sink that
// keeps it must copy it.
type Sink interface {
	ProcessEvents(events ...*auditv1.Event) bool
}

// Backend is a Sink with a life: Run starts it, and Shutdown, once
// requests are done, delivers what it still holds.
type Backend interface {
	Sink
	Run(ctx context.Context)
	Shutdown()
	String() string
}

// Union sends every event to each backend; a union of one is that one.
func Union(backends ...Backend) Backend {
	if len(backends) == 1 {
		return backends[0]
	}
	return union(backends)
}

type union []Backend

func (u union) ProcessEvents(events ...*auditv1.Event) bool {
	ok := true
	for _, b := range u {
		ok = b.ProcessEvents(events...) && ok
	}
	return ok
}

func (u union) Run(ctx context.Context) {
	for _, b := range u {
		b.Run(ctx)
	}
}

func (u union) Shutdown() {
	for _, b := range u {
		b.Shutdown()
	}
}

func (u union) String() string {
	names := make([]string, len(u))
	for i, b := range u {
		names[i] = b.String()
	}
	return "union[" + strings.Join(names, ",") + "]"
}

// EventString is an event in kube's one-line legacy log format.
func EventString(ev *auditv1.Event) string {
	user, groups := "<none>", "<none>"
	if ev.User.Username != "" {
		user = ev.User.Username
		if len(ev.User.Groups) > 0 {
			groups = quoteAll(ev.User.Groups)
		}
	}
	as, asGroups := "<self>", "<lookup>"
	if ev.ImpersonatedUser != nil {
		as = ev.ImpersonatedUser.Username
		if ev.ImpersonatedUser.Groups != nil {
			asGroups = quoteAll(ev.ImpersonatedUser.Groups)
		}
	}
	namespace := "<none>"
	if ev.ObjectRef != nil && ev.ObjectRef.Namespace != "" {
		namespace = ev.ObjectRef.Namespace
	}
	response := "<deferred>"
	if ev.ResponseStatus != nil {
		response = strconv.Itoa(int(ev.ResponseStatus.Code))
	}
	ip := "<unknown>"
	if len(ev.SourceIPs) > 0 {
		ip = ev.SourceIPs[0]
	}
	return fmt.Sprintf("%s AUDIT: id=%q stage=%q ip=%q method=%q user=%q groups=%q as=%q asgroups=%q user-agent=%q namespace=%q uri=%q response=\"%s\"",
		ev.RequestReceivedTimestamp.Format(time.RFC3339Nano), ev.AuditID, ev.Stage, ip, ev.Verb, user, groups,
		as, asGroups, ev.UserAgent, namespace, ev.RequestURI, response)
}

func quoteAll(list []string) string {
	quoted := make([]string, len(list))
	for i, s := range list {
		quoted[i] = strconv.Quote(s)
	}
	return strings.Join(quoted, ",")
}
