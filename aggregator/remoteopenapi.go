package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/transport"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/capstan-io/capstan/openapi"
)

// v3Prefix and v2Prefix start references in the two forms.
const (
	v3Prefix = "#/components/schemas/"
	v2Prefix = "#/definitions/"
	// maxInline bounds how deep an extension server's own definitions are
	// inlined into its kinds' (a self-referring type stops there).
	maxInline = 16
)

// remoteOpenAPI publishes the kinds of available remote APIServices in the
// chain's OpenAPI documents (/openapi/v2, /openapi/v3), from the OpenAPI v3
// document of their group version on their servers, so that kubectl
// explain and client-side validation know them. Kube's own types the
// kinds refer to (ObjectMeta) stay references; the server's other types
// are inlined (its kinds are published under kube's names for kinds
// without a Go type here, which references between them would not find).
type remoteOpenAPI struct {
	catalog *openapi.DynamicCatalog // nil: the chain publishes no OpenAPI

	mu        sync.Mutex        // guards published
	published map[string]string // APIService name -> the document's ETag or body it was made from
}

func newRemoteOpenAPI(c openapi.Catalog) *remoteOpenAPI {
	return &remoteOpenAPI{catalog: openapi.Dynamic(c), published: map[string]string{}}
}

func ownerOf(svc *apiregv1.APIService) string { return "apiservice/" + svc.Name }

// drop withdraws svc's kinds.
func (o *remoteOpenAPI) drop(svc *apiregv1.APIService) {
	if o == nil || o.catalog == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.published[svc.Name]; ok {
		o.catalog.Remove(ownerOf(svc))
		delete(o.published, svc.Name)
	}
}

// update fetches svc's document through client and publishes its kinds
// when the document changed.
func (o *remoteOpenAPI) update(ctx context.Context, svc *apiregv1.APIService, client *http.Client, base string) error {
	if o == nil || o.catalog == nil {
		return nil
	}
	gv := schema.GroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version}
	body, err := fetch(ctx, client, base+"/openapi/v3/apis/"+gv.Group+"/"+gv.Version)
	if err != nil {
		return err
	}
	o.mu.Lock()
	same := o.published[svc.Name] == string(body)
	o.mu.Unlock()
	if same {
		return nil
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("OpenAPI v3 document of %s: %w", gv, err)
	}
	kinds := kindDefinitions(&doc, gv)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.catalog.Set(ownerOf(svc), kinds)
	o.published[svc.Name] = string(body)
	return nil
}

func fetch(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	transport.SetAuthProxyHeaders(req, "system:kube-aggregator", "", []string{"system:masters"}, nil)
	req.Header.Set("Accept", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return io.ReadAll(io.LimitReader(res.Body, 64<<20))
}

// kindDefinitions are the kinds of gv that doc defines (marked with
// x-kubernetes-group-version-kind), their server's own types inlined.
func kindDefinitions(doc *spec3.OpenAPI, gv schema.GroupVersion) []openapi.KindDefinition {
	if doc.Components == nil {
		return nil
	}
	schemas := doc.Components.Schemas
	var out []openapi.KindDefinition
	for _, s := range schemas {
		for _, gvk := range gvksOf(s) {
			if gvk.GroupVersion() != gv {
				continue
			}
			deps := map[string]bool{}
			v3 := inline(*s, schemas, deps, 0)
			k := openapi.KindDefinition{GVK: gvk, V3: v3, V2: rewriteRefs(v3, v3Prefix, v2Prefix)}
			for d := range deps {
				k.Dependencies = append(k.Dependencies, d)
			}
			out = append(out, k)
		}
	}
	return out
}

func gvksOf(s *spec.Schema) []schema.GroupVersionKind {
	list, _ := s.Extensions["x-kubernetes-group-version-kind"].([]any)
	var out []schema.GroupVersionKind
	for _, item := range list {
		m, _ := item.(map[string]any)
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		if v != "" && k != "" {
			out = append(out, schema.GroupVersionKind{Group: g, Version: v, Kind: k})
		}
	}
	return out
}

// inline replaces references to the server's own types by the types, and
// records the references to kube's in deps.
func inline(s spec.Schema, schemas map[string]*spec.Schema, deps map[string]bool, depth int) spec.Schema {
	w := schemamutation.Walker{
		SchemaCallback: func(in *spec.Schema) *spec.Schema {
			name, ok := strings.CutPrefix(in.Ref.String(), v3Prefix)
			if !ok {
				return in
			}
			target := schemas[name]
			if kubeType(name) || target == nil || depth >= maxInline {
				deps[name] = true
				return in
			}
			out := inline(*target, schemas, deps, depth+1)
			if in.Description != "" {
				out.Description = in.Description
			}
			return &out
		},
		RefCallback: schemamutation.RefCallbackNoop,
	}
	return *w.WalkSchema(&s)
}

// kubeType tells the definitions of apimachinery and k8s.io/api, which the
// chain's documents hold; an extension server's own types are named
// io.k8s.<its module> too, and are not among them.
func kubeType(name string) bool {
	return strings.HasPrefix(name, "io.k8s.apimachinery.") || strings.HasPrefix(name, "io.k8s.api.")
}

// rewriteRefs is s with its references moved from one prefix to another.
func rewriteRefs(s spec.Schema, from, to string) spec.Schema {
	w := schemamutation.Walker{
		SchemaCallback: schemamutation.SchemaCallBackNoop,
		RefCallback: func(r *spec.Ref) *spec.Ref {
			if name, ok := strings.CutPrefix(r.String(), from); ok {
				ref := spec.MustCreateRef(to + name)
				return &ref
			}
			return r
		},
	}
	return *w.WalkSchema(&s)
}
