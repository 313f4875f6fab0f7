package flowcontrol

import (
	"context"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-io/capstan/apis/flowcontrol/bootstrap"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

func schema(name, level string, precedence int32, subjects ...flowcontrolv1.Subject) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			MatchingPrecedence:         precedence,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{Subjects: subjects,
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					Namespaces: []string{"*"}, ClusterScope: true}}}},
		}}
}

func rejecting(name string, shares int32) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: &shares, LendablePercent: i32(0), BorrowingLimitPercent: i32(0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
}

func digestFor(user string, groups ...string) Digest {
	return Digest{Info: &request.Info{IsResourceRequest: true, Verb: "get", Resource: "pods", Namespace: "ns"},
		User: &authn.User{Name: user, Groups: append(groups, authn.AllAuthenticated)}}
}

// TestMandatoryBeforeConfig: with no objects, system:masters is exempt
// and everybody else is in catch-all, as kube before its config loads.
func TestMandatoryBeforeConfig(t *testing.T) {
	c := NewController(Config{ServerConcurrencyLimit: 10})
	for _, tc := range []struct {
		d          Digest
		schema     string
		level      string
		exemptSeat bool
	}{
		{digestFor("admin", authn.SystemPrivilegedGroup), "exempt", "exempt", true},
		{digestFor("alice"), "catch-all", "catch-all", false},
	} {
		a := c.Start(context.Background(), time.Now(), tc.d, "")
		if !a.Admitted() || a.FlowSchema.Name != tc.schema || a.PriorityLevel.Name != tc.level {
			t.Fatalf("%s: admitted %v into %s/%s", tc.d.User.Name, a.Admitted(), a.FlowSchema.Name, a.PriorityLevel.Name)
		}
		a.Finish()
	}
	// catch-all has all 10 seats and rejects past them.
	var held []Admission
	for range 10 {
		a := c.Start(context.Background(), time.Now(), digestFor("alice"), "")
		if !a.Admitted() {
			t.Fatal("rejected within the limit")
		}
		held = append(held, a)
	}
	if c.Start(context.Background(), time.Now(), digestFor("alice"), "").Admitted() {
		t.Fatal("admitted past catch-all's limit")
	}
	for range 50 {
		a := c.Start(context.Background(), time.Now(), digestFor("admin", authn.SystemPrivilegedGroup), "")
		if !a.Admitted() {
			t.Fatal("an exempt request was rejected")
		}
		defer a.Finish()
	}
	for _, a := range held {
		a.Finish()
	}
}

func TestClassificationOrder(t *testing.T) {
	c := NewController(Config{ServerConcurrencyLimit: 100})
	pls := append(bootstrap.MandatoryPriorityLevelConfigurations(), rejecting("low", 10), rejecting("high", 10))
	fss := []*flowcontrolv1.FlowSchema{
		schema("b-devs", "low", 500, groupSubject("devs")),
		schema("a-devs", "high", 500, groupSubject("devs")),
		schema("alice", "low", 100, userSubject("alice")),
		schema("orphan", "missing", 1, userSubject("*")),
	}
	c.digest(pls, fss)
	for _, tc := range []struct {
		d      Digest
		schema string
	}{
		{digestFor("alice", "devs"), "alice"},
		{digestFor("bob", "devs"), "a-devs"}, // same precedence: by name
		{digestFor("carol"), "catch-all"},    // the dangling schema is skipped
		{digestFor("root", authn.SystemPrivilegedGroup), "exempt"},
	} {
		a := c.Start(context.Background(), time.Now(), tc.d, "")
		a.Finish()
		if a.FlowSchema.Name != tc.schema {
			t.Errorf("%s: classified by %s, want %s", tc.d.User.Name, a.FlowSchema.Name, tc.schema)
		}
	}
}

