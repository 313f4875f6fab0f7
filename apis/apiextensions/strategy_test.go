package apiextensions

import (
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/internal/fieldtest"
)

// cronTabYAML is the CronTab example of kubernetes.io's "Extend the
// Kubernetes API with CustomResourceDefinitions".
const cronTabYAML = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                cronSpec:
                  type: string
                image:
                  type: string
                replicas:
                  type: integer
            status:
              type: object
              properties:
                replicas:
                  type: integer
                labelSelector:
                  type: string
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames:
    - ct
`

var ctx = context.Background()

// decode reads a CRD from YAML.
func decode(t testing.TB, y string) *apiextv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(y), crd); err != nil {
		t.Fatalf("decoding CRD: %v", err)
	}
	return crd
}

// cronTab is the CronTab CRD as undefaulted input.
func cronTab(t testing.TB) *apiextv1.CustomResourceDefinition {
	return decode(t, cronTabYAML)
}

// props decodes a JSON schema from YAML.
func props(t testing.TB, y string) *apiextv1.JSONSchemaProps {
	t.Helper()
	p := &apiextv1.JSONSchemaProps{}
	if err := yaml.UnmarshalStrict([]byte(y), p); err != nil {
		t.Fatalf("decoding schema: %v", err)
	}
	return p
}

// created runs a new CRD through the create path of the Store: defaults,
// PrepareForCreate, Validate.
func created(crd *apiextv1.CustomResourceDefinition) field.ErrorList {
	s := CRDStrategy{}
	s.Default(crd)
	s.PrepareForCreate(ctx, crd)
	return s.Validate(ctx, crd)
}

// secondVersion adds v2, a served copy of v1 that is not stored.
func secondVersion(crd *apiextv1.CustomResourceDefinition) *apiextv1.CustomResourceDefinitionVersion {
	v := *crd.Spec.Versions[0].DeepCopy()
	v.Name, v.Storage = "v2", false
	crd.Spec.Versions = append(crd.Spec.Versions, v)
	return &crd.Spec.Versions[1]
}

func webhook(cc *apiextv1.WebhookClientConfig, versions ...string) *apiextv1.CustomResourceConversion {
	return &apiextv1.CustomResourceConversion{
		Strategy: apiextv1.WebhookConverter,
		Webhook:  &apiextv1.WebhookConversion{ClientConfig: cc, ConversionReviewVersions: versions},
	}
}

func TestCronTabIsValid(t *testing.T) {
	crd := cronTab(t)
	fieldtest.Check(t, created(crd))
	if crd.Generation != 1 {
		t.Errorf("generation = %d, want 1", crd.Generation)
	}
	if want := []string{"v1"}; !reflect.DeepEqual(crd.Status.StoredVersions, want) {
		t.Errorf("storedVersions = %v, want %v", crd.Status.StoredVersions, want)
	}
	if crd.Spec.Names.ListKind != "CronTabList" || crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextv1.NoneConverter {
		t.Errorf("defaults not applied: names %+v, conversion %+v", crd.Spec.Names, crd.Spec.Conversion)
	}
	if w := (CRDStrategy{}).WarningsOnCreate(ctx, crd); len(w) > 0 {
		t.Errorf("warnings = %q", w)
	}
}

func TestPrepareForCreateResetsStatus(t *testing.T) {
	crd := cronTab(t)
	crd.Generation = 7
	crd.Status = apiextv1.CustomResourceDefinitionStatus{
		Conditions:     []apiextv1.CustomResourceDefinitionCondition{{Type: apiextv1.Established, Status: apiextv1.ConditionTrue}},
		AcceptedNames:  apiextv1.CustomResourceDefinitionNames{Plural: "x", Kind: "X"},
		StoredVersions: []string{"v0"},
	}
	CRDStrategy{}.PrepareForCreate(ctx, crd)
	want := apiextv1.CustomResourceDefinitionStatus{StoredVersions: []string{"v1"}}
	if !reflect.DeepEqual(crd.Status, want) || crd.Generation != 1 {
		t.Errorf("status = %+v, generation %d; want %+v, 1", crd.Status, crd.Generation, want)
	}
}

func TestValidateCreate(t *testing.T) {
	caBundle := []byte("not a certificate")
	tests := []struct {
		name   string
		mutate func(*apiextv1.CustomResourceDefinition)
		want   []fieldtest.Want
	}{
		{"name is not plural.group", func(c *apiextv1.CustomResourceDefinition) {
			c.Name = "crontab.stable.example.com"
		}, []fieldtest.Want{fieldtest.Invalid("metadata.name")}},
		{"group without a dot", func(c *apiextv1.CustomResourceDefinition) {
			c.Name, c.Spec.Group = "crontabs.example", "example"
		}, []fieldtest.Want{fieldtest.Invalid("spec.group")}},
		{"group not a DNS subdomain", func(c *apiextv1.CustomResourceDefinition) {
			c.Name, c.Spec.Group = "crontabs.Example.com", "Example.com"
		}, []fieldtest.Want{fieldtest.Invalid("spec.group")}},
		{"no group", func(c *apiextv1.CustomResourceDefinition) {
			c.Name, c.Spec.Group = "crontabs.", ""
		}, []fieldtest.Want{fieldtest.Required("spec.group")}},
		{"protected group without approval", func(c *apiextv1.CustomResourceDefinition) {
			c.Name, c.Spec.Group = "crontabs.stable.k8s.io", "stable.k8s.io"
		}, []fieldtest.Want{fieldtest.Required("metadata.annotations[api-approved.kubernetes.io]")}},
		{"protected group with a bad approval", func(c *apiextv1.CustomResourceDefinition) {
			c.Name, c.Spec.Group = "crontabs.kubernetes.io", "kubernetes.io"
			c.Annotations = map[string]string{"api-approved.kubernetes.io": "yes"}
		}, []fieldtest.Want{fieldtest.Invalid("metadata.annotations[api-approved.kubernetes.io]")}},
		{"protected group, unapproved", func(c *apiextv1.CustomResourceDefinition) {
			c.Name, c.Spec.Group = "crontabs.x.k8s.io", "x.k8s.io"
			c.Annotations = map[string]string{"api-approved.kubernetes.io": "unapproved, experimental"}
		}, nil},
		{"protected group, approved", func(c *apiextv1.CustomResourceDefinition) {
			c.Name, c.Spec.Group = "crontabs.x.k8s.io", "x.k8s.io"
			c.Annotations = map[string]string{"api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/78458"}
		}, nil},
		{"k8s.io lookalike is not protected", func(c *apiextv1.CustomResourceDefinition) {
			c.Name, c.Spec.Group = "crontabs.notk8s.io", "notk8s.io"
		}, nil},
		{"bad scope", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Scope = "Global"
		}, []fieldtest.Want{fieldtest.NotSupported("spec.scope")}},
		{"no scope", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Scope = ""
		}, []fieldtest.Want{fieldtest.Required("spec.scope")}},

		{"two storage versions", func(c *apiextv1.CustomResourceDefinition) {
			secondVersion(c).Storage = true
		}, []fieldtest.Want{fieldtest.Invalid("spec.versions"), fieldtest.Invalid("status.storedVersions")}},
		{"no storage version", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Storage = false
		}, []fieldtest.Want{fieldtest.Invalid("spec.versions"), fieldtest.Invalid("status.storedVersions")}},
		{"no versions", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions = nil
		}, []fieldtest.Want{fieldtest.Invalid("spec.versions"), fieldtest.Invalid("status.storedVersions")}},
		{"duplicate version", func(c *apiextv1.CustomResourceDefinition) {
			secondVersion(c).Name = "v1"
		}, []fieldtest.Want{fieldtest.Invalid("spec.versions")}},
		// kube's internal spec.version is versions[0].name: checked twice.
		{"first version name not a DNS-1035 label", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Name = "V1"
		}, []fieldtest.Want{fieldtest.Invalid("spec.versions[0].name"), fieldtest.Invalid("spec.version")}},
		{"second version name not a DNS-1035 label", func(c *apiextv1.CustomResourceDefinition) {
			secondVersion(c).Name = "1beta"
		}, []fieldtest.Want{fieldtest.Invalid("spec.versions[1].name")}},
		{"deprecation warning of a version not deprecated", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].DeprecationWarning = ptr.To("old")
		}, []fieldtest.Want{fieldtest.Invalid("spec.versions[0].deprecationWarning")}},
		{"empty deprecation warning", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Deprecated = true
			c.Spec.Versions[0].DeprecationWarning = ptr.To("")
		}, []fieldtest.Want{fieldtest.Invalid("spec.versions[0].deprecationWarning")}},
		{"deprecation warning with a control character", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Deprecated = true
			c.Spec.Versions[0].DeprecationWarning = ptr.To("use v2\n")
		}, []fieldtest.Want{fieldtest.Invalid("spec.versions[0].deprecationWarning")}},

		// The name matches; the Store's metadata validation rejects it.
		{"no plural", func(c *apiextv1.CustomResourceDefinition) {
			c.Name, c.Spec.Names.Plural = ".stable.example.com", ""
		}, []fieldtest.Want{fieldtest.Required("spec.names.plural")}},
		{"no kind", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.Kind = ""
		}, []fieldtest.Want{fieldtest.Required("spec.names.kind"), fieldtest.Required("spec.names.listKind")}},
		{"plural not a DNS-1035 label", func(c *apiextv1.CustomResourceDefinition) {
			c.Name, c.Spec.Names.Plural = "cron_tabs.stable.example.com", "cron_tabs"
		}, []fieldtest.Want{fieldtest.Invalid("spec.names.plural")}},
		{"kind with an underscore", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.Kind, c.Spec.Names.ListKind = "Cron_Tab", "CronTabList"
		}, []fieldtest.Want{fieldtest.Invalid("spec.names.kind")}},
		{"listKind equal to kind", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.ListKind = "CronTab"
		}, []fieldtest.Want{fieldtest.Invalid("spec.names.listKind")}},
		{"bad short name and category", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.ShortNames = []string{"ct", "C T"}
			c.Spec.Names.Categories = []string{"all", "-x"}
		}, []fieldtest.Want{fieldtest.Invalid("spec.names.shortNames[1]"), fieldtest.Invalid("spec.names.categories[1]")}},

		{"no schema", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema = nil
		}, []fieldtest.Want{fieldtest.Required("spec.versions[0].schema.openAPIV3Schema")}},
		{"second version without a schema", func(c *apiextv1.CustomResourceDefinition) {
			secondVersion(c).Schema = &apiextv1.CustomResourceValidation{}
		}, []fieldtest.Want{fieldtest.Required("spec.versions[1].schema.openAPIV3Schema")}},
		// A schema shared by all versions is kube's spec.validation.
		{"shared schema not structural", func(c *apiextv1.CustomResourceDefinition) {
			spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			spec.Properties["image"] = apiextv1.JSONSchemaProps{}
			secondVersion(c)
		}, []fieldtest.Want{fieldtest.Required("spec.validation.openAPIV3Schema.properties[spec].properties[image].type")}},
		{"one version's schema not structural", func(c *apiextv1.CustomResourceDefinition) {
			v2 := secondVersion(c)
			v2.Schema.OpenAPIV3Schema.Properties["extra"] = apiextv1.JSONSchemaProps{}
		}, []fieldtest.Want{fieldtest.Required("spec.versions[1].schema.openAPIV3Schema.properties[extra].type")}},
		{"CEL rule that does not compile", func(c *apiextv1.CustomResourceDefinition) {
			spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			spec.XValidations = apiextv1.ValidationRules{{Rule: "self.replicas >"}}
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		}, []fieldtest.Want{fieldtest.Invalid("spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule")}},
		{"CEL rule without a rule", func(c *apiextv1.CustomResourceDefinition) {
			spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			spec.XValidations = apiextv1.ValidationRules{{Rule: "  "}}
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		}, []fieldtest.Want{fieldtest.Required("spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule")}},
		{"CEL rule that compiles", func(c *apiextv1.CustomResourceDefinition) {
			spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			spec.XValidations = apiextv1.ValidationRules{{Rule: "!has(self.replicas) || self.replicas >= 0"}}
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		}, nil},
		{"default that breaks a CEL rule", func(c *apiextv1.CustomResourceDefinition) {
			spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			replicas := spec.Properties["replicas"]
			replicas.Default = &apiextv1.JSON{Raw: []byte("-1")}
			replicas.XValidations = apiextv1.ValidationRules{{Rule: "self >= 0"}}
			spec.Properties["replicas"] = replicas
		}, []fieldtest.Want{fieldtest.Invalid("spec.validation.openAPIV3Schema.properties[spec].properties[replicas].default")}},
		{"defaults with preserveUnknownFields", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.PreserveUnknownFields = true
			spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			replicas := spec.Properties["replicas"]
			replicas.Default = &apiextv1.JSON{Raw: []byte("1")}
			spec.Properties["replicas"] = replicas
		}, []fieldtest.Want{fieldtest.Invalid("spec.preserveUnknownFields"), fieldtest.Invalid("spec.preserveUnknownFields")}},
		{"preserveUnknownFields", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.PreserveUnknownFields = true
		}, []fieldtest.Want{fieldtest.Invalid("spec.preserveUnknownFields")}},
		{"status subresource with a non-object root", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Subresources = &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}}
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Nullable = true
		}, []fieldtest.Want{fieldtest.Invalid("spec.validation.openAPIV3Schema"), fieldtest.Forbidden("spec.validation.openAPIV3Schema.nullable")}},

		{"shared printer column of a bad type", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].AdditionalPrinterColumns = []apiextv1.CustomResourceColumnDefinition{{Name: "Spec", Type: "time", JSONPath: ".spec.cronSpec"}}
		}, []fieldtest.Want{fieldtest.Invalid("spec.additionalPrinterColumns[0].type")}},
		{"one version's printer column", func(c *apiextv1.CustomResourceDefinition) {
			secondVersion(c).AdditionalPrinterColumns = []apiextv1.CustomResourceColumnDefinition{{Type: "integer", Format: "int8", JSONPath: "spec.replicas"}}
		}, []fieldtest.Want{
			fieldtest.Required("spec.versions[1].additionalPrinterColumns[0].name"),
			fieldtest.Invalid("spec.versions[1].additionalPrinterColumns[0].format"),
			fieldtest.Invalid("spec.versions[1].additionalPrinterColumns[0].JSONPath"),
		}},
		{"printer column without type and path", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].AdditionalPrinterColumns = []apiextv1.CustomResourceColumnDefinition{{Name: "X"}}
		}, []fieldtest.Want{fieldtest.Required("spec.additionalPrinterColumns[0].type"), fieldtest.Required("spec.additionalPrinterColumns[0].JSONPath")}},
		{"valid printer columns", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].AdditionalPrinterColumns = []apiextv1.CustomResourceColumnDefinition{
				{Name: "Spec", Type: "string", JSONPath: ".spec.cronSpec"},
				{Name: "Replicas", Type: "integer", Format: "int32", JSONPath: ".spec.replicas"},
				{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
			}
		}, nil},

		{"scale subresource", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Subresources = &apiextv1.CustomResourceSubresources{
				Status: &apiextv1.CustomResourceSubresourceStatus{},
				Scale: &apiextv1.CustomResourceSubresourceScale{
					SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ptr.To(".status.labelSelector"),
				},
			}
		}, nil},
		{"scale paths outside spec and status", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Subresources = &apiextv1.CustomResourceSubresources{Scale: &apiextv1.CustomResourceSubresourceScale{
				SpecReplicasPath: ".status.replicas", StatusReplicasPath: ".spec.replicas", LabelSelectorPath: ptr.To(".metadata.labels"),
			}}
		}, []fieldtest.Want{
			fieldtest.Invalid("spec.subresources.scale.specReplicasPath"),
			fieldtest.Invalid("spec.subresources.scale.statusReplicasPath"),
			fieldtest.Invalid("spec.subresources.scale.labelSelectorPath"),
		}},
		{"one version's scale paths missing or without a dot", func(c *apiextv1.CustomResourceDefinition) {
			secondVersion(c).Subresources = &apiextv1.CustomResourceSubresources{Scale: &apiextv1.CustomResourceSubresourceScale{
				StatusReplicasPath: "status.replicas",
			}}
		}, []fieldtest.Want{
			fieldtest.Required("spec.versions[1].subresources.scale.specReplicasPath"),
			fieldtest.Invalid("spec.versions[1].subresources.scale.statusReplicasPath"),
		}},

		{"selectable fields", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].SelectableFields = []apiextv1.SelectableField{{JSONPath: ".spec.cronSpec"}, {JSONPath: ".spec.replicas"}}
		}, nil},
		{"selectable field not in the schema", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].SelectableFields = []apiextv1.SelectableField{{JSONPath: ".spec.color"}}
		}, []fieldtest.Want{fieldtest.Invalid("spec.selectableFields[0].jsonPath")}},
		{"selectable field of an object, in array notation, duplicate, empty", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].SelectableFields = []apiextv1.SelectableField{
				{JSONPath: ".spec"}, {JSONPath: ".spec['image']"}, {JSONPath: ".spec.image"}, {JSONPath: ".spec.image"}, {},
			}
		}, []fieldtest.Want{
			fieldtest.Invalid("spec.selectableFields[0].jsonPath"),
			fieldtest.Invalid("spec.selectableFields[1].jsonPath"),
			fieldtest.Duplicate("spec.selectableFields[3].jsonPath"),
			fieldtest.Required("spec.selectableFields[4].jsonPath"),
		}},
		{"selectable field of one version not in its schema", func(c *apiextv1.CustomResourceDefinition) {
			v2 := secondVersion(c)
			v2.Schema.OpenAPIV3Schema.Properties["spec"].Properties["color"] = apiextv1.JSONSchemaProps{Type: "string"}
			v2.SelectableFields = []apiextv1.SelectableField{{JSONPath: ".spec.color"}, {JSONPath: ".spec.image"}}
			c.Spec.Versions[0].SelectableFields = []apiextv1.SelectableField{{JSONPath: ".spec.color"}}
		}, []fieldtest.Want{fieldtest.Invalid("spec.versions[0].selectableFields[0].jsonPath")}},
		// As in kube: selectable fields shared by versions whose schemas
		// differ are kube's spec.selectableFields, beside no spec-level
		// schema.
		{"same selectable fields, different schemas", func(c *apiextv1.CustomResourceDefinition) {
			v2 := secondVersion(c)
			v2.Schema.OpenAPIV3Schema.Properties["spec"].Properties["color"] = apiextv1.JSONSchemaProps{Type: "string"}
			v2.SelectableFields = []apiextv1.SelectableField{{JSONPath: ".spec.image"}}
			c.Spec.Versions[0].SelectableFields = []apiextv1.SelectableField{{JSONPath: ".spec.image"}}
		}, []fieldtest.Want{fieldtest.Invalid("spec.selectableFields")}},
		// As in kube: the versions share a schema, which then no longer
		// counts as the version's own.
		{"selectable fields of one version, schema shared", func(c *apiextv1.CustomResourceDefinition) {
			secondVersion(c).SelectableFields = []apiextv1.SelectableField{{JSONPath: ".spec.image"}}
		}, []fieldtest.Want{fieldtest.Invalid("spec.versions[1].selectableFields")}},
		{"too many selectable fields", func(c *apiextv1.CustomResourceDefinition) {
			spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			for i := range MaxSelectableFields + 1 {
				name := fmt.Sprintf("f%d", i)
				spec.Properties[name] = apiextv1.JSONSchemaProps{Type: "string"}
				c.Spec.Versions[0].SelectableFields = append(c.Spec.Versions[0].SelectableFields, apiextv1.SelectableField{JSONPath: ".spec." + name})
			}
		}, []fieldtest.Want{{Type: field.ErrorTypeTooMany, Field: "spec.selectableFields"}}},

		{"webhook conversion", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{
				Service: &apiextv1.ServiceReference{Namespace: "default", Name: "conv", Path: ptr.To("/convert")},
			}, "v1", "v1beta1")
		}, nil},
		{"webhook conversion without clientConfig", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(nil, "v1")
		}, []fieldtest.Want{fieldtest.Required("spec.conversion.webhookClientConfig")}},
		{"webhook conversion without webhook", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter}
		}, []fieldtest.Want{fieldtest.Required("spec.conversion.webhookClientConfig"), fieldtest.Required("spec.conversion.conversionReviewVersions")}},
		{"webhook with both url and service", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{
				URL: ptr.To("https://conv.example.com"), Service: &apiextv1.ServiceReference{Namespace: "default", Name: "conv"},
			}, "v1")
		}, []fieldtest.Want{fieldtest.Required("spec.conversion.webhookClientConfig")}},
		{"webhook url over http with user, query and fragment", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{URL: ptr.To("http://u:p@conv.example.com/x?a=b#c")}, "v1")
		}, []fieldtest.Want{
			fieldtest.Invalid("spec.conversion.webhookClientConfig.url"), fieldtest.Invalid("spec.conversion.webhookClientConfig.url"),
			fieldtest.Invalid("spec.conversion.webhookClientConfig.url"), fieldtest.Invalid("spec.conversion.webhookClientConfig.url"),
		}},
		{"webhook url without host", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{URL: ptr.To("https:///convert")}, "v1")
		}, []fieldtest.Want{fieldtest.Invalid("spec.conversion.webhookClientConfig.url")}},
		{"webhook service without name and namespace, bad port and path", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{
				Service: &apiextv1.ServiceReference{Port: ptr.To[int32](70000), Path: ptr.To("convert//Now")},
			}, "v1")
		}, []fieldtest.Want{
			fieldtest.Required("spec.conversion.webhookClientConfig.service.name"),
			fieldtest.Required("spec.conversion.webhookClientConfig.service.namespace"),
			fieldtest.Invalid("spec.conversion.webhookClientConfig.service.port"),
			fieldtest.Invalid("spec.conversion.webhookClientConfig.service.path"), // no leading /
			fieldtest.Invalid("spec.conversion.webhookClientConfig.service.path"), // empty segment
			fieldtest.Invalid("spec.conversion.webhookClientConfig.service.path"), // uppercase
		}},
		// On create an invalid caBundle is accepted: the CRD is not established.
		{"webhook with a bad caBundle", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{URL: ptr.To("https://conv.example.com"), CABundle: caBundle}, "v1")
		}, nil},
		{"webhook review versions unknown, duplicate, not DNS labels", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{URL: ptr.To("https://conv.example.com")}, "v2", "v2", "V3")
		}, []fieldtest.Want{
			fieldtest.Invalid("spec.conversion.conversionReviewVersions"),
			fieldtest.Invalid("spec.conversion.conversionReviewVersions[1]"),
			fieldtest.Invalid("spec.conversion.conversionReviewVersions[2]"),
		}},
		{"webhook conversion with preserveUnknownFields", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.PreserveUnknownFields = true
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{URL: ptr.To("https://conv.example.com")}, "v1")
		}, []fieldtest.Want{fieldtest.Invalid("spec.preserveUnknownFields"), fieldtest.Invalid("spec.conversion.strategy")}},
		{"None conversion with a webhook", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter, Webhook: &apiextv1.WebhookConversion{
				ClientConfig: &apiextv1.WebhookClientConfig{URL: ptr.To("https://conv.example.com")}, ConversionReviewVersions: []string{"v1"},
			}}
		}, []fieldtest.Want{fieldtest.Forbidden("spec.conversion.webhookClientConfig"), fieldtest.Forbidden("spec.conversion.conversionReviewVersions")}},
		{"unknown conversion strategy", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: "Magic"}
		}, []fieldtest.Want{fieldtest.NotSupported("spec.conversion.strategy")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			crd := cronTab(t)
			tc.mutate(crd)
			fieldtest.Check(t, created(crd), tc.want...)
		})
	}
}

func TestValidateCreateMessages(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*apiextv1.CustomResourceDefinition)
		want   string
	}{
		{"name", func(c *apiextv1.CustomResourceDefinition) { c.Name = "x.stable.example.com" },
			`metadata.name: Invalid value: "x.stable.example.com": must be spec.names.plural+"."+spec.group`},
		{"group", func(c *apiextv1.CustomResourceDefinition) { c.Name, c.Spec.Group = "crontabs.example", "example" },
			`spec.group: Invalid value: "example": should be a domain with at least one dot`},
		{"storage", func(c *apiextv1.CustomResourceDefinition) { secondVersion(c).Storage = true },
			`must have exactly one version marked as storage version`},
		{"unique", func(c *apiextv1.CustomResourceDefinition) { secondVersion(c).Name = "v1" },
			`must contain unique version names`},
		{"column type", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].AdditionalPrinterColumns = []apiextv1.CustomResourceColumnDefinition{{Name: "X", Type: "time", JSONPath: ".spec"}}
		}, `spec.additionalPrinterColumns[0].type: Invalid value: "time": must be one of boolean,date,integer,number,string`},
		{"scale", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Subresources = &apiextv1.CustomResourceSubresources{Scale: &apiextv1.CustomResourceSubresourceScale{
				SpecReplicasPath: ".status.replicas", StatusReplicasPath: ".status.replicas",
			}}
		}, `spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec`},
		{"webhook", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Conversion = webhook(nil, "v1") },
			`spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook`},
		{"review versions", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{URL: ptr.To("https://conv.example.com")}, "v2")
		}, `spec.conversion.conversionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1`},
		{"selectable", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].SelectableFields = []apiextv1.SelectableField{{JSONPath: ".spec.color"}}
		}, `spec.selectableFields[0].jsonPath: Invalid value: ".spec.color": is an invalid path: does not refer to a valid field`},
		{"selectable type", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].SelectableFields = []apiextv1.SelectableField{{JSONPath: ".spec"}}
		}, `must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.`},
		{"approval", func(c *apiextv1.CustomResourceDefinition) { c.Name, c.Spec.Group = "crontabs.k8s.io", "k8s.io" },
			`metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111`},
		{"preserveUnknownFields", func(c *apiextv1.CustomResourceDefinition) { c.Spec.PreserveUnknownFields = true },
			`spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			crd := cronTab(t)
			tc.mutate(crd)
			errs := created(crd)
			if agg := errs.ToAggregate(); agg == nil || !strings.Contains(agg.Error(), tc.want) {
				t.Errorf("errors = %v\nwant one containing %s", agg, tc.want)
			}
		})
	}
}

