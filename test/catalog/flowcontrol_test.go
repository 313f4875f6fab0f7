package catalog

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	"k8s.io/client-go/util/retry"

	"github.com/capstan-io/capstan/apis/flowcontrol/bootstrap"
	"github.com/capstan-io/capstan/internal/testkit"
)

const autoUpdate = flowcontrolv1.AutoUpdateAnnotationKey

// The group as kube-apiserver v1.37.2 serves it (v1 alone), its bootstrap
// objects, and what the configuration producer does with changes to them
// at the next start.
func TestFlowControlBootstrapConfiguration(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	fc := c.FlowcontrolV1()
	checkFlowControlDiscovery(t, c)
	checkBootstrapObjects(t, fc)

	out, _, err := testkit.RunKubectl(t, s.Kubeconfig, nil, "get", "flowschemas")
	if err != nil || !strings.HasPrefix(words(out), "NAME PRIORITYLEVEL MATCHINGPRECEDENCE DISTINGUISHERMETHOD AGE MISSINGPL") ||
		!strings.Contains(words(out), "service-accounts workload-low 9000 ByUser") {
		t.Errorf("kubectl get flowschemas: %v\n%s", err, out)
	}
	out, _, err = testkit.RunKubectl(t, s.Kubeconfig, nil, "get", "prioritylevelconfigurations")
	if err != nil || !strings.HasPrefix(words(out), "NAME TYPE NOMINALCONCURRENCYSHARES QUEUES HANDSIZE QUEUELENGTHLIMIT AGE") ||
		!strings.Contains(words(out), "exempt Exempt <none> <none> <none> <none>") || !strings.Contains(words(out), "workload-high Limited 40 128 6 50") {
		t.Errorf("kubectl get prioritylevelconfigurations: %v\n%s", err, out)
	}

	// kubectl explain reads the group's OpenAPI v3 document.
	out, _, err = testkit.RunKubectl(t, s.Kubeconfig, nil, "explain", "flowschemas.spec.matchingPrecedence")
	if err != nil || !strings.HasPrefix(words(out), "GROUP: flowcontrol.apiserver.k8s.io KIND: FlowSchema VERSION: v1 FIELD: matchingPrecedence <integer>") {
		t.Errorf("kubectl explain: %v\n%s", err, out)
	}

	// Deleted suggested and mandatory objects.
	must(t, fc.PriorityLevelConfigurations().Delete(ctx, "workload-low", metav1.DeleteOptions{}))
	must(t, fc.FlowSchemas().Delete(ctx, "service-accounts", metav1.DeleteOptions{}))
	must(t, fc.FlowSchemas().Delete(ctx, "catch-all", metav1.DeleteOptions{}))
	// A mandatory object whose annotation says not to update it.
	updateFS(t, fc, "exempt", func(fs *flowcontrolv1.FlowSchema) { fs.Annotations[autoUpdate] = "false" })
	// The exempt level's spec.exempt is the administrator's.
	updatePL(t, fc, "exempt", func(pl *flowcontrolv1.PriorityLevelConfiguration) { *pl.Spec.Exempt.NominalConcurrencyShares = 7 })
	// A suggested level changed with autoupdate-spec=false, one changed but
	// left at "true", one changed with the annotation removed.
	updatePL(t, fc, "global-default", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
		pl.Annotations[autoUpdate] = "false"
		*pl.Spec.Limited.NominalConcurrencyShares = 99
	})
	updatePL(t, fc, "system", func(pl *flowcontrolv1.PriorityLevelConfiguration) { *pl.Spec.Limited.NominalConcurrencyShares = 99 })
	updateFS(t, fc, "probes", func(fs *flowcontrolv1.FlowSchema) {
		delete(fs.Annotations, autoUpdate)
		fs.Spec.MatchingPrecedence = 3
	})
	// A schema the server once made and no longer does, and one of the
	// user's own.
	leftover := userSchema("endpoint-controller")
	leftover.Annotations = map[string]string{autoUpdate: "true"}
	mustCreateFS(t, fc, leftover)
	mustCreateFS(t, fc, userSchema("mine"))

	s.Restart(t)
	fc = s.Client(t).FlowcontrolV1() // the port is new

	for _, name := range []string{"service-accounts", "catch-all", "mine"} {
		getFS(t, fc, name)
	}
	getPL(t, fc, "workload-low")
	if _, err := fc.FlowSchemas().Get(ctx, "endpoint-controller", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("unwanted bootstrap schema: %v, want it deleted", err)
	}
	if got := getFS(t, fc, "exempt"); got.Annotations[autoUpdate] != "true" {
		t.Errorf("mandatory exempt schema annotation %q, want true", got.Annotations[autoUpdate])
	}
	if got := getPL(t, fc, "exempt"); *got.Spec.Exempt.NominalConcurrencyShares != 7 {
		t.Errorf("exempt level's shares = %d, want the administrator's 7", *got.Spec.Exempt.NominalConcurrencyShares)
	}
	if got := getPL(t, fc, "global-default"); *got.Spec.Limited.NominalConcurrencyShares != 99 || got.Annotations[autoUpdate] != "false" {
		t.Errorf("opted-out level: shares %d annotation %q, want 99 and false", *got.Spec.Limited.NominalConcurrencyShares, got.Annotations[autoUpdate])
	}
	if got := getPL(t, fc, "system"); *got.Spec.Limited.NominalConcurrencyShares != 30 {
		t.Errorf("auto-updated level's shares = %d, want 30 back", *got.Spec.Limited.NominalConcurrencyShares)
	}
	// Changed since its creation and no annotation: the user's now.
	if got := getFS(t, fc, "probes"); got.Spec.MatchingPrecedence != 3 || got.Annotations[autoUpdate] != "false" {
		t.Errorf("probes: precedence %d annotation %q, want 3 and false", got.Spec.MatchingPrecedence, got.Annotations[autoUpdate])
	}
}

