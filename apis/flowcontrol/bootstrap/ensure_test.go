package bootstrap

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

const annotation = flowcontrolv1.AutoUpdateAnnotationKey

// The rules of kube's ensurer (k8s.io/kubernetes pkg/registry/flowcontrol/
// ensurer), case by case.
func TestReviseFlowSchema(t *testing.T) {
	boot := func() *flowcontrolv1.FlowSchema { return SuggestedFlowSchemas()[0] }
	changed := func(annotations map[string]string, generation int64) *flowcontrolv1.FlowSchema {
		fs := boot()
		fs.Annotations, fs.Generation = annotations, generation
		fs.Spec.MatchingPrecedence = 7
		return fs
	}
	tests := []struct {
		name       string
		current    *flowcontrolv1.FlowSchema
		mandatory  bool
		wantUpdate bool
		wantSpec   bool   // the revised spec is the bootstrap one
		wantAnno   string // the revised annotation
	}{
		{name: "up to date", current: changed(map[string]string{annotation: "true"}, 1), wantUpdate: true, wantSpec: true, wantAnno: "true"},
		{name: "suggested, annotation true", current: changed(map[string]string{annotation: "true"}, 5), wantUpdate: true, wantSpec: true, wantAnno: "true"},
		{name: "suggested, annotation false", current: changed(map[string]string{annotation: "false"}, 1)},
		{name: "suggested, annotation False", current: changed(map[string]string{annotation: "False"}, 1)},
		{name: "suggested, no annotation, changed by a user", current: changed(nil, 2), wantUpdate: true, wantAnno: "false"},
		{name: "suggested, no annotation, never changed", current: changed(nil, 1), wantUpdate: true, wantSpec: true, wantAnno: "true"},
		{name: "suggested, bad annotation, changed", current: changed(map[string]string{annotation: "yes"}, 2), wantUpdate: true, wantAnno: "false"},
		{name: "suggested, annotation 1", current: changed(map[string]string{annotation: "1"}, 3), wantUpdate: true, wantSpec: true, wantAnno: "1"},
		{name: "mandatory, annotation false", current: changed(map[string]string{annotation: "false"}, 4), mandatory: true, wantUpdate: true, wantSpec: true, wantAnno: "true"},
		{name: "mandatory, no annotation", current: changed(nil, 4), mandatory: true, wantUpdate: true, wantSpec: true, wantAnno: "true"},
	}
	tests[0].current.Spec = boot().Spec
	tests[0].wantUpdate, tests[0].wantSpec = false, false
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.current.DeepCopy()
			revised, ok := revise(schemaLocalOps(), tt.current, boot(), tt.mandatory)
			if !apiequality.Semantic.DeepEqual(before, tt.current) {
				t.Error("revise changed current")
			}
			if ok != tt.wantUpdate {
				t.Fatalf("update = %v, want %v", ok, tt.wantUpdate)
			}
			if !ok {
				return
			}
			if got := apiequality.Semantic.DeepEqual(revised.Spec, boot().Spec); got != tt.wantSpec {
				t.Errorf("bootstrap spec = %v, want %v", got, tt.wantSpec)
			}
			if !tt.wantSpec && revised.Spec.MatchingPrecedence != 7 {
				t.Errorf("user's spec lost: %+v", revised.Spec)
			}
			if got := revised.Annotations[annotation]; got != tt.wantAnno {
				t.Errorf("annotation = %q, want %q", got, tt.wantAnno)
			}
		})
	}
}

// The exempt level's spec.exempt numbers are the administrator's.
func TestReviseExemptLevel(t *testing.T) {
	var boot *flowcontrolv1.PriorityLevelConfiguration
	for _, pl := range MandatoryPriorityLevelConfigurations() {
		if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			boot = pl
		}
	}
	tuned := boot.DeepCopy()
	*tuned.Spec.Exempt.NominalConcurrencyShares, *tuned.Spec.Exempt.LendablePercent = 10, 20
	if _, ok := revise(levelLocalOps(), tuned, boot, true); ok {
		t.Error("tuned exempt level revised")
	}
	limited := boot.DeepCopy()
	limited.Spec = flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited}
	revised, ok := revise(levelLocalOps(), limited, boot, true)
	if !ok || !apiequality.Semantic.DeepEqual(revised.Spec, boot.Spec) {
		t.Errorf("broken exempt level not restored: %v %+v", ok, revised)
	}
}
