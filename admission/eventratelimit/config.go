package eventratelimit

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// GroupVersion is the configuration's, the only one kube reads.
const GroupVersion = "eventratelimit.admission.k8s.io/v1alpha1"

// LimitType is what a limit's buckets are per.
type LimitType string

// kube's limit types.
const (
	ServerLimitType          LimitType = "Server"
	NamespaceLimitType       LimitType = "Namespace"
	UserLimitType            LimitType = "User"
	SourceAndObjectLimitType LimitType = "SourceAndObject"
)

// Configuration is kube's eventratelimit.admission.k8s.io/v1alpha1
// Configuration.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`
	Limits          []Limit `json:"limits"`
}

// Limit is one token bucket limit: qps tokens a second up to burst.
type Limit struct {
	Type      LimitType `json:"type"`
	QPS       int32     `json:"qps"`
	Burst     int32     `json:"burst"`
	CacheSize int32     `json:"cacheSize,omitempty"`
}

// readConfiguration decodes and validates the configuration as kube does.
func readConfiguration(data []byte) (*Configuration, error) {
	c := &Configuration{}
	if len(data) > 0 {
		if err := yaml.Unmarshal(data, c); err != nil {
			return nil, err
		}
		switch {
		case c.Kind == "":
			return nil, fmt.Errorf("Object 'Kind' is missing in '%s'", data)
		case c.APIVersion != GroupVersion || c.Kind != "Configuration":
			return nil, fmt.Errorf("no kind %q is registered for version %q", c.Kind, c.APIVersion)
		}
	}
	if errs := validate(c); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return c, nil
}

var limitTypes = []string{string(NamespaceLimitType), string(ServerLimitType), string(SourceAndObjectLimitType), string(UserLimitType)}

// validate is kube's check of the configuration.
func validate(c *Configuration) field.ErrorList {
	var errs field.ErrorList
	limits := field.NewPath("limits")
	if len(c.Limits) == 0 {
		errs = append(errs, field.Invalid(limits, c.Limits, "must not be empty"))
	}
	for i, l := range c.Limits {
		idx := limits.Index(i)
		if n := sort.SearchStrings(limitTypes, string(l.Type)); n == len(limitTypes) || limitTypes[n] != string(l.Type) {
			errs = append(errs, field.NotSupported(idx.Child("type"), l.Type, limitTypes))
		}
		if l.Burst <= 0 {
			errs = append(errs, field.Invalid(idx.Child("burst"), l.Burst, "must be positive"))
		}
		if l.QPS <= 0 {
			errs = append(errs, field.Invalid(idx.Child("qps"), l.QPS, "must be positive"))
		}
		if l.Type != ServerLimitType && l.CacheSize < 0 {
			errs = append(errs, field.Invalid(idx.Child("cacheSize"), l.CacheSize, "must not be negative"))
		}
	}
	return errs
}
