package schema

import (
	"sync"
	"testing"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
)

// A served version's Structural and Validator are shared by all requests:
// everything but PruneDefaults reads them only (run with -race).
func TestSharedSchemaIsOnlyRead(t *testing.T) {
	s := structural(t, crontabSchema)
	v := NewValidator(s)
	gvk := runtimeschema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "CronTab"}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				obj := object(t, `{apiVersion: example.com/v1, kind: CronTab, spec: {image: toolong, x: 1, ports: [{port: 1}], template: {apiVersion: v1, kind: Pod, metadata: {bogus: 1}}}}`)
				old := object(t, `{spec: {image: toolong, ports: [{port: 1}]}}`)
				Prune(obj, s, true)
				PruneNonNullableNullsWithoutDefaults(obj, s)
				CoerceEmbeddedMeta(nil, obj, s, false, CoerceOptions{ReturnUnknownFieldPaths: true})
				Default(obj, s)
				v.ValidateObject(obj, nil)
				v.ValidateObjectUpdate(obj, old, nil)
				KindSchema(s, gvk, j%2 == 0, RefPrefix(j%2 == 0)+ObjectMetaDefinition)
				ValidateStructural(nil, s)
			}
		}()
	}
	wg.Wait()
}
