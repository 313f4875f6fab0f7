package parity

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Answer is a server's answer to one step, normalised: what is compared
// and what the recording holds.
type Answer struct {
	ID      string            `json:"id"`
	Req     string            `json:"req"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    any               `json:"body,omitempty"`
}

// comparedHeaders are the headers clients act on. Audit-ID is compared by
// presence only.
var comparedHeaders = []string{"Content-Type", "Retry-After", "Warning", "Location", "Cache-Control"}

// normalizer replaces the values each server makes for itself: the
// sequence's namespace, UIDs, times, resource versions, continue tokens
// and generated names.
type normalizer struct {
	ns string
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	// A resource version in a message: "resource version: 12", "current: 345",
	// "ResourceVersion in precondition: 5".
	rvRE  = regexp.MustCompile(`(?i)(resource ?version[^0-9]{0,24}|current: )\d+`)
	ageRE = regexp.MustCompile(`^\d+(s|m|h|d)(\d+(s|m|h))?$`)
	// The ServiceAccount plugin names a pod's token volume with a random
	// suffix, as generateName would.
	tokenVolumeRE = regexp.MustCompile(`\bkube-api-access-[a-z0-9]{5}\b`)
)

// volatileKeys are object fields whose non-empty values differ between
// servers and runs.
var volatileKeys = map[string]bool{
	"uid": true, "resourceVersion": true, "creationTimestamp": true, "deletionTimestamp": true,
	"time": true, "continue": true, "lastTransitionTime": true, "lastUpdateTime": true,
	"lastHeartbeatTime": true, "renewTime": true, "acquireTime": true, "token": true,
	"expirationTimestamp": true, "clusterIP": true, "clusterIPs": true,
}

func (n normalizer) text(s string) string {
	if n.ns != "" {
		s = strings.ReplaceAll(s, n.ns, "{ns}")
	}
	s = uuidRE.ReplaceAllString(s, "<uid>")
	s = timeRE.ReplaceAllString(s, "<time>")
	s = tokenVolumeRE.ReplaceAllString(s, "kube-api-access-<generated>")
	return rvRE.ReplaceAllString(s, "${1}<rv>")
}

// value normalises a decoded JSON value; key is the field it is the value of.
func (n normalizer) value(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = n.value(k, e)
		}
		if g, ok := v["generateName"].(string); ok && g != "" {
			if name, ok := v["name"].(string); ok && strings.HasPrefix(name, g) && name != g {
				v["name"] = g + "<generated>"
			}
		}
		return v
	case []any:
		if volatileKeys[key] && len(v) > 0 {
			return "<" + key + ">"
		}
		for i, e := range v {
			v[i] = n.value(key, e)
		}
		return v
	case string:
		if volatileKeys[key] && v != "" {
			return "<" + key + ">"
		}
		if key == "cells" && ageRE.MatchString(v) {
			return "<age>"
		}
		return n.text(v)
	}
	return v
}

// body decodes and normalises a body by its media type: JSON and YAML as
// values, protobuf as its envelope's kind (and a Status in full), a JSON
// watch stream as its events, anything else as text.
func (n normalizer) body(contentType string, data []byte) any {
	if len(data) == 0 {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/vnd.kubernetes.protobuf" || mt == "application/vnd.kubernetes.protobuf;stream=watch":
		return n.protobuf(data)
	case strings.HasPrefix(mt, "application/yaml"):
		if j, err := yaml.YAMLToJSON(data); err == nil {
			data = j
		}
	case mt != "application/json":
		return n.text(string(data))
	}
	values, err := decodeJSONStream(data)
	if err != nil {
		return n.text(string(data))
	}
	for i := range values {
		values[i] = n.value("", values[i])
	}
	if len(values) == 1 {
		return values[0]
	}
	return map[string]any{"stream": values}
}

// decodeJSONStream decodes one JSON value or a stream of them (watch events).
func decodeJSONStream(data []byte) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}

var protobufMagic = []byte("k8s\x00")

func (n normalizer) protobuf(data []byte) any {
	if !bytes.HasPrefix(data, protobufMagic) {
		return map[string]any{"protobuf": "no envelope"}
	}
	var u runtime.Unknown
	if err := u.Unmarshal(data[len(protobufMagic):]); err != nil {
		return map[string]any{"protobuf": "undecodable"}
	}
	out := map[string]any{"protobuf": map[string]any{"apiVersion": u.APIVersion, "kind": u.Kind}}
	if u.Kind == "Status" {
		var st metav1.Status
		if err := st.Unmarshal(u.Raw); err == nil {
			if j, err := json.Marshal(&st); err == nil {
				var v any
				if json.Unmarshal(j, &v) == nil {
					out["status"] = n.value("", v)
				}
			}
		}
	}
	return out
}

// shape keeps what a "shape" step compares of a body: a Status whole,
// otherwise the kind and apiVersion (of each event of a stream).
func shape(body any) any {
	m, ok := body.(map[string]any)
	if !ok {
		return body
	}
	if _, proto := m["protobuf"]; proto || m["kind"] == "Status" {
		return m
	}
	if s, ok := m["stream"].([]any); ok {
		out := make([]any, len(s))
		for i, e := range s {
			out[i] = shape(e)
		}
		return map[string]any{"stream": out}
	}
	out := map[string]any{}
	for _, k := range []string{"kind", "apiVersion", "type"} {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	if obj, ok := m["object"]; ok {
		out["object"] = shape(obj)
	}
	return out
}
