package discovery

import (
	"mime"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// aggregatedContentType is the media type of aggregated discovery answers;
// client-go reads the parameters to tell them from the legacy documents.
const aggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// ServeRoot serves /api (core is true) or /apis, legacy or aggregated as the
// Accept header asks. serverAddress is the address clients reach the server
// at, for the legacy /api document.
func (r *Registry) ServeRoot(w http.ResponseWriter, req *http.Request, core bool, serverAddress string) {
	d := r.documents()
	if wantsAggregated(req.Header.Get("Accept")) {
		doc := d.aggregatedAPIs
		if core {
			doc = d.aggregatedCore
		}
		serve(w, req, aggregatedContentType, doc)
		return
	}
	if !core {
		serve(w, req, "application/json", d.legacyGroups)
		return
	}
	versions := &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: d.coreVersions,
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: serverAddress},
		},
	}
	serve(w, req, "application/json", encode(versions))
}

// ServeGroup serves /apis/<group>. It reports false if the group is unknown.
func (r *Registry) ServeGroup(w http.ResponseWriter, req *http.Request, group string) bool {
	doc, ok := r.documents().group[group]
	if ok {
		serve(w, req, "application/json", doc)
	}
	return ok
}

// ServeVersion serves /api/<version> and /apis/<group>/<version>. It reports
// false if the group version is unknown.
func (r *Registry) ServeVersion(w http.ResponseWriter, req *http.Request, group, version string) bool {
	doc, ok := r.documents().version[group+"/"+version]
	if ok {
		serve(w, req, "application/json", doc)
	}
	return ok
}

// wantsAggregated reports whether the first Accept entry this server can
// answer asks for aggregated discovery.
func wantsAggregated(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if mt != "application/json" && mt != "*/*" && mt != "application/*" {
			continue // protobuf discovery is not served; JSON is
		}
		if params["as"] == "" {
			return false
		}
		if params["as"] == "APIGroupDiscoveryList" && params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" {
			return true
		}
	}
	return false
}

func serve(w http.ResponseWriter, req *http.Request, contentType string, doc encoded) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("ETag", `"`+doc.etag+`"`)
	h.Set("Vary", "Accept")
	if match := req.Header.Get("If-None-Match"); match != "" && strings.Trim(match, `"`) == doc.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(doc.body)
}
