package customresource

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/internal/fieldtest"
)

func spec() map[string]any {
	return map[string]any{"cronSpec": "* * * * */5", "image": "registry.example/cron", "replicas": int64(2)}
}

func TestPrepareForCreate(t *testing.T) {
	tests := []struct {
		name       string
		status     bool
		wantStatus bool
	}{
		{"status subresource drops status", true, false},
		{"without status subresource status stays", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := cronTab("a", spec(), map[string]any{"replicas": int64(3)})
			u.SetGeneration(7)
			newCronTabStrategy(t, tt.status).PrepareForCreate(context.Background(), u)
			if _, has := u.Object["status"]; has != tt.wantStatus {
				t.Errorf("has status = %v, want %v", has, tt.wantStatus)
			}
			if g := u.GetGeneration(); g != 1 {
				t.Errorf("generation = %d, want 1", g)
			}
			if _, has := u.Object["spec"]; !has {
				t.Error("spec dropped")
			}
		})
	}
}

func TestPrepareForUpdate(t *testing.T) {
	old := cronTab("a", spec(), map[string]any{"replicas": int64(1)})
	old.SetGeneration(4)
	tests := []struct {
		name       string
		status     bool
		obj        *unstructured.Unstructured
		old        *unstructured.Unstructured
		wantGen    int64
		wantStatus any // nil: no status
	}{
		{"spec change bumps", true, with(old, int64(5), "spec", "replicas"), old, 5, map[string]any{"replicas": int64(1)}},
		{"labels do not bump", true, with(old, map[string]any{"a": "b"}, "metadata", "labels"), old, 4, map[string]any{"replicas": int64(1)}},
		{"status change is undone", true, with(old, int64(9), "status", "replicas"), old, 4, map[string]any{"replicas": int64(1)}},
		{"status removal is undone", true, without(old, "status"), old, 4, map[string]any{"replicas": int64(1)}},
		{"status cannot appear", true, old, without(old, "status"), 4, nil},
		{"no status subresource: status change bumps", false, with(old, int64(9), "status", "replicas"), old, 5, map[string]any{"replicas": int64(9)}},
		{"new top-level field bumps", false, with(old, "x", "extra"), old, 5, map[string]any{"replicas": int64(1)}},
		{"nothing changed", false, old, old, 4, map[string]any{"replicas": int64(1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := tt.obj.DeepCopy()
			// The Store carries generation over from old before the
			// strategy runs.
			obj.SetGeneration(tt.old.GetGeneration())
			newCronTabStrategy(t, tt.status).PrepareForUpdate(context.Background(), obj, tt.old.DeepCopy())
			if g := obj.GetGeneration(); g != tt.wantGen {
				t.Errorf("generation = %d, want %d", g, tt.wantGen)
			}
			status, has := obj.Object["status"]
			if tt.wantStatus == nil && has {
				t.Errorf("status = %v, want none", status)
			} else if tt.wantStatus != nil && !equalJSON(status, tt.wantStatus) {
				t.Errorf("status = %v, want %v", status, tt.wantStatus)
			}
		})
	}
}

func equalJSON(a, b any) bool { return reflect.DeepEqual(a, b) }

func TestValidate(t *testing.T) {
	valid := cronTab("a", spec(), map[string]any{"replicas": int64(1), "labelSelector": "app=cron"})
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want []fieldtest.Want
		// msgs are substrings of the error messages, in order.
		msgs []string
	}{
		{name: "valid", obj: valid},
		{name: "no spec, no status", obj: cronTab("a", nil, nil)},
		{name: "wrong kind and apiVersion",
			obj:  with(with(valid, "Other", "kind"), "other.example.com/v1", "apiVersion"),
			want: []fieldtest.Want{fieldtest.Invalid("kind"), fieldtest.Invalid("apiVersion")},
			msgs: []string{"kind: Invalid value: \"Other\": must be CronTab", "apiVersion: Invalid value: \"other.example.com/v1\": must be stable.example.com/v1"}},
		{name: "wrong kind skips the schema but not CEL",
			obj:  with(with(valid, "Other", "kind"), "docker.io/cron", "spec", "image"),
			want: []fieldtest.Want{fieldtest.Invalid("kind"), fieldtest.Invalid("spec")}},
		{name: "schema type",
			obj:  with(valid, "two", "spec", "replicas"),
			want: []fieldtest.Want{{Type: field.ErrorTypeTypeInvalid, Field: "spec.replicas"}, fieldtest.Invalid(".spec.replicas"), fieldtest.Invalid("<nil>")},
			msgs: []string{"spec.replicas in body must be of type integer: \"string\"",
				".spec.replicas accessor error: two is of the type string, expected int64",
				"some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"}},
		{name: "schema pattern does not block CEL",
			obj:  with(with(valid, "every minute", "spec", "cronSpec"), "docker.io/cron", "spec", "image"),
			want: []fieldtest.Want{fieldtest.Invalid("spec.cronSpec"), fieldtest.Invalid("spec")},
			msgs: []string{"spec.cronSpec in body should match", "image must come from registry.example"}},
		{name: "CEL rule",
			obj:  with(valid, "docker.io/cron", "spec", "image"),
			want: []fieldtest.Want{fieldtest.Invalid("spec")},
			msgs: []string{"spec: Invalid value: image must come from registry.example"}},
		{name: "negative spec replicas",
			obj:  with(valid, int64(-1), "spec", "replicas"),
			want: []fieldtest.Want{fieldtest.Invalid(".spec.replicas")},
			msgs: []string{".spec.replicas: Invalid value: -1: should be a non-negative integer"}},
		{name: "spec replicas beyond int32",
			obj:  with(valid, int64(math.MaxInt32)+1, "spec", "replicas"),
			want: []fieldtest.Want{fieldtest.Invalid(".spec.replicas")},
			msgs: []string{".spec.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647"}},
		{name: "negative status replicas",
			obj:  with(valid, int64(-3), "status", "replicas"),
			want: []fieldtest.Want{fieldtest.Invalid(".status.replicas")},
			msgs: []string{".status.replicas: Invalid value: -3: should be a non-negative integer"}},
		{name: "label selector not a string",
			obj: with(valid, int64(3), "status", "labelSelector"),
			want: []fieldtest.Want{{Type: field.ErrorTypeTypeInvalid, Field: "status.labelSelector"},
				fieldtest.Invalid(".status.labelSelector"), fieldtest.Invalid("<nil>")}},
		{name: "list set duplicates",
			obj:  with(valid, []any{"a", "b", "a"}, "spec", "tags"),
			want: []fieldtest.Want{fieldtest.Duplicate("spec.tags[2]")}},
		{name: "embedded resource",
			obj: with(valid, map[string]any{"metadata": map[string]any{"name": "x/y"}}, "spec", "template"),
			want: []fieldtest.Want{fieldtest.Required("spec.template.apiVersion"), fieldtest.Required("spec.template.kind"),
				fieldtest.Invalid("spec.template.metadata.name"), fieldtest.Invalid("<nil>")}},
		// the Store reports the missing name; CEL rules do not run
		{name: "metadata errors block CEL",
			obj:  without(with(valid, "docker.io/cron", "spec", "image"), "metadata", "name"),
			want: []fieldtest.Want{fieldtest.Invalid("<nil>")}},
		{name: "metadata not an object",
			obj:  with(valid, "x", "metadata"),
			want: []fieldtest.Want{fieldtest.Invalid("metadata")}},
	}
	s := newCronTabStrategy(t, true)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := s.Validate(context.Background(), tt.obj)
			fieldtest.Check(t, errs, tt.want...)
			checkMessages(t, errs, tt.msgs)
		})
	}
}

