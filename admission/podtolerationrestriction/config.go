package podtolerationrestriction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/apis/core"
)

// GroupVersion is the configuration's, the only one kube reads.
const GroupVersion = "podtolerationrestriction.admission.k8s.io/v1alpha1"

// Configuration is kube's podtolerationrestriction.admission.k8s.io/v1alpha1
// Configuration: the cluster's default tolerations and whitelist.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`
	Default         []corev1.Toleration `json:"default,omitempty"`
	Whitelist       []corev1.Toleration `json:"whitelist,omitempty"`
}

// readConfiguration decodes and validates the plugin's configuration, as
// kube does: of its one kind and version, tolerations checked as a pod's.
func readConfiguration(data []byte) (*Configuration, error) {
	c := &Configuration{}
	if len(data) == 0 {
		return c, nil
	}
	if err := yaml.Unmarshal(data, c); err != nil {
		return nil, err
	}
	switch {
	case c.Kind == "":
		return nil, fmt.Errorf("Object 'Kind' is missing in '%s'", data)
	case c.APIVersion != GroupVersion || c.Kind != "Configuration":
		return nil, fmt.Errorf("no kind %q is registered for version %q", c.Kind, c.APIVersion)
	}
	fld := field.NewPath("podtolerationrestriction")
	errs := append(core.ValidateTolerations(c.Default, fld.Child("default")), core.ValidateTolerations(c.Whitelist, fld.Child("whitelist"))...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid config: %v", errs)
	}
	return c, nil
}
