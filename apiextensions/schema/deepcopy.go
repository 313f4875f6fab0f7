package schema

import (
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopy returns a copy of s that shares nothing with it.
func (s *Structural) DeepCopy() *Structural {
	if s == nil {
		return nil
	}
	out := *s
	out.Default = copyJSON(s.Default)
	out.Example = copyJSON(s.Example)
	out.ExternalDocs = copyDocs(s.ExternalDocs)
	out.Items = s.Items.DeepCopy()
	if s.Properties != nil {
		out.Properties = make(map[string]Structural, len(s.Properties))
		for k, v := range s.Properties {
			out.Properties[k] = *v.DeepCopy()
		}
	}
	out.AdditionalProperties = s.AdditionalProperties.DeepCopy()
	out.XListMapKeys = slices.Clone(s.XListMapKeys)
	out.XValidations = copyRules(s.XValidations)
	out.ValueValidation = s.ValueValidation.DeepCopy()
	return &out
}

// DeepCopy returns a copy of v that shares nothing with it.
func (v *ValueValidation) DeepCopy() *ValueValidation {
	if v == nil {
		return nil
	}
	out := *v
	out.Maximum = copyPtr(v.Maximum)
	out.Minimum = copyPtr(v.Minimum)
	out.MaxLength = copyPtr(v.MaxLength)
	out.MinLength = copyPtr(v.MinLength)
	out.MaxItems = copyPtr(v.MaxItems)
	out.MinItems = copyPtr(v.MinItems)
	out.MultipleOf = copyPtr(v.MultipleOf)
	out.MaxProperties = copyPtr(v.MaxProperties)
	out.MinProperties = copyPtr(v.MinProperties)
	if v.Enum != nil {
		out.Enum = make([]any, len(v.Enum))
		for i, e := range v.Enum {
			out.Enum[i] = copyJSON(e)
		}
	}
	out.Required = slices.Clone(v.Required)
	out.AllOf = copyNestedSlice(v.AllOf)
	out.OneOf = copyNestedSlice(v.OneOf)
	out.AnyOf = copyNestedSlice(v.AnyOf)
	out.Not = v.Not.DeepCopy()
	return &out
}

// DeepCopy returns a copy of v that shares nothing with it.
func (v *NestedValueValidation) DeepCopy() *NestedValueValidation {
	if v == nil {
		return nil
	}
	out := *v
	out.ValueValidation = *v.ValueValidation.DeepCopy()
	out.XValidations = copyRules(v.XValidations)
	out.Items = v.Items.DeepCopy()
	if v.Properties != nil {
		out.Properties = make(map[string]NestedValueValidation, len(v.Properties))
		for k, p := range v.Properties {
			out.Properties[k] = *p.DeepCopy()
		}
	}
	out.AdditionalProperties = v.AdditionalProperties.DeepCopy()
	out.ForbiddenGenerics.Default = copyJSON(v.ForbiddenGenerics.Default)
	out.ForbiddenGenerics.Example = copyJSON(v.ForbiddenGenerics.Example)
	out.ForbiddenGenerics.ExternalDocs = copyDocs(v.ForbiddenGenerics.ExternalDocs)
	out.ForbiddenExtensions.XListMapKeys = slices.Clone(v.ForbiddenExtensions.XListMapKeys)
	return &out
}

func copyNestedSlice(in []NestedValueValidation) []NestedValueValidation {
	if in == nil {
		return nil
	}
	out := make([]NestedValueValidation, len(in))
	for i := range in {
		out[i] = *in[i].DeepCopy()
	}
	return out
}

func copyJSON(v any) any {
	if v == nil {
		return nil
	}
	return runtime.DeepCopyJSONValue(v)
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copyDocs(d *apiextv1.ExternalDocumentation) *apiextv1.ExternalDocumentation {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}

func copyRules(in apiextv1.ValidationRules) apiextv1.ValidationRules {
	if in == nil {
		return nil
	}
	out := make(apiextv1.ValidationRules, len(in))
	for i, r := range in {
		out[i] = r
		if r.Reason != nil {
			reason := *r.Reason
			out[i].Reason = &reason
		}
		out[i].OptionalOldSelf = copyPtr(r.OptionalOldSelf)
	}
	return out
}
