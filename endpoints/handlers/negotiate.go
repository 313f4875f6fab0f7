package handlers

import (
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Output shapes a client may ask for with the "as" media type parameter.
const (
	asObject       = ""
	asTable        = "Table"
	asMetadata     = "PartialObjectMetadata"
	asMetadataList = "PartialObjectMetadataList"
)

// output is the negotiated form of a response.
type output struct {
	info runtime.SerializerInfo
	as   string // one of the as... constants
	// version is meta.k8s.io's version of a Table or metadata: v1 or v1beta1.
	version string
}

// shapes tells which "as" shapes an answer may take.
type shapes struct {
	table, metadata, metadataList bool
	// noProtobuf: the object itself cannot be protobuf (a custom resource).
	noProtobuf bool
}

// allows reports whether the shape named by as is allowed.
func (s shapes) allows(as string) bool {
	switch as {
	case asTable:
		return s.table
	case asMetadata:
		return s.metadata
	case asMetadataList:
		return s.metadataList
	}
	return false
}

// acceptEntry is one media range of an Accept header.
type acceptEntry struct {
	typ, subtype string
	params       map[string]string
	q            float64
}

// parseAccept returns the media ranges of an Accept header, best first.
func parseAccept(header string) []acceptEntry {
	var out []acceptEntry
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		typ, sub, _ := strings.Cut(mt, "/")
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		out = append(out, acceptEntry{typ: typ, subtype: sub, params: params, q: q})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].q > out[j].q })
	return out
}

// negotiateOutput picks the serializer and shape of a response from the
// Accept header, among the shapes allowed.
func negotiateOutput(r *http.Request, ns runtime.NegotiatedSerializer, allowed shapes) (output, error) {
	infos := ns.SupportedMediaTypes()
	header := r.Header.Get("Accept")
	if header == "" {
		header = "application/json"
	}
	matched := false
	for _, e := range parseAccept(header) {
		if e.q == 0 {
			continue
		}
		info, ok := matchSerializer(e, infos)
		if !ok {
			continue
		}
		matched = true
		o := output{info: info}
		if as, ok := e.params["as"]; ok {
			if !allowed.allows(as) || e.params["g"] != "meta.k8s.io" ||
				(e.params["v"] != "v1" && e.params["v"] != "v1beta1") {
				continue
			}
			// A Table has no protobuf form: kube accepts it as JSON or
			// YAML only, and refuses the media type before encoding.
			if as == asTable && info.MediaTypeSubType != "json" && info.MediaTypeSubType != "yaml" {
				continue
			}
			o.as, o.version = as, e.params["v"]
		} else if allowed.noProtobuf && info.MediaTypeSubType == "vnd.kubernetes.protobuf" {
			continue
		}
		return o, nil
	}
	if !matched {
		return output{}, noRepresentation(infos)
	}
	return output{}, notAcceptable(infos)
}

// noRepresentation is kube's 406 (its router's) for an Accept header that
// names no media type the server has at all.
func noRepresentation(infos []runtime.SerializerInfo) error {
	return NewStatusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"406: Not Acceptable\n\nAvailable representations: "+mediaTypes(infos))
}

// mediaTypes lists the media types of infos as kube's errors list them.
func mediaTypes(infos []runtime.SerializerInfo) string {
	types := make([]string, 0, len(infos))
	for _, info := range infos {
		types = append(types, info.MediaType)
	}
	return strings.Join(types, ", ")
}

func matchSerializer(e acceptEntry, infos []runtime.SerializerInfo) (runtime.SerializerInfo, bool) {
	for _, info := range infos {
		if (e.typ == "*" || e.typ == info.MediaTypeType) && (e.subtype == "*" || e.subtype == info.MediaTypeSubType) {
			return info, true
		}
	}
	return runtime.SerializerInfo{}, false
}

func notAcceptable(infos []runtime.SerializerInfo) error {
	err := NewStatusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"only the following media types are accepted: "+mediaTypes(infos))
	err.ErrStatus.Details = nil // kube's has none
	return err
}

// notAcceptableStream is kube's 406 for a watch asked for in a media type
// that has no stream form (YAML): it lists the stream media types.
func notAcceptableStream(infos []runtime.SerializerInfo) error {
	var streams []runtime.SerializerInfo
	for _, info := range infos {
		if info.StreamSerializer != nil {
			info.MediaType += ";stream=watch"
			streams = append(streams, info)
		}
	}
	return notAcceptable(streams)
}

// negotiateInput returns the serializer of a request body's Content-Type.
func negotiateInput(r *http.Request, ns runtime.NegotiatedSerializer) (runtime.SerializerInfo, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/json"
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil {
		for _, info := range ns.SupportedMediaTypes() {
			if info.MediaType == mt {
				return info, nil
			}
		}
	}
	return runtime.SerializerInfo{}, unsupportedMediaType(ct, ns.SupportedMediaTypes())
}

func unsupportedMediaType(ct string, infos []runtime.SerializerInfo) error {
	err := NewStatusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+mediaTypes(infos))
	err.ErrStatus.Details = nil // kube's has none
	return err
}