func checkFlowControlDiscovery(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	groups, err := c.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, g := range groups.Groups {
		if g.Name == flowcontrolv1.GroupName {
			for _, v := range g.Versions {
				versions = append(versions, v.GroupVersion)
			}
		}
	}
	if !slices.Equal(versions, []string{"flowcontrol.apiserver.k8s.io/v1"}) {
		t.Errorf("flowcontrol versions %v, want v1 alone", versions)
	}
	list, err := c.Discovery().ServerResourcesForGroupVersion("flowcontrol.apiserver.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	// kube-apiserver v1.37.2's answer, storage version hashes included.
	want := map[string]string{
		"flowschemas":                        "FlowSchema false [create delete deletecollection get list patch update watch] GJVAJZSZBIw=",
		"flowschemas/status":                 "FlowSchema false [get patch update] ",
		"prioritylevelconfigurations":        "PriorityLevelConfiguration false [create delete deletecollection get list patch update watch] Kir5PVfvNeI=",
		"prioritylevelconfigurations/status": "PriorityLevelConfiguration false [get patch update] ",
	}
	if len(list.APIResources) != len(want) {
		t.Errorf("resources %+v", list.APIResources)
	}
	for _, r := range list.APIResources {
		verbs := slices.Sorted(slices.Values(r.Verbs))
		got := r.Kind + " " + map[bool]string{true: "true", false: "false"}[r.Namespaced] + " [" + strings.Join(verbs, " ") + "] " + r.StorageVersionHash
		if want[r.Name] != got {
			t.Errorf("%s: %q, want %q", r.Name, got, want[r.Name])
		}
	}
}

// checkBootstrapObjects: every bootstrap object, as kube makes it.
func checkBootstrapObjects(t *testing.T, fc flowcontrolclient.FlowcontrolV1Interface) {
	t.Helper()
	levels, err := fc.PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := fc.FlowSchemas().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantLevels := append(bootstrap.MandatoryPriorityLevelConfigurations(), bootstrap.SuggestedPriorityLevelConfigurations()...)
	wantSchemas := append(bootstrap.MandatoryFlowSchemas(), bootstrap.SuggestedFlowSchemas()...)
	if len(levels.Items) != len(wantLevels) || len(schemas.Items) != len(wantSchemas) {
		t.Errorf("%d levels and %d schemas, want %d and %d", len(levels.Items), len(schemas.Items), len(wantLevels), len(wantSchemas))
	}
	for _, w := range wantLevels {
		got := getPL(t, fc, w.Name)
		if !apiequality.Semantic.DeepEqual(got.Spec, w.Spec) || got.Annotations[autoUpdate] != "true" || got.Generation != 1 {
			t.Errorf("level %s: %+v", w.Name, got)
		}
		checkProducer(t, w.Name, got.ManagedFields)
	}
	for _, w := range wantSchemas {
		got := getFS(t, fc, w.Name)
		if !apiequality.Semantic.DeepEqual(got.Spec, w.Spec) || got.Annotations[autoUpdate] != "true" || got.Generation != 1 {
			t.Errorf("schema %s: %+v", w.Name, got)
		}
		checkProducer(t, w.Name, got.ManagedFields)
	}
}

func checkProducer(t *testing.T, name string, managed []metav1.ManagedFieldsEntry) {
	t.Helper()
	// The config consumer's status writes may come first.
	if !slices.ContainsFunc(managed, func(m metav1.ManagedFieldsEntry) bool {
		return m.Manager == bootstrap.FieldManager && m.Operation == metav1.ManagedFieldsOperationUpdate && m.Subresource == ""
	}) {
		t.Errorf("%s: managed fields %+v, want the config producer's", name, managed)
	}
}

// Bad objects get kube's 422 and causes; status changes only through
// /status, and the spec only through the main resource.
func TestFlowControlValidationAndStatus(t *testing.T) {
	s := testkit.StartServer(t)
	fc := s.Client(t).FlowcontrolV1()

	bad := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "q1"}, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited, Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{},
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LendablePercent: int32p(101), LimitResponse: flowcontrolv1.LimitResponse{
			Type: flowcontrolv1.LimitResponseTypeReject, Queuing: &flowcontrolv1.QueuingConfiguration{}}}}}
	_, err := fc.PriorityLevelConfigurations().Create(ctx, bad, metav1.CreateOptions{})
	// kube-apiserver v1.37.2's answer.
	assertCauses(t, err, `PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "q1" is invalid: `+
		`[spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive, spec.exempt: Forbidden, spec.limited.limitResponse.queuing: Forbidden]`,
		"spec.limited.lendablePercent", "spec.exempt", "spec.limited.limitResponse.queuing")

	queued := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "p8"}, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{
			Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 20}}}}}
	_, err = fc.PriorityLevelConfigurations().Create(ctx, queued, metav1.CreateOptions{})
	assertCauses(t, err, `PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "p8" is invalid: `+
		`spec.limited.limitResponse.queuing.handSize: Invalid value: 20: required entropy bits of deckSize 128 and handSize 20 should not be greater than 60`,
		"spec.limited.limitResponse.queuing.handSize")

	// Defaults fill in what the client left out.
	queued.Spec.Limited.LimitResponse.Queuing.HandSize = 0
	pl, err := fc.PriorityLevelConfigurations().Create(ctx, queued, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := pl.Spec.Limited; *l.NominalConcurrencyShares != 30 || *l.LendablePercent != 0 || l.LimitResponse.Queuing.HandSize != 8 || l.LimitResponse.Queuing.QueueLengthLimit != 50 {
		t.Errorf("defaults: %+v %+v", l, l.LimitResponse.Queuing)
	}

	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mandatory := getFS(t, fc, "catch-all")
		mandatory.Spec.MatchingPrecedence = 9999
		_, err := fc.FlowSchemas().Update(ctx, mandatory, metav1.UpdateOptions{})
		return err
	})
	assertCauses(t, err, "", "spec")
	if !strings.Contains(err.Error(), `spec: Invalid value: {"PriorityLevelConfiguration":{"Name":"catch-all"},"MatchingPrecedence":9999,`) ||
		!strings.HasSuffix(err.Error(), "spec of 'catch-all' must equal the fixed value") {
		t.Errorf("mandatory schema error: %v", err)
	}

	// The config consumer writes its own condition (Dangling) meanwhile:
	// the checks look at the "Tested" and "Applied" conditions alone.
	fs := userSchema("mine")
	fs.Spec.MatchingPrecedence = 0
	fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Tested", Status: "True"}}
	fs, err = fc.FlowSchemas().Create(ctx, fs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fs.Spec.MatchingPrecedence != 1000 || len(fs.Status.Conditions) != 0 {
		t.Errorf("created: precedence %d, status %+v", fs.Spec.MatchingPrecedence, fs.Status)
	}
	// The main resource ignores status.
	fs = updateFS(t, fc, "mine", func(fs *flowcontrolv1.FlowSchema) {
		fs.Status.Conditions = append(fs.Status.Conditions, flowcontrolv1.FlowSchemaCondition{Type: "Tested", Status: "True"})
	})
	if hasCondition(fs, "Tested") || fs.Generation != 1 {
		t.Errorf("status through the main resource: %+v generation %d", fs.Status, fs.Generation)
	}
	// /status ignores spec and metadata.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fs = getFS(t, fc, "mine")
		fs.Status.Conditions = append(fs.Status.Conditions, flowcontrolv1.FlowSchemaCondition{Type: "Tested", Status: "False", Reason: "Found"})
		fs.Spec.MatchingPrecedence = 5
		fs.Labels = map[string]string{"through": "status"}
		fs, err = fc.FlowSchemas().UpdateStatus(ctx, fs, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !hasCondition(fs, "Tested") || fs.Spec.MatchingPrecedence != 1000 || fs.Labels != nil || fs.Generation != 1 {
		t.Errorf("after a status update: %+v", fs)
	}
	// Server-side apply to /status, as kube's config consumer writes its
	// conditions: labels are dropped, and not claimed (kube's answer).
	apply := `{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"FlowSchema","metadata":{"name":"mine","labels":{"a":"b"}},` +
		`"status":{"conditions":[{"type":"Applied","status":"True","reason":"R","message":"m","lastTransitionTime":"2026-11-30T22:18:36Z"}]}}`
	applied, err := fc.FlowSchemas().Patch(ctx, "mine", types.ApplyPatchType, []byte(apply), metav1.PatchOptions{FieldManager: "tester"}, "status")
	if err != nil {
		t.Fatal(err)
	}
	var claimed string
	for _, m := range applied.ManagedFields {
		if m.Manager == "tester" {
			claimed = string(m.FieldsV1.Raw)
		}
	}
	if applied.Labels != nil || !hasCondition(applied, "Applied") || !hasCondition(applied, "Tested") ||
		claimed != `{"f:status":{"f:conditions":{"k:{\"type\":\"Applied\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}` {
		t.Errorf("status apply: labels %v conditions %+v claimed %s", applied.Labels, applied.Status.Conditions, claimed)
	}

	// Two conditions of one type.
	var want string
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fs = getFS(t, fc, "mine")
		n := len(fs.Status.Conditions)
		want = fmt.Sprintf(`FlowSchema.flowcontrol.apiserver.k8s.io "mine" is invalid: status.conditions[%d].type: Duplicate value: %q`, n, fs.Status.Conditions[0].Type)
		fs.Status.Conditions = append(fs.Status.Conditions, fs.Status.Conditions[0])
		_, err = fc.FlowSchemas().UpdateStatus(ctx, fs, metav1.UpdateOptions{})
		return err
	})
	assertCauses(t, err, want, fmt.Sprintf("status.conditions[%d].type", len(fs.Status.Conditions)-1))
}

