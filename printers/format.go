package printers

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// objectMetaDoc describes the metadata fields, for the Name and Age columns.
var objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

// column is a column every -o output shows.
func column(name, typ, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: description}
}

// wideColumn is a column only -o wide shows.
func wideColumn(name, typ, description string) metav1.TableColumnDefinition {
	return wide(column(name, typ, description))
}

// wide makes c a column only -o wide shows.
func wide(c metav1.TableColumnDefinition) metav1.TableColumnDefinition {
	c.Priority = 1
	return c
}

// nameColumn is the object's name, which kubectl uses to refer to it.
func nameColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]}
}

// ageColumn is the time since the object was created.
func ageColumn() metav1.TableColumnDefinition {
	return column("Age", "string", objectMetaDoc["creationTimestamp"])
}

// Shared descriptions of the columns of workload templates.
const (
	containersDoc = "Names of each container in the template."
	imagesDoc     = "Images referenced by each container in the template."
)

// since is how long ago t was, as kubectl words it ("5m", "3d4h"), or
// "<unknown>" when t is unset.
func since(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// sinceMicro is since for a MicroTime.
func sinceMicro(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// containerCells lists the names and the images of containers, comma
// separated.
func containerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	im := make([]string, len(containers))
	for i, c := range containers {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// boolPtr prints an optional bool as True, False or <unset>.
func boolPtr(b *bool) string {
	switch {
	case b == nil:
		return "<unset>"
	case *b:
		return "True"
	}
	return "False"
}

// firstOf lists the first max values, comma separated, and how many more
// there are; empty when that lists nothing.
func firstOf(values []string, max int, empty string) string {
	if len(values) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(values[:max], ","), len(values)-max)
	}
	if s := strings.Join(values, ","); s != "" {
		return s
	}
	return empty
}

// orNone is s, or "<none>" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// deref is *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// sortedKeys lists the keys of a set in order.
func sortedKeys(set map[string]bool) []string {
	return slices.Sorted(maps.Keys(set))
}
