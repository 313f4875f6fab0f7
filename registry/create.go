package registry

import (
	"context"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage"
)

// generateNameAttempts is how often a create with generateName is tried
// before a name clash is reported, as kube retries since 1.32.
const generateNameAttempts = 8

// Create stores a new object.
func (s *Store) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	generated := m.GetName() == "" && m.GetGenerateName() != ""
	for attempt := 1; ; attempt++ {
		out, err := s.createOnce(ctx, obj.DeepCopyObject(), validate, opts)
		if generated && apierrors.IsAlreadyExists(err) && attempt < generateNameAttempts {
			continue
		}
		return out, err
	}
}

func (s *Store) createOnce(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	// kube's storage refuses (with a 500, after admission) an object that
	// names a resourceVersion to be created at; beforeCreate clears it.
	rv := ""
	if m, err := meta.Accessor(obj); err == nil {
		rv = m.GetResourceVersion()
	}
	if err := s.beforeCreate(ctx, obj); err != nil {
		return nil, err
	}
	if validate != nil {
		// Admission reads the object it is given (rest.ValidateObjectFunc):
		// no copy of it.
		if err := validate(ctx, obj); err != nil {
			return nil, err
		}
	}
	m, _ := meta.Accessor(obj)
	name := m.GetName()
	key, err := s.objectKey(ctx, name)
	if err != nil {
		return nil, err
	}
	if isDryRun(opts.DryRun) {
		// A dry run answers as a create would, AlreadyExists included.
		err := s.storage.Get(ctx, key, storage.GetOptions{}, s.newFunc())
		if err == nil {
			return nil, apierrors.NewAlreadyExists(s.resource, name)
		}
		if !apierrors.IsNotFound(s.interpretError(err, name)) {
			return nil, s.interpretError(err, name)
		}
		return obj, nil
	}
	if rv != "" && rv != "0" {
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
			Code: http.StatusInternalServerError, Message: "resourceVersion should not be set on objects to be created"}}
	}
	s.notifyMayCreate()
	out := s.newFunc()
	if err := s.storage.Create(ctx, key, obj, out, s.ttlOf(obj)); err != nil {
		return nil, s.interpretError(err, name)
	}
	s.defaultObject(out)
	return out, nil
}

func (s *Store) ttlOf(obj runtime.Object) uint64 {
	if s.ttl == nil {
		return 0
	}
	return s.ttl(obj)
}

func isDryRun(dryRun []string) bool { return len(dryRun) > 0 }

// notifyMayCreate tells StoreConfig.MayCreate of a write that may create.
func (s *Store) notifyMayCreate() {
	if s.mayCreate != nil {
		s.mayCreate()
	}
}
