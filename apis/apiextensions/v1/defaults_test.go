package v1_test

import (
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	apiextv1 "github.com/capstan-io/capstan/apis/apiextensions/v1"
	"github.com/capstan-io/capstan/apis/scheme"
)

func TestSetObjectDefaults(t *testing.T) {
	base := func() *apiextv1.CustomResourceDefinition {
		return &apiextv1.CustomResourceDefinition{
			Spec: apiextv1.CustomResourceDefinitionSpec{
				Group: "example.com",
				Names: apiextv1.CustomResourceDefinitionNames{Plural: "foos", Kind: "Foo"},
				Scope: apiextv1.NamespaceScoped,
				Versions: []apiextv1.CustomResourceDefinitionVersion{
					{Name: "v1beta1", Served: true},
					{Name: "v1", Served: true, Storage: true},
				},
			},
		}
	}
	webhook := func(svc *apiextv1.ServiceReference) *apiextv1.CustomResourceConversion {
		return &apiextv1.CustomResourceConversion{
			Strategy: apiextv1.WebhookConverter,
			Webhook: &apiextv1.WebhookConversion{
				ClientConfig:             &apiextv1.WebhookClientConfig{Service: svc},
				ConversionReviewVersions: []string{"v1"},
			},
		}
	}
	tests := []struct {
		name   string
		in     func(*apiextv1.CustomResourceDefinition)
		expect func(*apiextv1.CustomResourceDefinition)
	}{{
		name: "everything defaulted",
		in:   func(*apiextv1.CustomResourceDefinition) {},
		expect: func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.Singular = "foo"
			c.Spec.Names.ListKind = "FooList"
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter}
			c.Status.StoredVersions = []string{"v1"}
		},
	}, {
		name: "set names and stored versions kept",
		in: func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.Singular = "thefoo"
			c.Spec.Names.ListKind = "FooItems"
			c.Status.StoredVersions = []string{"v1beta1"}
		},
		expect: func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter}
		},
	}, {
		name: "no kind, no listKind",
		in:   func(c *apiextv1.CustomResourceDefinition) { c.Spec.Names.Kind = "" },
		expect: func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter}
			c.Status.StoredVersions = []string{"v1"}
		},
	}, {
		name: "no storage version, no stored versions",
		in:   func(c *apiextv1.CustomResourceDefinition) { c.Spec.Versions[1].Storage = false },
		expect: func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.Singular = "foo"
			c.Spec.Names.ListKind = "FooList"
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter}
		},
	}, {
		name: "webhook service gets port 443",
		in: func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.ServiceReference{Namespace: "ns", Name: "svc"})
		},
		expect: func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.Singular = "foo"
			c.Spec.Names.ListKind = "FooList"
			c.Spec.Conversion.Webhook.ClientConfig.Service.Port = ptr.To[int32](443)
			c.Status.StoredVersions = []string{"v1"}
		},
	}, {
		name: "webhook service port kept",
		in: func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.ServiceReference{Namespace: "ns", Name: "svc", Port: ptr.To[int32](8443)})
		},
		expect: func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.Singular = "foo"
			c.Spec.Names.ListKind = "FooList"
			c.Status.StoredVersions = []string{"v1"}
		},
	}, {
		name: "webhook by url",
		in: func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(nil)
			c.Spec.Conversion.Webhook.ClientConfig.URL = ptr.To("https://example.com/convert")
		},
		expect: func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.Singular = "foo"
			c.Spec.Names.ListKind = "FooList"
			c.Status.StoredVersions = []string{"v1"}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.in(in)
			want := in.DeepCopy()
			tc.expect(want)

			got := in.DeepCopy()
			apiextv1.SetObjectDefaults_CustomResourceDefinition(got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("SetObjectDefaults:\n got %#v\nwant %#v", got, want)
			}

			// The Scheme knows the same defaults, for single objects and lists.
			viaScheme := in.DeepCopy()
			scheme.Scheme.Default(viaScheme)
			if !reflect.DeepEqual(viaScheme, want) {
				t.Errorf("Scheme.Default:\n got %#v\nwant %#v", viaScheme, want)
			}
			list := &apiextv1.CustomResourceDefinitionList{Items: []apiextv1.CustomResourceDefinition{*in.DeepCopy()}}
			scheme.Scheme.Default(list)
			if !reflect.DeepEqual(&list.Items[0], want) {
				t.Errorf("Scheme.Default of a list:\n got %#v\nwant %#v", &list.Items[0], want)
			}
		})
	}
}
