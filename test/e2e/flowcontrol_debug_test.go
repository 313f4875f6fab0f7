package e2e

import (
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

const apfDebug = "/debug/api_priority_and_fairness/"

// dumpTable is a debug dump of APF: kube's header and rows, each cell
// with its padding trimmed, read by column name.
type dumpTable struct {
	header []string
	rows   [][]string
}

// parseDump reads kube's format: one line per row, cells joined by ","
// and padded with spaces to align the columns.
func parseDump(t *testing.T, body string) dumpTable {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	var d dumpTable
	for i, line := range lines {
		cells := strings.Split(line, ",")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if i == 0 {
			d.header = cells
			continue
		}
		if len(cells) != len(d.header) {
			t.Fatalf("row %d has %d cells, the header %d:\n%s", i, len(cells), len(d.header), body)
		}
		d.rows = append(d.rows, cells)
	}
	return d
}

// col returns the cell of row in the named column.
func (d dumpTable) col(t *testing.T, row []string, name string) string {
	t.Helper()
	i := slices.Index(d.header, name)
	if i < 0 {
		t.Fatalf("no column %q in %v", name, d.header)
	}
	return row[i]
}

// dump gets one of the dumps as the admin.
func (e *env) apfDump(t *testing.T, name string) dumpTable {
	t.Helper()
	r := e.do(t, http.MethodGet, apfDebug+name, nil)
	if r.code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", name, r.code, r.body)
	}
	return parseDump(t, string(r.body))
}

// TestPriorityAndFairnessDebugDumps: the three dumps kube serves, with its
// columns, one row per level, queue or request; reading them is a
// non-resource "get" that RBAC must allow.
func TestPriorityAndFairnessDebugDumps(t *testing.T) {
	e := start(t)

	// kube's header line, padding included (no cell below is wider).
	r := e.do(t, http.MethodGet, apfDebug+"dump_priority_levels", nil)
	wantHeader := "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests"
	if got, _, _ := strings.Cut(string(r.body), "\n"); r.code != http.StatusOK || got != wantHeader {
		t.Errorf("dump_priority_levels: %d, header\n%q\nwant\n%q", r.code, got, wantHeader)
	}

	// Once the configuration is read, one row per level, by name.
	wantLevels := []string{"catch-all", "exempt", "global-default", "leader-election", "node-high", "system", "workload-high", "workload-low"}
	eventually(t, 30*time.Second, "the suggested levels in the dump", func(context.Context) (bool, error) {
		d := e.apfDump(t, "dump_priority_levels")
		var got []string
		for _, row := range d.rows {
			got = append(got, row[0])
		}
		return slices.Equal(got, wantLevels), nil
	})
	// The dump's own request runs in the exempt level; so may the
	// server's in-process informers' watches, which hold their seats until
	// their initial events are sent (the garbage collector's start once
	// the server is ready).
	levels := e.apfDump(t, "dump_priority_levels")
	for _, row := range levels.rows {
		executing, _ := strconv.Atoi(levels.col(t, row, "ExecutingRequests"))
		if row[0] == "exempt" && (executing < 1 || levels.col(t, row, "IsIdle") != "false") {
			t.Errorf("the exempt level runs the dump's own request: %v", row)
		}
	}

	// workload-low has kube's 128 queues, numbered from 0.
	queues := e.apfDump(t, "dump_queues")
	if want := []string{"PriorityLevelName", "Index", "PendingRequests", "ExecutingRequests", "SeatsInUse",
		"NextDispatchR", "InitialSeatsSum", "MaxSeatsSum", "TotalWorkSum"}; !slices.Equal(queues.header, want) {
		t.Errorf("dump_queues header %v", queues.header)
	}
	var indexes int
	for _, row := range queues.rows {
		if row[0] == "workload-low" {
			if queues.col(t, row, "Index") != strconv.Itoa(indexes) || queues.col(t, row, "NextDispatchR") == "" ||
				!strings.HasSuffix(queues.col(t, row, "TotalWorkSum"), "ss") {
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
	r = e.do(t, http.MethodGet, apfDebug+"dump_requests?includeRequestDetails=1", nil)
	reqs := parseDump(t, string(r.body))
	wantColumns := []string{"PriorityLevelName", "FlowSchemaName", "QueueIndex", "RequestIndexInQueue", "FlowDistingsher",
		"ArriveTime", "InitialSeats", "FinalSeats", "AdditionalLatency", "StartTime",
		"UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion", "Resource", "SubResource"}
	if !slices.Equal(reqs.header, wantColumns) {
		t.Fatalf("dump_requests header %v", reqs.header)
	}
	self := slices.IndexFunc(reqs.rows, func(row []string) bool {
		return reqs.col(t, row, "APIPath") == apfDebug+"dump_requests"
	})
	if self < 0 {
		t.Fatalf("the dump does not show its own request:\n%s", r.body)
	}
	row := reqs.rows[self]
	want := map[string]string{"PriorityLevelName": "exempt", "FlowSchemaName": "exempt", "QueueIndex": "-1",
		"RequestIndexInQueue": "-1", "InitialSeats": "1", "FinalSeats": "0", "AdditionalLatency": "0s", "Verb": "get"}
	for col, v := range want {
		if got := reqs.col(t, row, col); got != v {
			t.Errorf("%s = %q, want %q in %v", col, got, v, row)
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, reqs.col(t, row, "ArriveTime")); err != nil {
		t.Errorf("ArriveTime: %v", err)
	}
	if plain := parseDump(t, string(e.do(t, http.MethodGet, apfDebug+"dump_requests", nil).body)); len(plain.header) != 10 {
		t.Errorf("without details the dump has %d columns, want 10", len(plain.header))
	}

	// Others need RBAC on the non-resource URL.
	e.do(t, http.MethodGet, apfDebug+"dump_priority_levels", nil, "Impersonate-User", "apf-reader").wantStatus(t,
		http.StatusForbidden, metav1.StatusReasonForbidden,
		`forbidden: User "apf-reader" cannot get path "/debug/api_priority_and_fairness/dump_priority_levels"`)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: unique("apf-debug")},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{apfDebug + "*"}}}}
	if _, err := e.c.RbacV1().ClusterRoles().Create(ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "apf-reader"}}}
	if _, err := e.c.RbacV1().ClusterRoleBindings().Create(ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the role allowing the dump", func(context.Context) (bool, error) {
		r := e.do(t, http.MethodGet, apfDebug+"dump_requests?includeRequestDetails=1", nil, "Impersonate-User", "apf-reader")
		return r.code == http.StatusOK && strings.Contains(string(r.body), "apf-reader"), nil
	})
}