func TestDangling(t *testing.T) {
	c := NewController(Config{})
	pls := append(bootstrap.MandatoryPriorityLevelConfigurations(), rejecting("low", 10))
	found := schema("found", "low", 500, userSubject("*"))
	missing := schema("missing", "nope", 500, userSubject("*"))
	updates := c.digest(pls, []*flowcontrolv1.FlowSchema{found, missing})
	want := map[string]flowcontrolv1.FlowSchemaCondition{
		"found": {Type: "Dangling", Status: "False", Reason: "Found",
			Message: `This FlowSchema references the PriorityLevelConfiguration object named "low" and it exists`},
		"missing": {Type: "Dangling", Status: "True", Reason: "NotFound",
			Message: `This FlowSchema references the PriorityLevelConfiguration object named "nope" but there is no such object`},
	}
	if len(updates) != 2 {
		t.Fatalf("updates %+v", updates)
	}
	for _, u := range updates {
		got := u.condition
		got.LastTransitionTime = metav1.Time{}
		if got != want[u.name] {
			t.Errorf("%s: %+v, want %+v", u.name, got, want[u.name])
		}
		fs := found
		if u.name == "missing" {
			fs = missing
		}
		fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{u.condition}
	}
	if updates := c.digest(pls, []*flowcontrolv1.FlowSchema{found, missing}); len(updates) != 0 {
		t.Fatalf("conditions already right were written again: %+v", updates)
	}
	// The level appears: the schema is no longer dangling.
	pls = append(pls, rejecting("nope", 10))
	if updates := c.digest(pls, []*flowcontrolv1.FlowSchema{found, missing}); len(updates) != 1 || updates[0].condition.Status != "False" {
		t.Fatalf("updates %+v", updates)
	}
}

func TestRetryAfter(t *testing.T) {
	now := int64(1000)
	tr := retryAfterTracker{now: func() time.Time { return time.Unix(now, 0) }}
	steps := []struct {
		drops int
		want  int64
	}{
		// Worked out by kube's rules: doubled after a second of >= 3
		// drops, one less when the last retryAfter seconds had fewer
		// than retryAfter.
		{1, 1}, {5, 1}, {1, 2}, {0, 2}, {10, 1}, {1, 2}, {0, 2},
	}
	for i, s := range steps {
		for range s.drops {
			tr.dropped("l")
		}
		if got := tr.get("l"); got != s.want {
			t.Fatalf("second %d: retry after %d, want %d", i, got, s.want)
		}
		now++
	}
	if tr.get("other") != 1 {
		t.Fatal("a level without rejections")
	}
}

// TestQueuedWaitLimit checks that a request that has to queue waits no
// longer than its limit (a quarter of the time to its context's deadline,
// or the default), and that one dispatched at once is admitted whatever
// its context: Start makes the wait's deadline only for a request that
// queues.
func TestQueuedWaitLimit(t *testing.T) {
	c := NewController(Config{ServerConcurrencyLimit: 2, DefaultWaitLimit: 20 * time.Millisecond})
	shares := int32(1)
	queuing := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "q", UID: "uid-q"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: &shares, LendablePercent: i32(0), BorrowingLimitPercent: i32(0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 10}}}}}
	c.digest(append(bootstrap.MandatoryPriorityLevelConfigurations(), queuing),
		[]*flowcontrolv1.FlowSchema{schema("alice", "q", 100, userSubject("alice"))})

	held := c.Start(context.Background(), time.Now(), digestFor("alice"), "")
	if !held.Admitted() || held.PriorityLevel.Name != "q" {
		t.Fatalf("first request: admitted %v into %v", held.Admitted(), held.PriorityLevel.Name)
	}
	deadline, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancel()
	canceled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{
		{"a context without a deadline: the default limit", context.Background()},
		{"a quarter of the time to the deadline", deadline},
		{"a canceled context", canceled},
	} {
		if a := c.Start(tc.ctx, time.Now(), digestFor("alice"), ""); a.Admitted() {
			a.Finish()
			t.Errorf("%s: a request past the level's seat was admitted", tc.name)
		}
	}
	held.Finish()
	if a := c.Start(canceled, time.Now(), digestFor("alice"), ""); !a.Admitted() {
		t.Error("a request dispatched at once was rejected for its canceled context")
	} else {
		a.Finish()
	}
}