func hasCondition(fs *flowcontrolv1.FlowSchema, condition string) bool {
	return slices.ContainsFunc(fs.Status.Conditions, func(c flowcontrolv1.FlowSchemaCondition) bool {
		return string(c.Type) == condition
	})
}

// assertCauses checks a 422: its message (unless want is "") and the
// fields of its causes, in order.
func assertCauses(t *testing.T, err error, want string, fields ...string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want 422 Invalid", err)
	}
	status := err.(apierrors.APIStatus).Status()
	if want != "" && status.Message != want {
		t.Errorf("message:\n%s\nwant:\n%s", status.Message, want)
	}
	var got []string
	for _, c := range status.Details.Causes {
		got = append(got, c.Field)
	}
	if !slices.Equal(got, fields) {
		t.Errorf("causes at %v, want %v", got, fields)
	}
}

func userSchema(name string) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"},
		MatchingPrecedence:         5000,
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "someone"}}},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/version"}}},
		}},
	}}
}

func int32p(i int32) *int32 { return &i }

// words joins the words of s with single spaces, so that kubectl's column
// widths do not matter.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func getFS(t *testing.T, fc flowcontrolclient.FlowcontrolV1Interface, name string) *flowcontrolv1.FlowSchema {
	t.Helper()
	fs, err := fc.FlowSchemas().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("flow schema %s: %v", name, err)
	}
	return fs
}