// established marks crd as served.
func established(crd *apiextv1.CustomResourceDefinition) *apiextv1.CustomResourceDefinition {
	SetCondition(crd, apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Established, Status: apiextv1.ConditionTrue})
	return crd
}

// stored returns the CronTab as the Store holds it after a create.
func stored(t testing.TB) *apiextv1.CustomResourceDefinition {
	t.Helper()
	crd := cronTab(t)
	if errs := created(crd); len(errs) > 0 {
		t.Fatalf("create: %v", errs)
	}
	crd.ResourceVersion = "1"
	return crd
}

// update runs an update through the Store's path: defaults,
// PrepareForUpdate, ValidateUpdate.
func update(crd, old *apiextv1.CustomResourceDefinition) field.ErrorList {
	s := CRDStrategy{}
	s.Default(crd)
	s.PrepareForUpdate(ctx, crd, old)
	return s.ValidateUpdate(ctx, crd, old)
}

func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*apiextv1.CustomResourceDefinition)
		mutate func(*apiextv1.CustomResourceDefinition)
		want   []fieldtest.Want
	}{
		{"nothing changes", nil, func(*apiextv1.CustomResourceDefinition) {}, nil},
		{"group", nil, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Group = "other.example.com"
		}, []fieldtest.Want{fieldtest.Invalid("spec.group")}},
		{"plural", nil, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.Plural = "crons"
		}, []fieldtest.Want{fieldtest.Invalid("spec.names.plural")}},
		{"scope and kind before established", nil, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Scope = apiextv1.ClusterScoped
			c.Spec.Names.Kind, c.Spec.Names.ListKind = "Cron", "CronList"
		}, nil},
		{"scope and kind once established", func(c *apiextv1.CustomResourceDefinition) { established(c) }, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Scope = apiextv1.ClusterScoped
			c.Spec.Names.Kind, c.Spec.Names.ListKind = "Cron", "CronList"
		}, []fieldtest.Want{fieldtest.Invalid("spec.scope"), fieldtest.Invalid("spec.names.kind")}},
		{"stored version removed from versions", nil, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Name = "v2"
		}, []fieldtest.Want{fieldtest.Invalid("status.storedVersions[0]")}},
		{"new storage version added", nil, func(c *apiextv1.CustomResourceDefinition) {
			secondVersion(c).Storage = true
			c.Spec.Versions[0].Storage = false
		}, nil},
		{"names are valid again on update", nil, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.ShortNames = []string{"C"}
		}, []fieldtest.Want{fieldtest.Invalid("spec.names.shortNames[0]")}},
		{"preserveUnknownFields kept", func(c *apiextv1.CustomResourceDefinition) { c.Spec.PreserveUnknownFields = true }, func(*apiextv1.CustomResourceDefinition) {}, nil},
		{"preserveUnknownFields set", nil, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.PreserveUnknownFields = true
		}, []fieldtest.Want{fieldtest.Invalid("spec.preserveUnknownFields")}},
		{"approval removed", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Group = "x.k8s.io"
			c.Annotations = map[string]string{"api-approved.kubernetes.io": "unapproved"}
		}, func(c *apiextv1.CustomResourceDefinition) {
			c.Annotations = nil
		}, []fieldtest.Want{fieldtest.Required("metadata.annotations[api-approved.kubernetes.io]")}},
		// An old CRD already without approval (stored before the rule) may
		// still be updated.
		{"approval missing before", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Group = "x.k8s.io"
		}, func(c *apiextv1.CustomResourceDefinition) {
			c.Labels = map[string]string{"a": "b"}
		}, nil},
		{"bad caBundle while not established", nil, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{URL: ptr.To("https://conv.example.com"), CABundle: []byte("junk")}, "v1")
		}, nil},
		{"bad caBundle once established", func(c *apiextv1.CustomResourceDefinition) { established(c) }, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{URL: ptr.To("https://conv.example.com"), CABundle: []byte("junk")}, "v1")
		}, []fieldtest.Want{fieldtest.Invalid("spec.conversion.webhookClientConfig.caBundle")}},
		{"bad caBundle kept once established", func(c *apiextv1.CustomResourceDefinition) {
			established(c)
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{URL: ptr.To("https://conv.example.com"), CABundle: []byte("junk")}, "v1")
		}, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion.Webhook.ClientConfig.URL = ptr.To("https://conv2.example.com")
		}, nil},
		{"unknown review versions kept", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{URL: ptr.To("https://conv.example.com")}, "v2")
		}, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion.Webhook.ConversionReviewVersions = []string{"v3"}
		}, nil},
		{"too many selectable fields kept", func(c *apiextv1.CustomResourceDefinition) {
			spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			for i := range MaxSelectableFields + 1 {
				name := fmt.Sprintf("f%d", i)
				spec.Properties[name] = apiextv1.JSONSchemaProps{Type: "string"}
				c.Spec.Versions[0].SelectableFields = append(c.Spec.Versions[0].SelectableFields, apiextv1.SelectableField{JSONPath: ".spec." + name})
			}
		}, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.ShortNames = []string{"cron"}
		}, nil},
		{"too many selectable fields changed", func(c *apiextv1.CustomResourceDefinition) {
			spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			for i := range MaxSelectableFields + 2 {
				name := fmt.Sprintf("f%d", i)
				spec.Properties[name] = apiextv1.JSONSchemaProps{Type: "string"}
				if i <= MaxSelectableFields {
					c.Spec.Versions[0].SelectableFields = append(c.Spec.Versions[0].SelectableFields, apiextv1.SelectableField{JSONPath: ".spec." + name})
				}
			}
		}, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].SelectableFields = append(c.Spec.Versions[0].SelectableFields, apiextv1.SelectableField{JSONPath: ".spec.f9"})
		}, []fieldtest.Want{{Type: field.ErrorTypeTooMany, Field: "spec.selectableFields"}}},
		// kube's ratchet: an old schema with a non-atomic set keeps the
		// right to have one.
		{"non-atomic set items kept", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["tags"] = *setOfObjects(t)
		}, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.ShortNames = []string{"cron"}
		}, nil},
		{"non-atomic set items added", nil, func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["tags"] = *setOfObjects(t)
		}, []fieldtest.Want{fieldtest.Invalid("spec.validation.openAPIV3Schema.properties[spec].properties[tags].items.x-kubernetes-map-type")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := cronTab(t)
			CRDStrategy{}.Default(old)
			CRDStrategy{}.PrepareForCreate(ctx, old)
			if tc.old != nil {
				tc.old(old)
			}
			crd := old.DeepCopy()
			tc.mutate(crd)
			fieldtest.Check(t, update(crd, old), tc.want...)
		})
	}
}

