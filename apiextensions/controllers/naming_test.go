package controllers

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// testCRD is a CRD of group example.com named after its plural.
func testCRD(plural string) *apiextv1.CustomResourceDefinition {
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.com", UID: types.UID("uid-" + plural), ResourceVersion: "10"},
		Spec:       apiextv1.CustomResourceDefinitionSpec{Group: "example.com"},
	}
}

func crdNames(plural, singular, kind, listKind string, shortNames ...string) apiextv1.CustomResourceDefinitionNames {
	return apiextv1.CustomResourceDefinitionNames{Plural: plural, Singular: singular, Kind: kind, ListKind: listKind, ShortNames: shortNames}
}

func withSpec(crd *apiextv1.CustomResourceDefinition, n apiextv1.CustomResourceDefinitionNames) *apiextv1.CustomResourceDefinition {
	crd.Spec.Names = n
	return crd
}

func withAccepted(crd *apiextv1.CustomResourceDefinition, n apiextv1.CustomResourceDefinitionNames) *apiextv1.CustomResourceDefinition {
	crd.Status.AcceptedNames = n
	return crd
}

func withCondition(crd *apiextv1.CustomResourceDefinition, t apiextv1.CustomResourceDefinitionConditionType, s apiextv1.ConditionStatus, reason, msg string) *apiextv1.CustomResourceDefinition {
	crd.Status.Conditions = append(crd.Status.Conditions, apiextv1.CustomResourceDefinitionCondition{Type: t, Status: s, Reason: reason, Message: msg})
	return crd
}

func namesAccepted(s apiextv1.ConditionStatus, reason, msg string) apiextv1.CustomResourceDefinitionCondition {
	return apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.NamesAccepted, Status: s, Reason: reason, Message: msg}
}

func established(s apiextv1.ConditionStatus, reason, msg string) apiextv1.CustomResourceDefinitionCondition {
	return apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Established, Status: s, Reason: reason, Message: msg}
}

var (
	noConflicts     = namesAccepted(apiextv1.ConditionTrue, "NoConflicts", "no conflicts found")
	installing      = established(apiextv1.ConditionFalse, "Installing", "the initial names have been accepted")
	notAccepted     = established(apiextv1.ConditionFalse, "NotAccepted", "not all names are accepted")
	establishedTrue = established(apiextv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted")
)

// namingWith returns a naming controller without client whose informer
// holds crds.
func namingWith(t *testing.T, crds ...*apiextv1.CustomResourceDefinition) *namingController {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{GroupIndex: IndexByGroup})
	for _, crd := range crds {
		if err := indexer.Add(crd); err != nil {
			t.Fatal(err)
		}
	}
	return &namingController{indexer: indexer, written: map[string]*apiextv1.CustomResourceDefinition{}}
}

