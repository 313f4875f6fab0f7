package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// docBuilder turns routes into documents with kube-openapi's builders.
type docBuilder struct {
	catalog Catalog
	version string // info.version
}

const bearerToken = "BearerToken"

// swagger builds the swagger 2.0 document of the routes.
func (b *docBuilder) swagger(routes []common.RouteContainer) (*document, error) {
	cfg := &common.Config{
		ProtocolList: []string{"https"},
		Info:         &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: b.version}},
		CommonResponses: map[int]spec.Response{
			http.StatusUnauthorized: {ResponseProps: spec.ResponseProps{Description: "Unauthorized"}},
		},
		GetDefinitions: func(common.ReferenceCallback) map[string]common.OpenAPIDefinition {
			return b.catalog.Definitions(V2)
		},
		GetOperationIDAndTagsFromRoute: operationIDAndTags,
		GetDefinitionName:              func(name string) (string, spec.Extensions) { return name, nil },
		SecurityDefinitions: &spec.SecurityDefinitions{bearerToken: &spec.SecurityScheme{
			SecuritySchemeProps: spec.SecuritySchemeProps{
				Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication",
			},
		}},
		DefaultSecurity: []map[string][]string{{bearerToken: {}}},
	}
	sw, err := builder.BuildOpenAPISpecFromRoutes(routes, cfg)
	if err != nil {
		return nil, fmt.Errorf("building /openapi/v2: %w", err)
	}
	body, err := sw.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding /openapi/v2: %w", err)
	}
	return newDocument(body, protoV2), nil
}

// v3 builds the OpenAPI 3.0 document of one part. gv, when set, is the
// part's group version.
func (b *docBuilder) v3(routes *container, gv *schema.GroupVersion) (*document, error) {
	// Only the definitions of gv's custom kinds, if any, are needed: the
	// parts without a group version document built-in models only.
	defs := b.catalog.Definitions
	if c, ok := b.catalog.(groupVersionCatalog); ok {
		var part schema.GroupVersion
		if gv != nil {
			part = *gv
		}
		gvDefs := c.groupVersionDefinitions(V3, part)
		defs = func(Form) map[string]common.OpenAPIDefinition { return gvDefs }
	}
	cfg := &common.OpenAPIV3Config{
		Info: &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: b.version}},
		CommonResponses: map[int]*spec3.Response{
			http.StatusUnauthorized: {ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}},
		},
		Definitions: defs(V3),
		GetDefinitions: func(common.ReferenceCallback) map[string]common.OpenAPIDefinition {
			return defs(V3)
		},
		GetOperationIDAndTagsFromRoute: operationIDAndTags,
		GetDefinitionName:              func(name string) (string, spec.Extensions) { return name, nil },
		SecuritySchemes: spec3.SecuritySchemes{bearerToken: &spec3.SecurityScheme{
			SecuritySchemeProps: spec3.SecuritySchemeProps{
				Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication",
			},
		}},
	}
	doc, err := builder3.BuildOpenAPISpecFromRoutes([]common.RouteContainer{routes}, cfg)
	if err != nil {
		return nil, fmt.Errorf("building /openapi/v3%s: %w", routes.root, err)
	}
	if gv != nil {
		scopeSharedKinds(doc, *gv)
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding /openapi/v3%s: %w", routes.root, err)
	}
	return newDocument(body, protoV3), nil
}

// sharedKinds are the meta kinds registered in every group version. In a
// group version's document their kinds extension lists only that group
// version and core/v1, as kube's does, rather than every group.
var sharedKinds = map[string]bool{"WatchEvent": true, "DeleteOptions": true}

// scopeSharedKinds narrows the kinds extension of the shared kinds in doc,
// replacing (never modifying) the schemas, which the catalog shares.
func scopeSharedKinds(doc *spec3.OpenAPI, gv schema.GroupVersion) {
	if doc.Components == nil {
		return
	}
	for name, s := range doc.Components.Schemas {
		gvks, ok := s.Extensions[extensionGVK].([]any)
		if !ok || len(gvks) < 2 {
			continue
		}
		if first, _ := gvks[0].(map[string]any); !sharedKinds[fmt.Sprint(first["kind"])] {
			continue
		}
		var kept []any
		for _, item := range gvks {
			m, _ := item.(map[string]any)
			g, v := fmt.Sprint(m["group"]), fmt.Sprint(m["version"])
			if (g == gv.Group && v == gv.Version) || (g == "" && v == "v1") {
				kept = append(kept, item)
			}
		}
		c := *s
		c.Extensions = copyExtensions(s.Extensions)
		c.Extensions[extensionGVK] = kept
		if len(kept) == 0 {
			delete(c.Extensions, extensionGVK)
		}
		doc.Components.Schemas[name] = &c
	}
}