// setOfObjects is an x-kubernetes-list-type=set array of granular objects,
// which kube accepts only if the old CRD had one.
func setOfObjects(t testing.TB) *apiextv1.JSONSchemaProps {
	return props(t, `
type: array
x-kubernetes-list-type: set
items:
  type: object
  properties:
    name:
      type: string
`)
}

func TestPrepareForUpdate(t *testing.T) {
	old := stored(t)
	established(old)
	old.Generation = 3

	// Status is kept; a metadata-only change keeps the generation.
	crd := old.DeepCopy()
	crd.Status = apiextv1.CustomResourceDefinitionStatus{}
	crd.Labels = map[string]string{"a": "b"}
	CRDStrategy{}.PrepareForUpdate(ctx, crd, old)
	if !reflect.DeepEqual(crd.Status, old.Status) || crd.Generation != 3 {
		t.Errorf("status = %+v, generation %d; want old status, 3", crd.Status, crd.Generation)
	}

	// A spec change bumps it; a new storage version is recorded.
	crd = old.DeepCopy()
	secondVersion(crd).Storage = true
	crd.Spec.Versions[0].Storage = false
	CRDStrategy{}.PrepareForUpdate(ctx, crd, old)
	if crd.Generation != 4 {
		t.Errorf("generation = %d, want 4", crd.Generation)
	}
	if want := []string{"v1", "v2"}; !reflect.DeepEqual(crd.Status.StoredVersions, want) {
		t.Errorf("storedVersions = %v, want %v", crd.Status.StoredVersions, want)
	}
	if !reflect.DeepEqual(old.Status.StoredVersions, []string{"v1"}) {
		t.Errorf("old storedVersions changed: %v", old.Status.StoredVersions)
	}
}