func getPL(t *testing.T, fc flowcontrolclient.FlowcontrolV1Interface, name string) *flowcontrolv1.PriorityLevelConfiguration {
	t.Helper()
	pl, err := fc.PriorityLevelConfigurations().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("priority level %s: %v", name, err)
	}
	return pl
}

func mustCreateFS(t *testing.T, fc flowcontrolclient.FlowcontrolV1Interface, fs *flowcontrolv1.FlowSchema) {
	t.Helper()
	if _, err := fc.FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s: %v", fs.Name, err)
	}
}

// updateFS changes a flow schema, again on conflicts: the config
// consumer writes conditions at any time.
func updateFS(t *testing.T, fc flowcontrolclient.FlowcontrolV1Interface, name string, change func(*flowcontrolv1.FlowSchema)) *flowcontrolv1.FlowSchema {
	t.Helper()
	var out *flowcontrolv1.FlowSchema
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fs := getFS(t, fc, name)
		change(fs)
		var err error
		out, err = fc.FlowSchemas().Update(ctx, fs, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update %s: %v", name, err)
	}
	return out
}

// updatePL changes a priority level, again on conflicts.
func updatePL(t *testing.T, fc flowcontrolclient.FlowcontrolV1Interface, name string, change func(*flowcontrolv1.PriorityLevelConfiguration)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pl := getPL(t, fc, name)
		change(pl)
		_, err := fc.PriorityLevelConfigurations().Update(ctx, pl, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update %s: %v", name, err)
	}
}
