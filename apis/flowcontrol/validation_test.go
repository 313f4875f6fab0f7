package flowcontrol

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/apis/flowcontrol/bootstrap"
	"github.com/capstan-io/capstan/registry"
)

// recordedCase is one create sent to kube-apiserver v1.37.2 and its answer
// (testdata/invalid.yaml): 422 with causes, or 201/409 (valid; 409 when
// the name was taken by a bootstrap object).
type recordedCase struct {
	Name     string          `json:"name"`
	Resource string          `json:"resource"`
	Code     int             `json:"code"`
	Object   json.RawMessage `json:"object"`
	Causes   []string        `json:"causes"`
}

func TestValidationMatchesKube(t *testing.T) {
	data, err := os.ReadFile("testdata/invalid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []recordedCase
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d recorded cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Resource+"/"+c.Name, func(t *testing.T) {
			var obj runtime.Object
			var strategy registry.Strategy
			switch c.Resource {
			case "flowschemas":
				obj, strategy = &flowcontrolv1.FlowSchema{}, FlowSchemaStrategy{}
			case "prioritylevelconfigurations":
				obj, strategy = &flowcontrolv1.PriorityLevelConfiguration{}, PriorityLevelStrategy{}
			default:
				t.Fatalf("resource %q", c.Resource)
			}
			if err := json.Unmarshal(c.Object, obj); err != nil {
				t.Fatal(err)
			}
			strategy.(registry.Defaulter).Default(obj)
			strategy.PrepareForCreate(context.Background(), obj)
			got := messages(strategy.Validate(context.Background(), obj))
			want := c.Causes
			if c.Code != 422 {
				want = nil
			}
			if !slices.Equal(got, want) {
				t.Errorf("errors:\n%s\nkube's:\n%s", lines(got), lines(want))
			}
		})
	}
}

// An update skips the declarative checks of parts that did not change, as
// kube's ratcheting does, but not the imperative ones.
func TestPriorityLevelUpdateRatchets(t *testing.T) {
	shares := int32(-1)
	old := &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited, Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{},
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: &shares,
			LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
	old.Name = "p"
	updated := old.DeepCopy()
	want := []string{"spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer"}
	if got := messages(PriorityLevelStrategy{}.ValidateUpdate(context.Background(), updated, old)); !slices.Equal(got, want) {
		t.Errorf("unchanged spec: %v, want %v", got, want)
	}
	updated.Spec.Limited.LimitResponse.Queuing = &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 1}
	want = append(want, "spec.limited.limitResponse.queuing: Forbidden")
	if got := messages(PriorityLevelStrategy{}.ValidateUpdate(context.Background(), updated, old)); !slices.Equal(got, want) {
		t.Errorf("new queuing: %v, want %v", got, want)
	}
}

func TestBootstrapObjectsAreValidAndDefaulted(t *testing.T) {
	for _, pl := range append(bootstrap.MandatoryPriorityLevelConfigurations(), bootstrap.SuggestedPriorityLevelConfigurations()...) {
		defaulted := pl.DeepCopy()
		DefaultPriorityLevel(defaulted)
		if errs := ValidatePriorityLevel(defaulted, nil); len(errs) > 0 {
			t.Errorf("%s: %v", pl.Name, errs)
		}
		if !equalJSON(t, pl, defaulted) {
			t.Errorf("%s: defaulting changes it", pl.Name)
		}
	}
	for _, fs := range append(bootstrap.MandatoryFlowSchemas(), bootstrap.SuggestedFlowSchemas()...) {
		defaulted := fs.DeepCopy()
		DefaultFlowSchema(defaulted)
		if errs := ValidateFlowSchema(defaulted); len(errs) > 0 {
			t.Errorf("%s: %v", fs.Name, errs)
		}
		if !equalJSON(t, fs, defaulted) {
			t.Errorf("%s: defaulting changes it", fs.Name)
		}
	}
}

func TestDefaults(t *testing.T) {
	pl := &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{
			Queuing: &flowcontrolv1.QueuingConfiguration{}}},
		Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{}}}
	DefaultPriorityLevel(pl)
	l, q, e := pl.Spec.Limited, pl.Spec.Limited.LimitResponse.Queuing, pl.Spec.Exempt
	if *l.NominalConcurrencyShares != 30 || *l.LendablePercent != 0 || l.BorrowingLimitPercent != nil {
		t.Errorf("limited defaults: %+v", l)
	}
	if q.Queues != 64 || q.HandSize != 8 || q.QueueLengthLimit != 50 {
		t.Errorf("queuing defaults: %+v", q)
	}
	if *e.NominalConcurrencyShares != 0 || *e.LendablePercent != 0 {
		t.Errorf("exempt defaults: %+v", e)
	}
	fs := &flowcontrolv1.FlowSchema{}
	DefaultFlowSchema(fs)
	if fs.Spec.MatchingPrecedence != 1000 || fs.Spec.DistinguisherMethod != nil {
		t.Errorf("flow schema defaults: %+v", fs.Spec)
	}
}

func TestStatusUpdateKeepsSpecAndMetadata(t *testing.T) {
	old := &flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: 5}}
	old.Name, old.Labels, old.Generation = "fs", map[string]string{"a": "b"}, 3
	updated := old.DeepCopy()
	updated.Spec.MatchingPrecedence = 6
	updated.Labels = nil
	updated.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling"}, {Type: "Dangling"}, {}}
	FlowSchemaStatusStrategy{}.PrepareForUpdate(context.Background(), updated, old)
	if updated.Spec.MatchingPrecedence != 5 || updated.Labels["a"] != "b" || updated.Generation != 3 {
		t.Errorf("status update changed spec or metadata: %+v", updated)
	}
	want := []string{`status.conditions[1].type: Duplicate value: "Dangling"`, "status.conditions[2].type: Required value"}
	if got := messages(FlowSchemaStatusStrategy{}.ValidateUpdate(context.Background(), updated, old)); !slices.Equal(got, want) {
		t.Errorf("status errors %v, want %v", got, want)
	}
}

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func lines(s []string) string {
	out := ""
	for _, l := range s {
		out += "  " + l + "\n"
	}
	return out
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}