func TestStatusStrategy(t *testing.T) {
	old := stored(t)
	s := CRDStatusStrategy{}

	crd := old.DeepCopy()
	crd.Spec.Group = "changed.example.com"
	crd.Status.AcceptedNames = crd.Spec.Names
	SetCondition(crd, apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.NamesAccepted, Status: apiextv1.ConditionTrue, Reason: "NoConflicts"})
	s.PrepareForUpdate(ctx, crd, old)
	if crd.Spec.Group != "stable.example.com" {
		t.Errorf("spec not kept: group %q", crd.Spec.Group)
	}
	fieldtest.Check(t, s.ValidateUpdate(ctx, crd, old))
	if crd.Status.AcceptedNames.Kind != "CronTab" || !IsConditionTrue(crd, apiextv1.NamesAccepted) {
		t.Errorf("status not taken: %+v", crd.Status)
	}

	tests := []struct {
		name   string
		mutate func(*apiextv1.CustomResourceDefinitionStatus)
		want   []fieldtest.Want
	}{
		{"bad accepted names", func(st *apiextv1.CustomResourceDefinitionStatus) {
			st.AcceptedNames = apiextv1.CustomResourceDefinitionNames{Plural: "Crons", Kind: "cron tab", ListKind: "cron tab", ShortNames: []string{"_"}}
		}, []fieldtest.Want{
			fieldtest.Invalid("status.acceptedNames.plural"),
			fieldtest.Invalid("status.acceptedNames.kind"),
			fieldtest.Invalid("status.acceptedNames.listKind"),
			fieldtest.Invalid("status.acceptedNames.listKind"),
			fieldtest.Invalid("status.acceptedNames.shortNames[0]"),
		}},
		// As in kube, the status subresource may prune storedVersions
		// (storage migration does).
		{"storedVersions emptied", func(st *apiextv1.CustomResourceDefinitionStatus) {
			st.StoredVersions = nil
		}, nil},
		{"storedVersions not in versions", func(st *apiextv1.CustomResourceDefinitionStatus) {
			st.StoredVersions = []string{"v0"}
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			crd := old.DeepCopy()
			tc.mutate(&crd.Status)
			s.PrepareForUpdate(ctx, crd, old)
			fieldtest.Check(t, s.ValidateUpdate(ctx, crd, old), tc.want...)
		})
	}
}

