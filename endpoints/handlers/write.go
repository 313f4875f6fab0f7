package handlers

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/audit"
)

// gzipThreshold is the response size above which a client that accepts gzip
// gets it; below it compression costs more than it saves.
const gzipThreshold = 128 * 1024

// writeObject negotiates the response form and writes obj with code.
func (s *Scope) writeObject(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object) {
	out, err := negotiateOutput(r, s.Serializer, s.answerShapes())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if obj, err = s.transform(r, obj, out); err != nil {
		s.writeError(w, r, err)
		return
	}
	typedItemsWithoutKinds(obj)
	audit.LogResponseObject(r.Context(), obj, s.targetVersion(obj), s.Serializer)
	s.encode(w, r, code, out.info, obj)
}

// writeError writes err as a metav1.Status in the negotiated media type.
func (s *Scope) writeError(w http.ResponseWriter, r *http.Request, err error) {
	WriteStatus(w, r, s.Serializer, ErrorToStatus(err, s.Logger))
}

// WriteStatus writes status with its code, in the media type the request
// accepts (JSON if it accepts none that is served).
func WriteStatus(w http.ResponseWriter, r *http.Request, ns runtime.NegotiatedSerializer, status *metav1.Status) {
	out, err := negotiateOutput(r, ns, shapes{})
	if err != nil {
		out.info, _ = runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), runtime.ContentTypeJSON)
	}
	// As kube, a status that tells the client when to retry (a too large
	// resourceVersion, a busy server) says it in the header clients read.
	if status.Details != nil && status.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(status.Details.RetryAfterSeconds)))
	}
	audit.LogResponseObject(r.Context(), status, schema.GroupVersion{Version: "v1"}, ns)
	encodeTo(w, r, ns, int(status.Code), out.info, schema.GroupVersion{Version: "v1"}, status)
}

func (s *Scope) encode(w http.ResponseWriter, r *http.Request, code int, info runtime.SerializerInfo, obj runtime.Object) {
	encodeTo(w, r, s.Serializer, code, info, s.targetVersion(obj), obj)
}

// targetVersion is the group version an object is encoded in: the
// endpoint's, or meta.k8s.io's for the meta types it returns.
func (s *Scope) targetVersion(obj runtime.Object) schema.GroupVersion {
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Group == metav1.GroupName {
		return gvk.GroupVersion()
	}
	if _, ok := obj.(*metav1.Table); ok {
		return metav1.SchemeGroupVersion
	}
	return s.Kind.GroupVersion()
}

func encodeTo(w http.ResponseWriter, r *http.Request, ns runtime.NegotiatedSerializer, code int,
	info runtime.SerializerInfo, gv schema.GroupVersion, obj runtime.Object) {
	serializer := info.Serializer
	if info.PrettySerializer != nil && wantsPretty(r) {
		serializer = info.PrettySerializer
	}
	writeEncoded(w, r, ns, code, info.MediaType, func(w io.Writer) error {
		return encodeObject(ns.EncoderForVersion(serializer, gv), obj, w)
	})
}

// writeEncoded writes what encode writes, with code, and a 500 Status
// instead if encode fails before anything was written.
func writeEncoded(w http.ResponseWriter, r *http.Request, ns runtime.NegotiatedSerializer, code int,
	mediaType string, encode func(io.Writer) error) {
	dw := newDeferredWriter(w, r, code, mediaType)
	err := encode(dw)
	if err == nil {
		_ = dw.Close()
		return
	}
	if dw.started() {
		// Part of the answer is on the wire: the client must see it fail.
		panic(http.ErrAbortHandler)
	}
	status := ErrorToStatus(err, nil)
	info, _ := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), runtime.ContentTypeJSON)
	dw = newDeferredWriter(w, r, int(status.Code), info.MediaType)
	_ = ns.EncoderForVersion(info.Serializer, schema.GroupVersion{Version: "v1"}).Encode(status, dw)
	_ = dw.Close()
}

// wantsPretty reports whether to indent the answer: when ?pretty asks, or
// for the command-line and browser clients kube indents for.
func wantsPretty(r *http.Request) bool {
	if v := r.URL.Query().Get("pretty"); v != "" {
		pretty, err := strconv.ParseBool(v)
		return err == nil && pretty
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/")
}

func acceptsGzip(r *http.Request) bool {
	for _, enc := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(strings.SplitN(enc, ";", 2)[0]) == "gzip" {
			return true
		}
	}
	return false
}
