package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPriorityAndFairnessDebugDumps: the three dumps kube serves, with its
// columns, one row per level, queue or request; reading them is a
// non-resource "get" that RBAC must allow.
func TestPriorityAndFairnessDebugDumps(t *testing.T) {
	e := e2eutil.Start(t)

	// kube's header line, padding included (no cell below is wider).
	r := e.Do(t, http.MethodGet, e2eutil.APFDebug+"dump_priority_levels", nil)
	wantHeader := "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests"
	if got, _, _ := strings.Cut(string(r.Body), "\n"); r.Code != http.StatusOK || got != wantHeader {
		t.Errorf("dump_priority_levels: %d, header\n%q\nwant\n%q", r.Code, got, wantHeader)
	}

	// Once the configuration is read, one row per level, by name.
	wantLevels := []string{"catch-all", "exempt", "global-default", "leader-election", "node-high", "system", "workload-high", "workload-low"}
	e2eutil.Eventually(t, 30*time.Second, "the suggested levels in the dump", func(context.Context) (bool, error) {
		d := e.APFDump(t, "dump_priority_levels")
		var got []string
		for _, row := range d.Rows {
			got = append(got, row[0])
		}
		return slices.Equal(got, wantLevels), nil
	})
	// The dump's own request runs in the exempt level; so may the
	// server's in-process informers' watches, which hold their seats until
	// their initial events are sent (the garbage collector's start once
	// the server is ready).
	levels := e.APFDump(t, "dump_priority_levels")
	for _, row := range levels.Rows {
		executing, _ := strconv.Atoi(levels.Col(t, row, "ExecutingRequests"))
		if row[0] == "exempt" && (executing < 1 || levels.Col(t, row, "IsIdle") != "false") {
			t.Errorf("the exempt level runs the dump's own request: %v", row)
		}
	}

	// workload-low has kube's 128 queues, numbered from 0.
	queues := e.APFDump(t, "dump_queues")
	if want := []string{"PriorityLevelName", "Index", "PendingRequests", "ExecutingRequests", "SeatsInUse",
		"NextDispatchR", "InitialSeatsSum", "MaxSeatsSum", "TotalWorkSum"}; !slices.Equal(queues.Header, want) {
		t.Errorf("dump_queues header %v", queues.Header)
	}
	var indexes int
	for _, row := range queues.Rows {
		if row[0] == "workload-low" {
			if queues.Col(t, row, "Index") != strconv.Itoa(indexes) || queues.Col(t, row, "NextDispatchR") == "" ||
				!strings.HasSuffix(queues.Col(t, row, "TotalWorkSum"), "ss") {
				t.Fatalf("queue row %v", row)
			}
			indexes++
		}
	}
	if indexes != 128 {
		t.Errorf("workload-low has %d queues in the dump, want 128", indexes)
	}

	// The dump of requests shows itself, executing without a queue in the
	// exempt level; with details, who asked for what.
	r = e.Do(t, http.MethodGet, e2eutil.APFDebug+"dump_requests?includeRequestDetails=1", nil)
	reqs := e2eutil.ParseDump(t, string(r.Body))
	wantColumns := []string{"PriorityLevelName", "FlowSchemaName", "QueueIndex", "RequestIndexInQueue", "FlowDistingsher",
		"ArriveTime", "InitialSeats", "FinalSeats", "AdditionalLatency", "StartTime",
		"UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion", "Resource", "SubResource"}
	if !slices.Equal(reqs.Header, wantColumns) {
		t.Fatalf("dump_requests header %v", reqs.Header)
	}
	self := slices.IndexFunc(reqs.Rows, func(row []string) bool {
		return reqs.Col(t, row, "APIPath") == e2eutil.APFDebug+"dump_requests"
	})
	if self < 0 {
		t.Fatalf("the dump does not show its own request:\n%s", r.Body)
	}
	row := reqs.Rows[self]
	want := map[string]string{"PriorityLevelName": "exempt", "FlowSchemaName": "exempt", "QueueIndex": "-1",
		"RequestIndexInQueue": "-1", "InitialSeats": "1", "FinalSeats": "0", "AdditionalLatency": "0s", "Verb": "get"}
	for col, v := range want {
		if got := reqs.Col(t, row, col); got != v {
			t.Errorf("%s = %q, want %q in %v", col, got, v, row)
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, reqs.Col(t, row, "ArriveTime")); err != nil {
		t.Errorf("ArriveTime: %v", err)
	}
	if plain := e2eutil.ParseDump(t, string(e.Do(t, http.MethodGet, e2eutil.APFDebug+"dump_requests", nil).Body)); len(plain.Header) != 10 {
		t.Errorf("without details the dump has %d columns, want 10", len(plain.Header))
	}

	// Others need RBAC on the non-resource URL.
	e.Do(t, http.MethodGet, e2eutil.APFDebug+"dump_priority_levels", nil, "Impersonate-User", "apf-reader").WantStatus(t,
		http.StatusForbidden, metav1.StatusReasonForbidden,
		`forbidden: User "apf-reader" cannot get path "/debug/api_priority_and_fairness/dump_priority_levels"`)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("apf-debug")},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{e2eutil.APFDebug + "*"}}}}
	if _, err := e.Clientset.RbacV1().ClusterRoles().Create(e2eutil.Ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "apf-reader"}}}
	if _, err := e.Clientset.RbacV1().ClusterRoleBindings().Create(e2eutil.Ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 30*time.Second, "the role allowing the dump", func(context.Context) (bool, error) {
		r := e.Do(t, http.MethodGet, e2eutil.APFDebug+"dump_requests?includeRequestDetails=1", nil, "Impersonate-User", "apf-reader")
		return r.Code == http.StatusOK && strings.Contains(string(r.Body), "apf-reader"), nil
	})
}
