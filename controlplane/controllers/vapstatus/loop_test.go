package vapstatus_test

import (
	"context"
	"log/slog"
	"os"
	"reflect"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/capstan-io/capstan/admission/policy/validating"
	"github.com/capstan-io/capstan/controlplane/controllers/vapstatus"
	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// TestLoop runs the loop on a server whose own is off: a policy's
// warnings and generation are applied to its status, and replaced when
// its spec changes.
func TestLoop(t *testing.T) {
	s := testkit.StartServer(t, "--controllers=")
	cfg := rest.CopyConfig(s.Config)
	cfg.QPS = -1
	client := kubernetes.NewForConfigOrDie(cfg)
	loopClient := kubernetes.NewForConfigOrDie(cfg)
	checker := &validating.TypeChecker{Schemas: &resolver.ClientDiscoveryResolver{Discovery: loopClient.Discovery()},
		Mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(loopClient.Discovery()))}
	c, err := vapstatus.New(loopClient, checker, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx, 1) }()
	defer func() { cancel(); <-done }()

	policies := client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	p := &arv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "replicas"}, Spec: arv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
			Operations: []arv1.OperationType{arv1.Create},
			Rule:       arv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}},
		Validations: []arv1.Validation{{Expression: "object.spec.replica > 1"}}}}
	if _, err := policies.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := observed(t, client, 1)
	want := []arv1.ExpressionWarning{{FieldRef: "spec.validations[0].expression",
		Warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replica'\n | object.spec.replica > 1\n | ...........^\n"}}
	if got.Status.TypeChecking == nil || !reflect.DeepEqual(got.Status.TypeChecking.ExpressionWarnings, want) {
		t.Errorf("typeChecking %+v, want warnings %q", got.Status.TypeChecking, want)
	}
	var manager string
	for _, m := range got.ManagedFields {
		if m.Subresource == "status" && m.Operation == metav1.ManagedFieldsOperationApply {
			manager = m.Manager
		}
	}
	if manager != "validatingadmissionpolicy-status" {
		t.Errorf("status applied by %q, want validatingadmissionpolicy-status", manager)
	}

	got.Spec.Validations[0].Expression = "object.spec.replicas > 1"
	if _, err := policies.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The apply of an empty typeChecking takes the warnings the loop
	// applied before away, and with them typeChecking itself: kube's
	// server-side apply (structured-merge-diff) drops the map emptied.
	if got = observed(t, client, 2); got.Status.TypeChecking != nil {
		t.Errorf("typeChecking %+v after the expression was fixed, want none", got.Status.TypeChecking)
	}
}

// observed waits until the policy's status has seen generation.
func observed(t *testing.T, client kubernetes.Interface, generation int64) *arv1.ValidatingAdmissionPolicy {
	t.Helper()
	var last *arv1.ValidatingAdmissionPolicy
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "replicas", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = p
		return p.Generation == generation && p.Status.ObservedGeneration == generation, nil
	})
	if err != nil {
		t.Fatalf("status of generation %d: %v; last seen generation %d, status %+v", generation, err, last.Generation, last.Status)
	}
	return last
}
