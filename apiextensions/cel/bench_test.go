package cel

import (
	"context"
	"testing"
)

// BenchmarkValidate measures one create of a small custom resource with a
// few rules, the validator compiled and shared.
func BenchmarkValidate(b *testing.B) {
	s := root(rules(object(map[string]S{
		"minReplicas": intg(),
		"replicas":    intg(),
		"name":        rules(strMax(63), rule("!format.dns1123Label().validate(self).hasValue()")),
		"ports": mapList(rules(object(map[string]S{"name": strMax(15), "port": intg()}),
			ruleMsg("self.port > 0 && self.port < 65536", "bad port"), rule("self.port == oldSelf.port")), "name"),
	}), rule("self.minReplicas <= self.replicas")))
	v := NewValidator(s, true, PerCallLimit)
	o := obj(b, `{"apiVersion":"example.com/v1","kind":"W","metadata":{"name":"w"},"spec":{"minReplicas":1,"replicas":3,"name":"web","ports":[{"name":"http","port":80},{"name":"https","port":443}]}}`)
	old := obj(b, `{"apiVersion":"example.com/v1","kind":"W","metadata":{"name":"w"},"spec":{"minReplicas":1,"replicas":2,"name":"web","ports":[{"name":"http","port":80}]}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if errs, _ := v.Validate(ctx, nil, o, old, RuntimeCELCostBudget); len(errs) != 0 {
			b.Fatal(errs)
		}
	}
}
