package bootstrap

import (
	"os"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/yaml"
)

// The fixtures in testdata/ were recorded from a running kube-apiserver
// v1.37.2 (bench/upstream/run.sh): every FlowSchema and
// PriorityLevelConfiguration it creates at start, with name, annotations and
// spec.

func TestPriorityLevelsEqualKubes(t *testing.T) {
	var want flowcontrolv1.PriorityLevelConfigurationList
	readFixture(t, "testdata/prioritylevelconfigurations.yaml", &want)
	got := map[string]*flowcontrolv1.PriorityLevelConfiguration{}
	for _, pl := range append(MandatoryPriorityLevelConfigurations(), SuggestedPriorityLevelConfigurations()...) {
		if got[pl.Name] != nil {
			t.Errorf("priority level %s appears twice", pl.Name)
		}
		got[pl.Name] = pl
	}
	if len(got) != len(want.Items) {
		t.Errorf("%d priority levels, kube has %d", len(got), len(want.Items))
	}
	for _, w := range want.Items {
		g, ok := got[w.Name]
		if !ok {
			t.Errorf("missing priority level %s", w.Name)
			continue
		}
		if diff := differ(w.ObjectMeta, g.ObjectMeta); diff != "" {
			t.Errorf("metadata of %s (-kube +ours):\n%s", w.Name, diff)
		}
		if diff := differ(w.Spec, g.Spec); diff != "" {
			t.Errorf("spec of %s (-kube +ours):\n%s", w.Name, diff)
		}
	}
}

func TestFlowSchemasEqualKubes(t *testing.T) {
	var want flowcontrolv1.FlowSchemaList
	readFixture(t, "testdata/flowschemas.yaml", &want)
	got := map[string]*flowcontrolv1.FlowSchema{}
	for _, fs := range append(MandatoryFlowSchemas(), SuggestedFlowSchemas()...) {
		if got[fs.Name] != nil {
			t.Errorf("flow schema %s appears twice", fs.Name)
		}
		got[fs.Name] = fs
	}
	if len(got) != len(want.Items) {
		t.Errorf("%d flow schemas, kube has %d", len(got), len(want.Items))
	}
	for _, w := range want.Items {
		g, ok := got[w.Name]
		if !ok {
			t.Errorf("missing flow schema %s", w.Name)
			continue
		}
		if diff := differ(w.ObjectMeta, g.ObjectMeta); diff != "" {
			t.Errorf("metadata of %s (-kube +ours):\n%s", w.Name, diff)
		}
		if diff := differ(w.Spec, g.Spec); diff != "" {
			t.Errorf("spec of %s (-kube +ours):\n%s", w.Name, diff)
		}
	}
}

func TestMandatoryNames(t *testing.T) {
	var levels, schemas []string
	for _, pl := range MandatoryPriorityLevelConfigurations() {
		levels = append(levels, pl.Name)
	}
	for _, fs := range MandatoryFlowSchemas() {
		schemas = append(schemas, fs.Name)
	}
	if diff := differ([]string{"catch-all", "exempt"}, levels); diff != "" {
		t.Errorf("mandatory priority levels:\n%s", diff)
	}
	if diff := differ([]string{"exempt", "catch-all"}, schemas); diff != "" {
		t.Errorf("mandatory flow schemas:\n%s", diff)
	}
}

// A caller may change what it gets without changing what others get.
func TestObjectsAreFresh(t *testing.T) {
	fs := SuggestedFlowSchemas()
	for _, s := range fs {
		for i := range s.Spec.Rules {
			r := &s.Spec.Rules[i]
			for j := range r.Subjects {
				if sa := r.Subjects[j].ServiceAccount; sa != nil {
					sa.Name = "changed"
				}
			}
			for j := range r.ResourceRules {
				r.ResourceRules[j].Verbs[0] = "changed"
			}
		}
		s.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = "false"
	}
	pls := MandatoryPriorityLevelConfigurations()
	*pls[0].Spec.Limited.NominalConcurrencyShares = 99

	for _, s := range append(SuggestedFlowSchemas(), MandatoryFlowSchemas()...) {
		if s.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("%s: annotation changed", s.Name)
		}
		for _, r := range s.Spec.Rules {
			for _, sub := range r.Subjects {
				if sub.ServiceAccount != nil && sub.ServiceAccount.Name == "changed" {
					t.Errorf("%s: service account subject shared", s.Name)
				}
			}
			for _, rr := range r.ResourceRules {
				if rr.Verbs[0] == "changed" {
					t.Errorf("%s: verbs shared", s.Name)
				}
			}
		}
	}
	if got := *MandatoryPriorityLevelConfigurations()[0].Spec.Limited.NominalConcurrencyShares; got != 5 {
		t.Errorf("catch-all shares = %d after a caller's change, want 5", got)
	}
}

func readFixture(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// differ is the diff of want and got, or "" when they are semantically equal.
func differ(want, got any) string {
	if equality.Semantic.DeepEqual(want, got) {
		return ""
	}
	return diff.Diff(want, got)
}
