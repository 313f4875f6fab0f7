package openapi

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/munnerz/goautoneg"
)

// A form a document may be asked for in.
type mediaType struct {
	subType     string // of application/
	contentType string // answered
	proto       bool
}

// The forms of the documents; JSON comes first, for */*. The protobuf
// media types are gnostic's, under the name with @ clients still send and
// the name without it.
var (
	v2Types = []mediaType{
		{"json", "application/json", false},
		{"com.github.proto-openapi.spec.v2@v1.0+protobuf", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", true},
		{"com.github.proto-openapi.spec.v2.v1.0+protobuf", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", true},
	}
	v3Types = []mediaType{
		{"json", "application/json", false},
		{"com.github.proto-openapi.spec.v3@v1.0+protobuf", "application/com.github.proto-openapi.spec.v3.v1.0+protobuf", true},
		{"com.github.proto-openapi.spec.v3.v1.0+protobuf", "application/com.github.proto-openapi.spec.v3.v1.0+protobuf", true},
	}
)

// Mux is where the service installs its handlers (a server's non-API mux).
type Mux interface {
	Handle(pattern string, h http.Handler)
}

// Install serves /openapi/v2, /openapi/v3 and /openapi/v3/<path>.
func (s *Service) Install(mux Mux) {
	mux.Handle("/openapi/v2", http.HandlerFunc(s.serveV2))
	mux.Handle("/openapi/v3", http.HandlerFunc(s.serveV3Root))
	mux.Handle("/openapi/v3/", http.HandlerFunc(s.serveV3))
}

func (s *Service) serveV2(w http.ResponseWriter, r *http.Request) {
	mt, ok := negotiate(w, r, v2Types)
	if !ok {
		return
	}
	doc, err := s.v2()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.write(w, r, doc, mt)
}

func (s *Service) serveV3Root(w http.ResponseWriter, r *http.Request) {
	doc, err := s.v3Root()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.write(w, r, doc, v3Types[0])
}

// serveV3 serves the document of one part. With the hash of the present
// document in the query the answer may be cached for good; with another
// hash the client is sent to the present one.
func (s *Service) serveV3(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/openapi/v3/")
	mt, ok := negotiate(w, r, v3Types)
	if !ok {
		return
	}
	doc, found, err := s.v3(key)
	switch {
	case !found:
		w.WriteHeader(http.StatusNotFound)
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	if hash := r.URL.Query().Get("hash"); hash != "" {
		if hash != doc.etag {
			http.Redirect(w, r, hashURL(key, doc.etag), http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", time.Now().UTC().AddDate(1, 0, 0).Format(http.TimeFormat))
	}
	s.write(w, r, doc, mt)
}

// negotiate picks the form the Accept header prefers, answering 406 if
// there is none.
func negotiate(w http.ResponseWriter, r *http.Request, types []mediaType) (mediaType, bool) {
	w.Header().Add("Vary", "Accept")
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	for _, clause := range goautoneg.ParseAccept(accept) {
		for _, t := range types {
			if (clause.Type == "application" || clause.Type == "*") && (clause.SubType == t.subType || clause.SubType == "*") {
				return t, true
			}
		}
	}
	w.WriteHeader(http.StatusNotAcceptable)
	return mediaType{}, false
}

// write answers with doc in form mt, gzipped if the client takes gzip. The
// ETag lets clients revalidate: If-None-Match with it gets 304.
func (s *Service) write(w http.ResponseWriter, r *http.Request, doc *document, mt mediaType) {
	zipped := acceptsGzip(r)
	body, err := doc.body(mt.proto, zipped)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", mt.contentType)
	h.Set("ETag", strconv.Quote(doc.etag))
	h.Add("Vary", "Accept-Encoding")
	if zipped {
		h.Set("Content-Encoding", "gzip")
	}
	http.ServeContent(w, r, "", doc.modified, bytes.NewReader(body))
}

func (s *Service) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.logger.Error("serving OpenAPI", "path", r.URL.Path, "err", err)
	http.Error(w, "the OpenAPI document could not be built", http.StatusServiceUnavailable)
}

// acceptsGzip reports whether Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q, hasQ := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if !hasQ {
			return true
		}
		v, err := strconv.ParseFloat(q, 64)
		return err == nil && v > 0
	}
	return false
}
