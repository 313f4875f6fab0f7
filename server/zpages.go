package server

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	goruntime "runtime"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/endpoints/handlers"
)

// zpageHeader starts kube's text /flagz and /statusz.
const zpageHeader = `
%s %s
Warning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.
`

// zpageDelimiters are kube's: one is picked per answer, so that no
// one parses the text.
var zpageDelimiters = []string{":", ": ", "=", " "}

// statuszPaths are the read-only paths kube's /statusz lists.
var statuszPaths = []string{"/flagz", "/healthz", "/livez", "/metrics", "/readyz", "/statusz", "/version"}

// installZPages serves /flagz and /statusz as kube does: text, or the
// structured config.k8s.io Flagz and Statusz (v1beta1, or v1alpha1 with
// kube's deprecation warning) in JSON or YAML.
func (p *PreparedServer) installZPages() {
	s := p.Server
	flags := s.config.Debug.Flags
	if flags == nil {
		flags = func() map[string]string { return nil }
	}
	flagz := func(version string) any {
		tm, om := zpageMeta("Flagz", version)
		return struct {
			metav1.TypeMeta
			metav1.ObjectMeta `json:"metadata"`
			Flags             map[string]string `json:"flags,omitempty"`
		}{tm, om, flags()}
	}
	s.Handle("/flagz", zpage("flagz", "Flagz", s.config.Codecs.Serializer, flagz, func(w io.Writer, delim string) {
		fl := flags()
		for _, k := range slices.Sorted(mapKeys(fl)) {
			fmt.Fprintf(w, "%s%s%s\n", k, delim, fl[k])
		}
	}))
	s.Handle("/statusz", zpage("statusz", "Statusz", s.config.Codecs.Serializer, p.statuszObject, p.writeStatusz))
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// statusz is the structured Statusz beside its TypeMeta and name.
type statusz struct {
	StartTime        metav1.Time `json:"startTime"`
	UptimeSeconds    int64       `json:"uptimeSeconds"`
	GoVersion        string      `json:"goVersion"`
	BinaryVersion    string      `json:"binaryVersion"`
	EmulationVersion string      `json:"emulationVersion,omitempty"`
	Paths            []string    `json:"paths"`
}

func (p *PreparedServer) statuszObject(version string) any {
	tm, om := zpageMeta("Statusz", version)
	return struct {
		metav1.TypeMeta
		metav1.ObjectMeta `json:"metadata"`
		statusz
	}{tm, om, p.statusz()}
}

func (p *PreparedServer) statusz() statusz {
	v := p.config.Version
	binary := strings.TrimPrefix(v.GitVersion, "v")
	emulation := v.Major + "." + strings.TrimSuffix(v.Minor, "+")
	return statusz{StartTime: metav1.NewTime(p.started.Truncate(time.Second)), UptimeSeconds: int64(time.Since(p.started).Seconds()),
		GoVersion: goruntime.Version(), BinaryVersion: binary, EmulationVersion: emulation, Paths: statuszPaths}
}

func (p *PreparedServer) writeStatusz(w io.Writer, delim string) {
	st := p.statusz()
	up := int64(time.Since(p.started).Seconds())
	fmt.Fprintf(w, "\nStarted%[1]s %[2]s\nUp%[1]s %[3]s\nGo version%[1]s %[4]s\nBinary version%[1]s %[5]s\nEmulation version%[1]s %[6]s\nPaths%[1]s %[7]s\n",
		delim, p.started.Format(time.UnixDate), fmt.Sprintf("%d hr %02d min %02d sec", up/3600, (up/60)%60, up%60),
		st.GoVersion, st.BinaryVersion, st.EmulationVersion, strings.Join(st.Paths, " "))
}

// zpage answers in the media type the Accept header asks for.
func zpage(name, kind string, ns runtime.NegotiatedSerializer, object func(version string) any, text func(w io.Writer, delim string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		format, version, ok := negotiateZPage(r.Header.Get("Accept"), kind)
		if !ok {
			handlers.WriteStatus(w, r, ns, handlers.ErrorToStatus(handlers.NewStatusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
				"only the following media types are accepted: application/json, application/yaml, text/plain"), nil))
			return
		}
		if format == "text" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintf(w, zpageHeader, "apiserver", name)
			text(w, zpageDelimiters[rand.IntN(len(zpageDelimiters))])
			return
		}
		if version == "v1alpha1" {
			w.Header().Set("Warning", `299 - "This version of the `+name+` endpoint is deprecated. Please use a newer version."`)
		}
		body, err := zpageBody(object(version), format)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/"+format+";g=config.k8s.io;v="+version+";as="+kind)
		_, _ = w.Write(body)
	})
}

// negotiateZPage picks text or a structured form from an Accept header:
// no header, text/plain or a wildcard is text; JSON or YAML only with
// as=<kind>, g=config.k8s.io and a served version.
func negotiateZPage(accept, kind string) (format, version string, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return "text", "", true
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "text/plain", "text/*", "*/*":
			return "text", "", true
		case "application/json", "application/yaml":
			v := params["v"]
			if params["as"] == kind && params["g"] == "config.k8s.io" && (v == "v1beta1" || v == "v1alpha1") {
				return strings.TrimPrefix(mt, "application/"), v, true
			}
		}
	}
	return "", "", false
}

// zpageBody encodes obj as JSON or YAML.
func zpageBody(obj any, format string) ([]byte, error) {
	body, err := json.Marshal(obj)
	if err != nil || format != "yaml" {
		return append(body, '\n'), err
	}
	return yaml.JSONToYAML(body)
}

// zpageMeta is the kind, version and name every structured z-page has.
func zpageMeta(kind, version string) (metav1.TypeMeta, metav1.ObjectMeta) {
	return metav1.TypeMeta{Kind: kind, APIVersion: "config.k8s.io/" + version}, metav1.ObjectMeta{Name: "apiserver"}
}