func TestAcceptNames(t *testing.T) {
	foos := crdNames("foos", "foo", "Foo", "FooList", "f", "fo")
	tests := []struct {
		name   string
		in     *apiextv1.CustomResourceDefinition
		others []*apiextv1.CustomResourceDefinition
		want   apiextv1.CustomResourceDefinitionNames
		cond   apiextv1.CustomResourceDefinitionCondition
		est    apiextv1.CustomResourceDefinitionCondition
	}{{
		name: "alone in its group",
		in:   withSpec(testCRD("foos"), foos),
		want: foos, cond: noConflicts, est: installing,
	}, {
		name: "same names in another group",
		in:   withSpec(testCRD("foos"), foos),
		others: []*apiextv1.CustomResourceDefinition{func() *apiextv1.CustomResourceDefinition {
			c := withAccepted(testCRD("foos"), foos)
			c.Name, c.Spec.Group = "foos.other.io", "other.io"
			return c
		}()},
		want: foos, cond: noConflicts, est: installing,
	}, {
		name:   "plural taken as another's singular",
		in:     withSpec(testCRD("foos"), foos),
		others: []*apiextv1.CustomResourceDefinition{withAccepted(testCRD("bars"), crdNames("bars", "foos", "Bar", "BarList"))},
		want:   crdNames("", "foo", "Foo", "FooList", "f", "fo"),
		cond:   namesAccepted(apiextv1.ConditionFalse, "PluralConflict", `"foos" is already in use`),
		est:    notAccepted,
	}, {
		name:   "singular taken as another's short name",
		in:     withSpec(testCRD("foos"), foos),
		others: []*apiextv1.CustomResourceDefinition{withAccepted(testCRD("bars"), crdNames("bars", "bar", "Bar", "BarList", "foo"))},
		want:   crdNames("foos", "", "Foo", "FooList", "f", "fo"),
		cond:   namesAccepted(apiextv1.ConditionFalse, "SingularConflict", `"foo" is already in use`),
		est:    notAccepted,
	}, {
		name:   "one short name taken: none granted",
		in:     withSpec(testCRD("foos"), foos),
		others: []*apiextv1.CustomResourceDefinition{withAccepted(testCRD("bars"), crdNames("bars", "bar", "Bar", "BarList", "fo"))},
		want:   crdNames("foos", "foo", "Foo", "FooList"),
		cond:   namesAccepted(apiextv1.ConditionFalse, "ShortNamesConflict", `"fo" is already in use`),
		est:    notAccepted,
	}, {
		name:   "two short names taken",
		in:     withSpec(testCRD("foos"), foos),
		others: []*apiextv1.CustomResourceDefinition{withAccepted(testCRD("bars"), crdNames("bars", "bar", "Bar", "BarList", "fo", "f"))},
		want:   crdNames("foos", "foo", "Foo", "FooList"),
		cond:   namesAccepted(apiextv1.ConditionFalse, "ShortNamesConflict", `["f" is already in use, "fo" is already in use]`),
		est:    notAccepted,
	}, {
		name:   "kind taken as another's list kind",
		in:     withSpec(testCRD("foos"), foos),
		others: []*apiextv1.CustomResourceDefinition{withAccepted(testCRD("bars"), crdNames("bars", "bar", "Bar", "Foo"))},
		want:   crdNames("foos", "foo", "", "FooList", "f", "fo"),
		cond:   namesAccepted(apiextv1.ConditionFalse, "KindConflict", `"Foo" is already in use`),
		est:    notAccepted,
	}, {
		name:   "list kind taken as another's kind",
		in:     withSpec(testCRD("foos"), foos),
		others: []*apiextv1.CustomResourceDefinition{withAccepted(testCRD("bars"), crdNames("bars", "bar", "FooList", "BarList"))},
		want:   crdNames("foos", "foo", "Foo", "", "f", "fo"),
		cond:   namesAccepted(apiextv1.ConditionFalse, "ListKindConflict", `"FooList" is already in use`),
		est:    notAccepted,
	}, {
		name:   "resource names and kinds do not clash",
		in:     withSpec(testCRD("foos"), foos),
		others: []*apiextv1.CustomResourceDefinition{withAccepted(testCRD("bars"), crdNames("bars", "Foo", "foos", "BarList"))},
		want:   foos, cond: noConflicts, est: installing,
	}, {
		name:   "several conflicts: the last reported, the rest granted",
		in:     withSpec(testCRD("foos"), foos),
		others: []*apiextv1.CustomResourceDefinition{withAccepted(testCRD("bars"), crdNames("bars", "foos", "FooList", "BarList"))},
		want:   crdNames("", "foo", "Foo", "", "f", "fo"),
		cond:   namesAccepted(apiextv1.ConditionFalse, "ListKindConflict", `"FooList" is already in use`),
		est:    notAccepted,
	}, {
		name: "own accepted names are no conflict",
		in:   withCondition(withAccepted(withSpec(testCRD("foos"), crdNames("foos", "foo", "Foo", "FooList", "f")), crdNames("foos", "foo", "Foo", "FooList")), apiextv1.Established, apiextv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted"),
		want: crdNames("foos", "foo", "Foo", "FooList", "f"), cond: noConflicts, est: establishedTrue,
	}, {
		name: "dropping a short name",
		in:   withAccepted(withSpec(testCRD("foos"), crdNames("foos", "foo", "Foo", "FooList", "f")), foos),
		want: crdNames("foos", "foo", "Foo", "FooList", "f"), cond: noConflicts, est: installing,
	}, {
		name:   "accepted names kept on a conflicting rename",
		in:     withCondition(withAccepted(withSpec(testCRD("foos"), crdNames("foos", "foo", "Foo", "FooList", "b")), foos), apiextv1.Established, apiextv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted"),
		others: []*apiextv1.CustomResourceDefinition{withAccepted(testCRD("bars"), crdNames("bars", "bar", "Bar", "BarList", "b"))},
		want:   foos,
		cond:   namesAccepted(apiextv1.ConditionFalse, "ShortNamesConflict", `"b" is already in use`),
		est:    establishedTrue,
	}, {
		name:   "established False kept while names conflict",
		in:     withCondition(withSpec(testCRD("foos"), foos), apiextv1.Established, apiextv1.ConditionFalse, "Whatever", "kept"),
		others: []*apiextv1.CustomResourceDefinition{withAccepted(testCRD("bars"), crdNames("bars", "foos", "Bar", "BarList"))},
		want:   crdNames("", "foo", "Foo", "FooList", "f", "fo"),
		cond:   namesAccepted(apiextv1.ConditionFalse, "PluralConflict", `"foos" is already in use`),
		est:    established(apiextv1.ConditionFalse, "Whatever", "kept"),
	}, {
		name: "established False becomes Installing once names are accepted",
		in:   withCondition(withSpec(testCRD("foos"), foos), apiextv1.Established, apiextv1.ConditionFalse, "NotAccepted", "not all names are accepted"),
		want: foos, cond: noConflicts, est: installing,
	}, {
		name: "categories follow the spec",
		in: func() *apiextv1.CustomResourceDefinition {
			c := withAccepted(withSpec(testCRD("foos"), foos), foos)
			c.Spec.Names.Categories = []string{"all"}
			return c
		}(),
		want: func() apiextv1.CustomResourceDefinitionNames { n := foos; n.Categories = []string{"all"}; return n }(),
		cond: noConflicts, est: installing,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := namingWith(t, append([]*apiextv1.CustomResourceDefinition{tt.in}, tt.others...)...)
			resources, kinds := c.usedNames(tt.in.Spec.Group)
			names, cond, est := acceptNames(tt.in, resources, kinds)
			if !reflect.DeepEqual(names, tt.want) {
				t.Errorf("names = %+v, want %+v", names, tt.want)
			}
			if cond != tt.cond {
				t.Errorf("NamesAccepted = %+v, want %+v", cond, tt.cond)
			}
			if !sameCondition(&est, &tt.est) {
				t.Errorf("Established = %+v, want %+v", est, tt.est)
			}
		})
	}
}

// TestUsedNamesSeesOwnWrites checks that names the controller just granted
// count as used before the informer shows them, and only then.
func TestUsedNamesSeesOwnWrites(t *testing.T) {
	bars := testCRD("bars")
	c := namingWith(t, bars)

	granted := withAccepted(bars.DeepCopy(), crdNames("bars", "bar", "Bar", "BarList"))
	granted.ResourceVersion = "11"
	c.written[bars.Name] = granted
	if resources, kinds := c.usedNames("example.com"); !resources.Has("bars") || !kinds.Has("BarList") {
		t.Errorf("written names not used: %v %v", resources.UnsortedList(), kinds.UnsortedList())
	}

	// An older write is ignored, as is one of a CRD recreated since.
	granted.ResourceVersion = "9"
	if resources, _ := c.usedNames("example.com"); resources.Has("bars") {
		t.Error("older write used")
	}
	granted.ResourceVersion, granted.UID = "11", "other"
	if resources, _ := c.usedNames("example.com"); resources.Has("bars") {
		t.Error("write of another uid used")
	}

	// Once the informer catches up, the write is forgotten.
	granted.UID = bars.UID
	c.queueLoop = newQueueLoop("test", discardLogger())
	defer c.queue.ShutDown()
	caughtUp := granted.DeepCopy()
	c.observe(caughtUp, false)
	if _, ok := c.written[bars.Name]; ok {
		t.Error("write kept after the informer showed it")
	}
}

func TestRequeueGroup(t *testing.T) {
	other := testCRD("bazs")
	other.Name, other.Spec.Group = "bazs.other.io", "other.io"
	c := namingWith(t, testCRD("foos"), testCRD("bars"), other)
	c.queueLoop = newQueueLoop("test", discardLogger())
	defer c.queue.ShutDown()
	c.requeueGroup("example.com", "foos.example.com")
	if n := c.queue.Len(); n != 1 {
		t.Fatalf("queued %d CRDs, want 1", n)
	}
	if got, _ := c.queue.Get(); got != "bars.example.com" {
		t.Errorf("queued %q", got)
	}
}
