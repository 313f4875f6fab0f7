package openapi

import (
	"reflect"
	"testing"

	"k8s.io/kube-openapi/pkg/common"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/openapi/generated"
)

func sameMap(a, b map[string]common.OpenAPIDefinition) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// Definitions made for one use (the type converter's, at start) are not
// kept; once a document made them, one use gets the kept ones.
func TestDefinitionsForOneUseAreNotKept(t *testing.T) {
	c := NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions)
	first := DefinitionsForOneUse(c, V3)
	if _, ok := first["io.k8s.api.core.v1.ConfigMap"]; !ok {
		t.Fatalf("one-use definitions lack ConfigMap (%d definitions)", len(first))
	}
	if second := DefinitionsForOneUse(c, V3); sameMap(first, second) {
		t.Fatal("the catalog kept the definitions made for one use")
	}
	kept := c.Definitions(V3)
	if sameMap(first, kept) {
		t.Fatal("Definitions returned the one-use map")
	}
	if again := DefinitionsForOneUse(c, V3); !sameMap(kept, again) {
		t.Fatal("one use made new definitions although the catalog keeps some")
	}
	if !sameMap(kept, c.Definitions(V3)) {
		t.Fatal("Definitions made its map again")
	}
}

// The chain's catalog (static and dynamic kinds) gives one use both.
func TestDefinitionsForOneUseOfUnion(t *testing.T) {
	dyn := NewDynamicCatalog()
	dyn.Set("crontabs.stable.example.com", cronTabKinds("cronSpec"))
	c := WithDynamic(NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions), dyn)
	defs := DefinitionsForOneUse(c, V3)
	for _, name := range []string{"io.k8s.api.core.v1.ConfigMap", DefinitionName(cronTabKinds()[0].GVK)} {
		if _, ok := defs[name]; !ok {
			t.Errorf("one-use definitions lack %s", name)
		}
	}
}