// checkMessages checks that each msg is part of some error of errs.
func checkMessages(t *testing.T, errs field.ErrorList, msgs []string) {
	t.Helper()
	for _, msg := range msgs {
		if !slices.ContainsFunc(errs, func(e *field.Error) bool { return strings.Contains(e.Error(), msg) }) {
			t.Errorf("no error says %q in %v", msg, errs)
		}
	}
}

func TestValidateUpdate(t *testing.T) {
	valid := cronTab("a", spec(), nil)
	badPattern := with(valid, "every minute", "spec", "cronSpec")
	badImage := with(valid, "docker.io/cron", "spec", "image")
	tests := []struct {
		name     string
		obj, old *unstructured.Unstructured
		want     []fieldtest.Want
	}{
		{"valid", with(valid, int64(3), "spec", "replicas"), valid, nil},
		{"schema error ratchets when unchanged", with(badPattern, int64(3), "spec", "replicas"), badPattern, nil},
		{"schema error when changed", badPattern, valid, []fieldtest.Want{fieldtest.Invalid("spec.cronSpec")}},
		{"schema error when changed to another bad value", with(valid, "hourly", "spec", "cronSpec"), badPattern,
			[]fieldtest.Want{fieldtest.Invalid("spec.cronSpec")}},
		{"CEL error when changed", badImage, valid, []fieldtest.Want{fieldtest.Invalid("spec")}},
		// The rule sits on spec, whose value changed with replicas.
		{"CEL error on a changed spec", with(badImage, int64(3), "spec", "replicas"), badImage, []fieldtest.Want{fieldtest.Invalid("spec")}},
		{"CEL error ratchets when spec unchanged", with(badImage, "x", "metadata", "labels", "a"), badImage, nil},
		{"scale paths do not ratchet", with(valid, int64(-1), "spec", "replicas"), with(valid, int64(-1), "spec", "replicas"),
			[]fieldtest.Want{fieldtest.Invalid(".spec.replicas")}},
		{"list set ratchets when old broke it", with(valid, []any{"a", "a", "b", "b"}, "spec", "tags"), with(valid, []any{"a", "a"}, "spec", "tags"), nil},
		{"list set when old kept it", with(valid, []any{"a", "a"}, "spec", "tags"), valid, []fieldtest.Want{fieldtest.Duplicate("spec.tags[1]")}},
		{"wrong kind", with(valid, "Other", "kind"), valid, []fieldtest.Want{fieldtest.Invalid("kind")}},
	}
	s := newCronTabStrategy(t, false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fieldtest.Check(t, s.ValidateUpdate(context.Background(), tt.obj, tt.old), tt.want...)
		})
	}
}

