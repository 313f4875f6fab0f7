package parity

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Difference is one part of an answer in which capstan differs from kube.
type Difference struct {
	Step          string // sequence:step
	Part          string // status, body, header:Name
	Kube, Capstan string
}

func (d Difference) String() string {
	return fmt.Sprintf("%s %s: kube %s, capstan %s", d.Step, d.Part, d.Kube, d.Capstan)
}

// Compare returns the parts of got that differ from the recorded answer.
func Compare(seq string, want, got Answer) []Difference {
	key := stepKey(seq, want.ID)
	var out []Difference
	if want.Status != got.Status {
		out = append(out, Difference{key, "status", fmt.Sprint(want.Status), fmt.Sprint(got.Status)})
	}
	names := map[string]bool{}
	for h := range want.Headers {
		names[h] = true
	}
	for h := range got.Headers {
		names[h] = true
	}
	for _, h := range sortedKeys(names) {
		if want.Headers[h] != got.Headers[h] {
			out = append(out, Difference{key, "header:" + h, quote(want.Headers[h]), quote(got.Headers[h])})
		}
	}
	var paths []string
	diffValues("", canonical(want.Body), canonical(got.Body), &paths)
	for _, p := range paths {
		out = append(out, Difference{key, "body" + p, show(want.Body, p), show(got.Body, p)})
	}
	return out
}

// canonical round-trips a value through JSON so that a recorded answer and
// a fresh one hold the same Go types.
func canonical(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(data, &out) != nil {
		return v
	}
	return out
}

// diffValues appends the paths at which a and b differ, at most 20.
func diffValues(p string, a, b any, out *[]string) {
	if len(*out) >= 20 || reflect.DeepEqual(a, b) {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			diffValues(p+"."+k, am[k], bm[k], out)
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			diffValues(fmt.Sprintf("%s[%d]", p, i), as[i], bs[i], out)
		}
		return
	}
	*out = append(*out, p)
}

// show is the value at a body path, as compact JSON (cut at 300 bytes).
func show(body any, p string) string {
	v := canonical(body)
	for _, part := range splitBodyPath(p) {
		switch c := v.(type) {
		case map[string]any:
			v = c[part.key]
		case []any:
			if part.index >= 0 && part.index < len(c) {
				v = c[part.index]
			} else {
				v = nil
			}
		}
	}
	data, _ := json.Marshal(v)
	if len(data) > 300 {
		data = append(data[:300], "..."...)
	}
	return string(data)
}

type bodyPathPart struct {
	key   string
	index int
}

func splitBodyPath(p string) []bodyPathPart {
	var out []bodyPathPart
	for len(p) > 0 {
		switch p[0] {
		case '.':
			end := 1
			for end < len(p) && p[end] != '.' && p[end] != '[' {
				end++
			}
			out = append(out, bodyPathPart{key: p[1:end], index: -1})
			p = p[end:]
		case '[':
			var i int
			n, _ := fmt.Sscanf(p, "[%d]", &i)
			if n != 1 {
				return out
			}
			out = append(out, bodyPathPart{index: i})
			for len(p) > 0 && p[0] != ']' {
				p = p[1:]
			}
			if len(p) > 0 {
				p = p[1:]
			}
		default:
			return out
		}
	}
	return out
}

func quote(s string) string {
	if s == "" {
		return "(none)"
	}
	return fmt.Sprintf("%q", s)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Explanation is a difference capstan keeps on purpose, or one that waits
// for work listed in docs/compatibility.md.
type Explanation struct {
	// Step is "sequence:step"; a * stands for any text.
	Step string `json:"step"`
	// Parts are the parts explained (status, body, body.message,
	// header:Warning); a part explains every part under it.
	Parts  []string `json:"parts"`
	Reason string   `json:"reason"`
}

// LoadExplanations reads the explained differences.
func LoadExplanations(file string) ([]Explanation, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []Explanation
	if err := yaml.UnmarshalStrict(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, e := range out {
		if e.Step == "" || len(e.Parts) == 0 || e.Reason == "" {
			return nil, fmt.Errorf("%s: an explanation needs a step, parts and a reason: %+v", file, e)
		}
	}
	return out, nil
}

// Explain returns the explanation of d, if one covers it.
func Explain(list []Explanation, d Difference) (Explanation, bool) {
	for _, e := range list {
		if !globMatch(e.Step, d.Step) {
			continue
		}
		for _, p := range e.Parts {
			if d.Part == p || (len(d.Part) > len(p) && d.Part[:len(p)] == p && (d.Part[len(p)] == '.' || d.Part[len(p)] == '[')) {
				return e, true
			}
		}
	}
	return Explanation{}, false
}

// globMatch matches s against a pattern whose * stands for any text.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(s)
}
