package testserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRDs creates the CRDs o names and waits until each is
// established and its served versions are in discovery, as envtest waits.
func (s *Server) installCRDs(o options) error {
	crds, err := readCRDs(o.crdPaths, o.crdDocs)
	if err != nil || len(crds) == 0 {
		return err
	}
	client, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	timeout := o.crdTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, crd := range crds {
		if _, err := client.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("installing CRD %s: %w", crd.GetName(), err)
		}
	}
	disco, err := discovery.NewDiscoveryClientForConfig(s.Config)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if err := waitServed(ctx, client, disco, crd); err != nil {
			return fmt.Errorf("CRD %s: %w", crd.GetName(), err)
		}
	}
	return nil
}

// waitServed waits until crd is Established and each served version
// lists its plural in discovery.
func waitServed(ctx context.Context, client dynamic.Interface, disco discovery.DiscoveryInterface, crd *unstructured.Unstructured) error {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	return wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := client.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if !established(got) {
			return false, nil
		}
		for _, v := range versions {
			m, _ := v.(map[string]any)
			if served, _ := m["served"].(bool); !served {
				continue
			}
			name, _ := m["name"].(string)
			list, err := disco.ServerResourcesForGroupVersion(group + "/" + name)
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil || !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == plural }) {
				return false, nil
			}
		}
		return true, nil
	})
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// readCRDs reads the CustomResourceDefinitions in paths (files, or the
// .json, .yaml and .yml files of directories) and docs.
func readCRDs(paths []string, docs [][]byte) ([]*unstructured.Unstructured, error) {
	var crds []*unstructured.Unstructured
	for _, doc := range docs {
		found, err := decodeCRDs(doc)
		if err != nil {
			return nil, err
		}
		crds = append(crds, found...)
	}
	files, err := crdFiles(paths)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		found, err := decodeCRDs(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		crds = append(crds, found...)
	}
	return crds, nil
}

// crdFiles lists the files of paths: each file, and each directory's
// .json, .yaml and .yml files.
func crdFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("CRD path: %w", err)
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			switch strings.ToLower(filepath.Ext(e.Name())) {
			case ".json", ".yaml", ".yml":
				if !e.IsDir() {
					files = append(files, filepath.Join(p, e.Name()))
				}
			}
		}
	}
	return files, nil
}

// decodeCRDs decodes the YAML or JSON documents of data and keeps the
// CustomResourceDefinitions, as envtest skips other kinds.
func decodeCRDs(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var crds []*unstructured.Unstructured
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return crds, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decoding a CRD: %w", err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if obj == nil || u.GetKind() != "CustomResourceDefinition" || u.GroupVersionKind().Group != "apiextensions.k8s.io" {
			continue
		}
		crds = append(crds, u)
	}
}
