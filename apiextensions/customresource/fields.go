package customresource

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// selectableField is one of a CRD version's selectableFields: its field
// selector key (the jsonPath without its leading dot) and its parsed path.
type selectableField struct {
	name string
	path *jsonpath.JSONPath // nil when the jsonPath does not parse
}

func prepareSelectableFields(sfs []apiextv1.SelectableField) []selectableField {
	out := make([]selectableField, 0, len(sfs))
	for _, sf := range sfs {
		f := selectableField{name: strings.TrimPrefix(sf.JSONPath, ".")}
		p := jsonpath.New("selectableField")
		p.AllowMissingKeys(true)
		if err := p.Parse("{" + sf.JSONPath + "}"); err == nil {
			f.path = p
		}
		out = append(out, f)
	}
	return out
}

// selectableFields are the values of the selectable fields of obj, as a
// field selector compares them: fmt.Sprint of the value, "" when missing
// or null.
func (s *Strategy) selectableFields(obj runtime.Object) fields.Set {
	if len(s.selectable) == 0 {
		return nil
	}
	var content map[string]any
	if u, ok := obj.(runtime.Unstructured); ok {
		content = u.UnstructuredContent()
	}
	set := make(fields.Set, len(s.selectable))
	for _, f := range s.selectable {
		set[f.name] = ""
		if f.path == nil || content == nil {
			continue
		}
		results, err := f.path.FindResults(content)
		if err != nil || len(results) == 0 || len(results[0]) == 0 {
			continue
		}
		if v := results[0][0].Interface(); v != nil {
			set[f.name] = fmt.Sprint(v)
		}
	}
	return set
}