func TestValidateStoredVersions(t *testing.T) {
	versions := []apiextv1.CustomResourceDefinitionVersion{{Name: "v1"}, {Name: "v2", Storage: true}}
	p := field.NewPath("status", "storedVersions")
	tests := []struct {
		stored []string
		want   []fieldtest.Want
	}{
		{nil, []fieldtest.Want{fieldtest.Invalid("status.storedVersions")}},
		{[]string{"v1"}, []fieldtest.Want{fieldtest.Invalid("status.storedVersions")}},
		{[]string{"v1", "v2"}, nil},
		{[]string{"v0", "v2", "v3", "v0"}, []fieldtest.Want{fieldtest.Invalid("status.storedVersions[2]"), fieldtest.Invalid("status.storedVersions[3]")}},
	}
	for _, tc := range tests {
		fieldtest.Check(t, ValidateStoredVersions(tc.stored, versions, p), tc.want...)
	}
	errs := ValidateStoredVersions([]string{"v0", "v2"}, versions, p)
	want := "status.storedVersions[0]: Invalid value: \"v0\": missing from spec.versions; v0 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v0 and removes v0 from status.storedVersions"
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("errors = %v\nwant %s", errs, want)
	}
}

func TestValidCABundle(t *testing.T) {
	// A self-signed certificate from the PKI tests would do; any PEM
	// certificate parses.
	pem := "-----BEGIN CERTIFICATE-----\n" + base64.StdEncoding.EncodeToString([]byte("junk")) + "\n-----END CERTIFICATE-----\n"
	if errs := ValidateCABundle(field.NewPath("caBundle"), []byte(pem)); len(errs) != 1 {
		t.Errorf("a PEM block that is no certificate: errors = %v", errs)
	}
	if errs := ValidateCABundle(field.NewPath("caBundle"), []byte("junk")); len(errs) != 1 {
		t.Errorf("junk: errors = %v", errs)
	}
}

