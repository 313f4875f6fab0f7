package openapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/common"

	"github.com/capstan-io/capstan/endpoints/discovery"
)

// A part is what one /openapi/v3 document holds: a group version, the
// discovery document of a group, or a fixed path. /openapi/v2 holds every
// part.
type part struct {
	key string // its path under /openapi/v3: api/v1, apis/<group>, version
	// fingerprint changes when what the part is built from changes.
	fingerprint string
	gv          *schema.GroupVersion // for group version parts
	custom      bool                 // a group version of custom resources
	routes      func() (*container, []error)
	v3          lazyDoc
}

// routeBuilder makes the routes of the parts.
type routeBuilder struct {
	catalog    Catalog
	mediaTypes []string // what every operation produces
	allTypes   []string // what lists and watches produce: also watch streams
	patchTypes []string // what patches consume
}

func newRouteBuilder(c Catalog, s runtime.NegotiatedSerializer) *routeBuilder {
	b := &routeBuilder{catalog: c}
	var stream []string
	for _, info := range s.SupportedMediaTypes() {
		b.mediaTypes = append(b.mediaTypes, info.MediaType)
		if info.StreamSerializer != nil {
			stream = append(stream, streamType(info.MediaType))
		}
	}
	b.allTypes = append(slices.Clip(b.mediaTypes), stream...)
	b.patchTypes = patchTypes(b.mediaTypes)
	return b
}

// streamType is the media type of a watch stream: kube's JSON and
// protobuf streams are marked as such, CBOR has a sequence type.
func streamType(mediaType string) string {
	if mediaType == runtime.ContentTypeCBOR {
		return "application/cbor-seq"
	}
	return mediaType + ";stream=watch"
}

// catalogGeneration counts the changes of a catalog that changes at run
// time; 0 for others.
func (b *routeBuilder) catalogGeneration() uint64 {
	if c, ok := b.catalog.(changing); ok {
		return c.Generation()
	}
	return 0
}

// stamp identifies the definitions of the custom kinds of gv; 0 if gv's
// kinds are built in.
func (b *routeBuilder) stamp(gv schema.GroupVersion) uint64 {
	if c, ok := b.catalog.(changing); ok {
		return c.stamp(gv)
	}
	return 0
}

// parts lists the parts of the groups, in no particular order. As in
// kube, the group versions of custom resources have no discovery
// operations, and their groups no part of their own.
func (b *routeBuilder) parts(groups []discovery.Group) []*part {
	out := []*part{
		b.fixed("/apis", "getAPIVersions", "apis", "get the API groups", metav1.APIGroupList{}.OpenAPIModelName()),
		b.fixed("/version", "getCodeVersion", "version", "get the version of the server", version.Info{}.OpenAPIModelName()),
	}
	for _, g := range groups {
		builtIn := len(g.Versions) == 0
		for _, v := range g.Versions {
			p := b.groupVersionPart(g.Name, v)
			builtIn = builtIn || !p.custom
			out = append(out, p)
		}
		switch {
		case g.Name == "":
			out = append(out, b.fixed("/api", "getCoreAPIVersions", "core", "get the versions of the core API", metav1.APIVersions{}.OpenAPIModelName()))
		case builtIn:
			id := "get" + camel(groupPart(g.Name), true) + "APIGroup"
			out = append(out, b.fixed("/apis/"+g.Name, id, camel(groupPart(g.Name), false), "get the versions of the group", metav1.APIGroup{}.OpenAPIModelName()))
		}
	}
	return out
}

// fixed is a part of one discovery path, whose content never changes.
func (b *routeBuilder) fixed(root, id, tag, doc, modelName string) *part {
	types := b.mediaTypes
	if root == "/version" {
		types = []string{"application/json"}
	}
	rt := discoveryRoute(root+"/", id, tag, doc, model(modelName), types)
	c := &container{root: root, routes: []common.Route{rt}}
	return &part{key: root[1:], fingerprint: root, routes: func() (*container, []error) { return c, nil }}
}

// groupVersionPart is the part of one group version: its resources and its
// discovery document.
func (b *routeBuilder) groupVersionPart(group string, v discovery.Version) *part {
	gv := schema.GroupVersion{Group: group, Version: v.Version}
	root := rootPath(gv)
	stamp := b.stamp(gv)
	custom := stamp != 0
	return &part{
		key: root[1:], fingerprint: fingerprint(gv, v, stamp), gv: &gv, custom: custom,
		routes: func() (*container, []error) {
			c := &container{root: root}
			var errs []error
			for _, r := range v.Resources {
				res, err := b.newResource(gv, v, r, custom)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s %s: %w", gv, r.Name, err))
					continue
				}
				c.routes = append(c.routes, res.routes()...)
			}
			if !custom {
				id := "get" + gvID(group, v.Version) + "APIResources"
				c.routes = append(c.routes, discoveryRoute(root+"/", id, gvTag(group, v.Version),
					"get the resources of the group version", model(metav1.APIResourceList{}.OpenAPIModelName()), b.mediaTypes))
			}
			return c, errs
		},
	}
}

func discoveryRoute(path, id, tag, doc string, m model, types []string) *route {
	return &route{
		method: http.MethodGet, path: path, operationID: id, tags: []string{tag}, description: doc,
		consumes: types, produces: types,
		responses: []common.StatusCodeResponse{response{code: http.StatusOK, message: "OK", model: m}},
	}
}

// fingerprint identifies what a group version part is built from: the
// resources, their kinds, scopes and verbs, and the stamp of the custom
// kinds' definitions (0 for built-in kinds, whose never change).
func fingerprint(gv schema.GroupVersion, v discovery.Version, stamp uint64) string {
	body, err := json.Marshal(v.Resources)
	if err != nil {
		panic(fmt.Sprintf("discovery resources are plain data and always encode: %v", err))
	}
	sum := sha256.Sum256(append([]byte(fmt.Sprintf("%s\n%d\n", gv, stamp)), body...))
	return hex.EncodeToString(sum[:])
}
