package loadtest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestParseHeapProfile(t *testing.T) {
	profile := "heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1\n\n# runtime.MemStats\n# Alloc = 5\n" +
		"# HeapAlloc = 123456\n# HeapSys = 9\n# HeapInuse = 654321\n# HeapIdle = 1\n"
	got, err := parseHeapProfile(strings.NewReader(profile))
	if err != nil || got != (HeapStats{HeapInuse: 654321, HeapAlloc: 123456}) {
		t.Errorf("parseHeapProfile = %+v, %v", got, err)
	}
	if _, err := parseHeapProfile(strings.NewReader("heap profile: nothing else\n")); err == nil {
		t.Error("a profile without the runtime's figures parsed")
	}
}

func TestCRDSpecs(t *testing.T) {
	a, b := crdSpecFor("run1", 0, 3), crdSpecFor("run1", 3, 3)
	if a.Group != b.Group || a.Kind == b.Kind || a.Name != "widget0000s.g0000.run1.example.com" {
		t.Errorf("CRDs 0 and 3 of 3 groups: %+v, %+v", a, b)
	}
	if c := crdSpecFor("run1", 3, 0); c.Group == a.Group {
		t.Errorf("without groups, CRD 3 shares CRD 0's group %s", c.Group)
	}
	crd := crdObject(a, "run1")
	if crd.GetName() != a.Name || crd.GetLabels()[crdRunLabel] != "run1" {
		t.Errorf("CRD metadata: %v", crd.Object["metadata"])
	}
	// The objects must be JSON as the API takes it.
	if _, err := json.Marshal(crd.Object); err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	spec, _, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties")
	if len(spec) != 10 {
		t.Errorf("spec has %d fields, want 10", len(spec))
	}
	cr := crObject(a, "ns", "x")
	if cr.GetAPIVersion() != a.Group+"/v1" || cr.GetKind() != a.Kind || cr.GetNamespace() != "ns" {
		t.Errorf("custom resource: %v", cr.Object)
	}
}

func TestEstablishTracker(t *testing.T) {
	tr := newEstablishTracker()
	t0 := time.Now()
	tr.started("a", t0)
	tr.established("a", t0.Add(2*time.Second))
	tr.established("a", t0.Add(5*time.Second)) // seen again: the first time counts
	tr.established("other", t0.Add(time.Second))
	if tr.count() != 1 || !tr.last().Equal(t0.Add(2*time.Second)) {
		t.Errorf("count %d, last %v", tr.count(), tr.last().Sub(t0))
	}
	if op := tr.op(time.Minute); op.Count != 1 || op.MaxMs != 2000 {
		t.Errorf("op = %+v", op)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "NamesAccepted", "status": "True"}, map[string]any{"type": "Established", "status": "True"},
	}}}}
	if !established(u) {
		t.Error("Established=True not seen")
	}
}

func TestCRDSection(t *testing.T) {
	rep := func(name string, served, perCRD float64) *Report {
		return &Report{Server: name, Args: []string{"capstan-load", "--name", name}, Results: []Result{{
			Workload: "crds", Params: map[string]int{"crds": 1000},
			Ops:     []Op{{"create", Summary{Count: 1000, P50Ms: 10, P99Ms: 20, P999Ms: 30}}},
			Metrics: map[string]float64{"servedSeconds": served, "rssPerCRDKiB": perCRD, "heapPerBuiltCRDKiB": -3},
		}}}
	}
	var section bytes.Buffer
	c := Comparison{Kube: rep("kube-apiserver", 100, 1000), Capstan: rep("capstan", 20, 150), Command: "bench/crds.sh"}
	if err := WriteCRDSection(&section, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## 1,000 CRDs", "capstan: 20.0 s (**missed**) and 150 KiB per CRD (met).",
		"| all Established and in discovery (s) ↓ | 100 | 20.0 | **0.20** |",
		"| Go heap per CRD with a CR (KiB) ↓ | -3.00 | -3.00 | – |",
	} {
		if !strings.Contains(section.String(), want) {
			t.Errorf("section lacks %q:\n%s", want, section.String())
		}
	}

	// Spliced in place of the placeholder, then of itself; kept by the
	// document's writer.
	doc := []byte("# B\n\n## crud\n\ntext\n\n" + notMeasured + "## Caveats: what is unfair or doubtful\n\n- x\n")
	once := SpliceCRDSection(doc, section.Bytes())
	if bytes.Contains(once, []byte("Not measured yet")) || !bytes.Contains(once, []byte("## 1,000 CRDs")) ||
		!bytes.Contains(once, []byte("## crud\n\ntext\n\n"+crdsBegin)) || !bytes.HasSuffix(once, []byte(crdsEnd+"\n\n## Caveats: what is unfair or doubtful\n\n- x\n")) {
		t.Errorf("spliced document:\n%s", once)
	}
	newer := bytes.ReplaceAll(section.Bytes(), []byte("## 1,000 CRDs"), []byte("## 1,000 CRDs again"))
	twice := SpliceCRDSection(once, newer)
	if bytes.Count(twice, []byte(crdsBegin)) != 1 || !bytes.Contains(twice, []byte("again")) {
		t.Errorf("spliced again:\n%s", twice)
	}
	if got := CRDSectionOf(twice); !bytes.Equal(got, newer) {
		t.Errorf("CRDSectionOf = %q, want the section", got)
	}
	var full bytes.Buffer
	c.CRDSection = CRDSectionOf(twice)
	if err := WriteMarkdown(&full, Comparison{Kube: testReport("kube", 1, false), Capstan: testReport("capstan", 0.5, false), CRDSection: c.CRDSection}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(full.Bytes(), newer) || bytes.Contains(full.Bytes(), []byte("Not measured yet")) {
		t.Errorf("the document did not keep the CRD section:\n%s", full.String())
	}
}