func TestWarnings(t *testing.T) {
	crd := cronTab(t)
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Properties["cronSpec"] = apiextv1.JSONSchemaProps{Type: "string", Format: "cron"}
	spec.Properties["uid"] = apiextv1.JSONSchemaProps{Type: "string", Format: "k8s-short-name"}
	spec.Properties["count"] = apiextv1.JSONSchemaProps{Type: "integer", Format: "int16"}
	spec.Properties["tags"] = apiextv1.JSONSchemaProps{
		Type: "array", XListType: ptr.To("set"),
		Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "array", Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "string"}}}},
	}
	got := CRDStrategy{}.WarningsOnCreate(ctx, crd)
	want := []string{
		`unrecognized format "int16"`,
		`unrecognized format "cron"`,
		`x-kubernetes-list-type: set for items of type "array" is not supported by server-side apply or CEL validation rules`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("create warnings = %q\nwant %q", got, want)
	}

	// On update, only what is new.
	newer := crd.DeepCopy()
	newer.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["when"] = apiextv1.JSONSchemaProps{Type: "string", Format: "time"}
	got = CRDStrategy{}.WarningsOnUpdate(ctx, newer, crd)
	if want := []string{`unrecognized format "time"`}; !reflect.DeepEqual(got, want) {
		t.Errorf("update warnings = %q\nwant %q", got, want)
	}
	if got := (CRDStatusStrategy{}).WarningsOnUpdate(ctx, newer, crd); got != nil {
		t.Errorf("status warnings = %q", got)
	}
}
