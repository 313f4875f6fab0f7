package audit

import (
	"bytes"
	"context"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

// maxUserAgent is the longest user agent kept; longer ones are cut.
const maxUserAgent = 1024

// LogRequestMetadata records who sent r and what it asks for.
func (ac *Context) LogRequestMetadata(r *http.Request, user *authn.User, info *request.Info) {
	ac.visit(func(ev *auditv1.Event) {
		ev.Verb = info.Verb
		ev.RequestURI = r.URL.RequestURI()
		ev.UserAgent = r.UserAgent()
		if len(ev.UserAgent) > maxUserAgent {
			ev.UserAgent = ev.UserAgent[:maxUserAgent] + "...TRUNCATED"
		}
		for _, ip := range utilnet.SourceIPs(r) {
			ev.SourceIPs = append(ev.SourceIPs, ip.String())
		}
		if user != nil {
			ev.User = *userInfo(user)
		}
		if info.IsResourceRequest {
			ev.ObjectRef = &auditv1.ObjectReference{
				Resource: info.Resource, Namespace: info.Namespace, Name: info.Name,
				APIGroup: info.APIGroup, APIVersion: info.APIVersion, Subresource: info.Subresource,
			}
		}
	})
}

// LogRequestObject records the object a write sends, encoded in gv, the
// version the client sent it in. It also fills the object reference from
// the object's metadata (the name of a create). It does nothing without
// auditing and encodes nothing below the Request level.
func LogRequestObject(ctx context.Context, obj runtime.Object, gv schema.GroupVersion, ns runtime.NegotiatedSerializer) {
	ac := From(ctx)
	level := ac.Level()
	if level == auditv1.LevelNone {
		return
	}
	var raw *runtime.Unknown
	if atLeast(level, auditv1.LevelRequest) {
		raw = encode(ac, obj, gv, ns)
	}
	ac.visit(func(ev *auditv1.Event) {
		if ev.ObjectRef == nil {
			ev.ObjectRef = &auditv1.ObjectReference{}
		}
		if m, err := meta.Accessor(obj); err == nil {
			ref := ev.ObjectRef
			ref.Namespace = orElse(ref.Namespace, m.GetNamespace())
			ref.Name = orElse(ref.Name, m.GetName())
			if ref.UID == "" {
				ref.UID = m.GetUID()
			}
			ref.ResourceVersion = orElse(ref.ResourceVersion, m.GetResourceVersion())
		}
		if raw != nil {
			ev.RequestObject = raw
		}
	})
}

// LogRequestPatch records a patch as sent, at the Request level and above.
func LogRequestPatch(ctx context.Context, patch []byte) {
	ac := From(ctx)
	if !atLeast(ac.Level(), auditv1.LevelRequest) {
		return
	}
	ac.visit(func(ev *auditv1.Event) {
		ev.RequestObject = &runtime.Unknown{Raw: patch, ContentType: runtime.ContentTypeJSON}
	})
}

// LogResponseObject records the answer to a request: a Status's details
// at any level, and the object itself, encoded in gv, at RequestResponse.
func LogResponseObject(ctx context.Context, obj runtime.Object, gv schema.GroupVersion, ns runtime.NegotiatedSerializer) {
	ac := From(ctx)
	level := ac.Level()
	if level == auditv1.LevelNone {
		return
	}
	status, _ := obj.(*metav1.Status)
	var raw *runtime.Unknown
	if level == auditv1.LevelRequestResponse {
		raw = encode(ac, obj, gv, ns)
	}
	ac.visit(func(ev *auditv1.Event) {
		if status != nil {
			ev.ResponseStatus = &metav1.Status{Status: status.Status, Message: status.Message,
				Reason: status.Reason, Details: status.Details, Code: status.Code}
		}
		if raw != nil {
			ev.ResponseObject = raw
		}
	})
}

// encode is obj as JSON in gv, without managed fields if the policy says
// so; nil if it does not encode.
func encode(ac *Context, obj runtime.Object, gv schema.GroupVersion, ns runtime.NegotiatedSerializer) *runtime.Unknown {
	ac.mu.Lock()
	omitManagedFields := ac.config.OmitManagedFields
	ac.mu.Unlock()
	if omitManagedFields {
		obj = withoutManagedFields(obj)
	}
	info, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		return nil
	}
	var buf bytes.Buffer
	if err := ns.EncoderForVersion(info.Serializer, gv).Encode(obj, &buf); err != nil {
		return nil
	}
	return &runtime.Unknown{Raw: bytes.TrimSuffix(buf.Bytes(), []byte("\n")), ContentType: runtime.ContentTypeJSON}
}

// withoutManagedFields is a copy of obj, of a list's items or of a
// table's rows without managed fields; obj itself if it has none.
func withoutManagedFields(obj runtime.Object) runtime.Object {
	_, accessorErr := meta.Accessor(obj)
	isList := meta.IsListType(obj)
	table, isTable := obj.(*metav1.Table)
	if accessorErr != nil && !isList && !isTable {
		return obj
	}
	obj = obj.DeepCopyObject()
	drop := func(o runtime.Object) error {
		if o == nil {
			return nil
		}
		m, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		m.SetManagedFields(nil)
		return nil
	}
	if accessorErr == nil {
		_ = drop(obj)
	}
	if isList {
		_ = meta.EachListItem(obj, drop)
	}
	if isTable {
		table = obj.(*metav1.Table)
		for i := range table.Rows {
			_ = drop(table.Rows[i].Object.Object)
		}
	}
	return obj
}

// atLeast reports whether level records at least as much as min.
func atLeast(level, min auditv1.Level) bool {
	return levelOrder(level) >= levelOrder(min)
}

func levelOrder(l auditv1.Level) int {
	switch l {
	case auditv1.LevelMetadata:
		return 1
	case auditv1.LevelRequest:
		return 2
	case auditv1.LevelRequestResponse:
		return 3
	}
	return 0
}

func orElse(v, fallback string) string {
	if v != "" {
		return v
	}
	return fallback
}
