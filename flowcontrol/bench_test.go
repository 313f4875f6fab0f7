package flowcontrol

import (
	"context"
	"testing"
	"time"

	"github.com/capstan-io/capstan/apis/flowcontrol/bootstrap"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

// BenchmarkStartFinish is the cost APF adds to one request: classified
// by kube's suggested schemas into global-default (a queuing level, so
// the flow is hashed and shuffle-sharded), admitted at once, finished.
func BenchmarkStartFinish(b *testing.B) {
	c := NewController(Config{})
	c.digest(append(bootstrap.MandatoryPriorityLevelConfigurations(), bootstrap.SuggestedPriorityLevelConfigurations()...),
		append(bootstrap.MandatoryFlowSchemas(), bootstrap.SuggestedFlowSchemas()...))
	d := Digest{Info: &request.Info{IsResourceRequest: true, Verb: "get", APIVersion: "v1", Resource: "configmaps", Namespace: "default", Name: "x"},
		User: &authn.User{Name: "alice", Groups: []string{authn.AllAuthenticated}}}
	ctx := context.Background()
	a := c.Start(ctx, time.Now(), d, "")
	a.Finish()
	if a.PriorityLevel.Name != "global-default" {
		b.Fatalf("classified into %s", a.PriorityLevel.Name)
	}
	b.ReportAllocs()
	for b.Loop() {
		a := c.Start(ctx, time.Now(), d, "")
		a.Finish()
	}
}