func TestDefault(t *testing.T) {
	u := cronTab("a", map[string]any{"replicas": int64(1)}, nil)
	newCronTabStrategy(t, true).Default(u)
	if c, _, _ := unstructured.NestedString(u.Object, "spec", "color"); c != "blue" {
		t.Errorf("spec.color = %q, want blue", c)
	}
	noSpec := cronTab("a", nil, nil)
	newCronTabStrategy(t, true).Default(noSpec)
	if _, has := noSpec.Object["spec"]; has {
		t.Errorf("defaulting created spec: %v", noSpec.Object)
	}
}

func TestFields(t *testing.T) {
	s := newCronTabStrategy(t, true)
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want fields.Set
	}{
		{"set", cronTab("a", spec(), nil), fields.Set{"spec.cronSpec": "* * * * */5", "spec.replicas": "2"}},
		{"missing", cronTab("a", map[string]any{}, nil), fields.Set{"spec.cronSpec": "", "spec.replicas": ""}},
		{"null", cronTab("a", map[string]any{"replicas": nil}, nil), fields.Set{"spec.cronSpec": "", "spec.replicas": ""}},
		{"empty object", &unstructured.Unstructured{}, fields.Set{"spec.cronSpec": "", "spec.replicas": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Fields(tt.obj); !fieldsEqual(got, tt.want) {
				t.Errorf("Fields = %v, want %v", got, tt.want)
			}
		})
	}
	none := NewStrategy(StrategyOptions{Kind: cronTabGVK})
	if got := none.Fields(cronTab("a", spec(), nil)); len(got) != 0 {
		t.Errorf("no selectable fields: Fields = %v", got)
	}
	// A field selector matches on the fields the Store merges in.
	sel := fields.ParseSelectorOrDie("spec.replicas=2")
	if !sel.Matches(s.Fields(cronTab("a", spec(), nil))) {
		t.Error("spec.replicas=2 does not match")
	}
}

func fieldsEqual(a, b fields.Set) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestWarnings(t *testing.T) {
	s := newCronTabStrategy(t, true)
	withFinalizers := func(fs ...string) *unstructured.Unstructured {
		u := cronTab("a", spec(), nil)
		u.SetFinalizers(fs)
		return u
	}
	tests := []struct {
		name     string
		obj, old *unstructured.Unstructured
		want     []string
	}{
		{"qualified", withFinalizers("example.com/cleanup", "kubernetes", "orphan", "foregroundDeletion"), nil, nil},
		{"no domain", withFinalizers("cleanup"), nil,
			[]string{`metadata.finalizers: "cleanup": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers`}},
		{"no path", withFinalizers("cleanup.example.com"), nil,
			[]string{`metadata.finalizers: "cleanup.example.com": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`}},
		{"update warns only of added ones", withFinalizers("cleanup", "other"), withFinalizers("cleanup"),
			[]string{`metadata.finalizers: "other": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			if tt.old == nil {
				got = s.WarningsOnCreate(context.Background(), tt.obj)
			} else {
				got = s.WarningsOnUpdate(context.Background(), tt.obj, tt.old)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("warnings = %q\nwant %q", got, tt.want)
			}
		})
	}
	bad := s.WarningsOnCreate(context.Background(), withFinalizers("a/b/c"))
	if len(bad) != 1 || !strings.Contains(bad[0], `metadata.finalizers: "a/b/c": a valid label key must consist of`) {
		t.Errorf("invalid name: warnings = %q", bad)
	}
	if w := s.StatusStrategy().WarningsOnUpdate(context.Background(), withFinalizers("x"), withFinalizers()); w != nil {
		t.Errorf("status warnings = %q", w)
	}
}
