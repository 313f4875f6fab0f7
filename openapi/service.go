package openapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/handler3"

	"github.com/capstan-io/capstan/endpoints/discovery"
)

// Config is what the service documents.
type Config struct {
	// Registry lists the served groups, versions and resources.
	Registry *discovery.Registry
	// Catalog holds the definitions of the served kinds.
	Catalog Catalog
	// Serializer tells the media types operations consume and produce.
	Serializer runtime.NegotiatedSerializer
	// Version is info.version of the documents: the server's git version.
	Version string
	Logger  *slog.Logger
}

// Service builds and serves the OpenAPI documents. Nothing is built until
// a document is asked for; a document is then kept until the Registry
// changes what it is built from.
type Service struct {
	registry *discovery.Registry
	routes   *routeBuilder
	docs     *docBuilder
	logger   *slog.Logger

	mu    sync.Mutex // guards state
	state *state

	// build makes one document at a time: kube-openapi's builders write to
	// the extension maps of the shared definitions (the same values every
	// time, but writes all the same).
	build sync.Mutex
}

// state is what the documents of one generation of the Registry are
// built from. It is replaced, never changed, when the Registry changes;
// parts that did not change move to the new state with their documents.
type state struct {
	generation generation
	parts      map[string]*part
	keys       []string // of parts, sorted
	v2, root   *lazyDoc
}

// generation identifies what a state is built from: the Registry's
// generation and, for catalogs that change at run time, the catalog's.
type generation struct{ registry, catalog uint64 }

// NewService returns a Service of c.
func NewService(c Config) *Service {
	logger := c.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Service{
		registry: c.Registry, logger: logger,
		routes: newRouteBuilder(c.Catalog, c.Serializer),
		docs:   &docBuilder{catalog: c.Catalog, version: infoVersion(c.Version)},
	}
}

// infoVersion is the release without pre-release or build suffixes.
func infoVersion(v string) string {
	v, _, _ = strings.Cut(v, "-")
	if v == "" {
		return "unversioned"
	}
	return v
}

// current returns the state of the present generation of the Registry
// and the catalog.
func (s *Service) current() *state {
	gen := generation{s.registry.Generation(), s.routes.catalogGeneration()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != nil && s.state.generation == gen {
		return s.state
	}
	// The catalog's generation is read before the parts read its stamps:
	// a change in between makes the next call look again, never miss it.
	gen.catalog = s.routes.catalogGeneration()
	groups, regGen := s.registry.Groups()
	gen.registry = regGen
	s.state = nextState(s.state, s.routes.parts(groups), gen)
	return s.state
}

// nextState keeps the parts of old whose fingerprints did not change, and
// old's documents of all parts if none did.
func nextState(old *state, parts []*part, gen generation) *state {
	st := &state{generation: gen, parts: make(map[string]*part, len(parts)), v2: &lazyDoc{}, root: &lazyDoc{}}
	same := old != nil && len(old.parts) == len(parts)
	for _, p := range parts {
		if prev, ok := old.lookup(p.key); ok && prev.fingerprint == p.fingerprint {
			p = prev
		} else {
			same = false
		}
		st.parts[p.key] = p
		st.keys = append(st.keys, p.key)
	}
	sort.Strings(st.keys)
	if same {
		st.v2, st.root = old.v2, old.root
	}
	return st
}

func (st *state) lookup(key string) (*part, bool) {
	if st == nil {
		return nil, false
	}
	p, ok := st.parts[key]
	return p, ok
}

// v2 returns the swagger 2.0 document of every part.
func (s *Service) v2() (*document, error) {
	st := s.current()
	return st.v2.get(func() (*document, error) {
		s.build.Lock()
		defer s.build.Unlock()
		return buildAgain(func() (*document, error) {
			routes := make([]common.RouteContainer, 0, len(st.keys))
			for _, key := range st.keys {
				c, errs := st.parts[key].routes()
				s.logSkipped(errs)
				routes = append(routes, c)
			}
			return s.docs.swagger(routes)
		})
	})
}

// buildAgain builds a document, and builds it again if that fails: a CRD
// removed between the making of the routes (which leave out kinds without
// a definition) and the builder's reading of the definitions fails a
// build, and the next one sees the CRD gone.
func buildAgain(build func() (*document, error)) (*document, error) {
	var err error
	for range 3 {
		var doc *document
		if doc, err = build(); err == nil {
			return doc, nil
		}
	}
	return nil, err
}

// v3 returns the OpenAPI 3.0 document of the part at key, such as api/v1;
// false if there is no such part.
func (s *Service) v3(key string) (*document, bool, error) {
	p, ok := s.current().lookup(key)
	if !ok {
		return nil, false, nil
	}
	doc, err := s.partDoc(p)
	return doc, true, err
}

func (s *Service) partDoc(p *part) (*document, error) {
	return p.v3.get(func() (*document, error) {
		s.build.Lock()
		defer s.build.Unlock()
		return buildAgain(func() (*document, error) {
			c, errs := p.routes()
			s.logSkipped(errs)
			return s.docs.v3(c, p.gv)
		})
	})
}

// v3Root returns the discovery document of /openapi/v3: the URL of each
// part with the hash of its present document. A part that fails to build
// is left out.
func (s *Service) v3Root() (*document, error) {
	st := s.current()
	return st.root.get(func() (*document, error) {
		root := handler3.OpenAPIV3Discovery{Paths: map[string]handler3.OpenAPIV3DiscoveryGroupVersion{}}
		for _, key := range st.keys {
			doc, err := s.partDoc(st.parts[key])
			if err != nil {
				s.logger.Error("building an OpenAPI v3 document", "path", key, "err", err)
				continue
			}
			root.Paths[key] = handler3.OpenAPIV3DiscoveryGroupVersion{ServerRelativeURL: hashURL(key, doc.etag)}
		}
		body, err := json.Marshal(root)
		if err != nil {
			return nil, errors.New("encoding the OpenAPI v3 discovery document")
		}
		return newDocument(body, nil), nil
	})
}

// hashURL is where the document of key with the given hash is served.
func hashURL(key, hash string) string {
	return "/openapi/v3/" + key + "?" + url.Values{"hash": {hash}}.Encode()
}

func (s *Service) logSkipped(errs []error) {
	for _, err := range errs {
		s.logger.Warn("resource left out of the OpenAPI documents", "err", err)
	}
}
