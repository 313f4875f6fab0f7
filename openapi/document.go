package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"fmt"
	"sync"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
)

// document is one encoded OpenAPI document. Its protobuf and gzip forms
// are made on first use: most clients ask for one form only.
type document struct {
	json     []byte
	etag     string // SHA-512 of json in upper-case hex, as kube's
	modified time.Time
	toProto  func(json []byte) ([]byte, error) // nil: JSON only

	protoOnce sync.Once
	proto     []byte
	protoErr  error

	gzipOnce [2]sync.Once // of json, of proto
	gzipped  [2][]byte
}

func newDocument(json []byte, toProto func([]byte) ([]byte, error)) *document {
	return &document{
		json: json, etag: fmt.Sprintf("%X", sha512.Sum512(json)), modified: time.Now(), toProto: toProto,
	}
}

// body returns the document as JSON or protobuf, gzipped or not.
func (d *document) body(asProto, gzipped bool) ([]byte, error) {
	body, form := d.json, 0
	if asProto {
		d.protoOnce.Do(func() { d.proto, d.protoErr = d.toProto(d.json) })
		if d.protoErr != nil {
			return nil, d.protoErr
		}
		body, form = d.proto, 1
	}
	if !gzipped {
		return body, nil
	}
	d.gzipOnce[form].Do(func() { d.gzipped[form] = compress(body) })
	return d.gzipped[form], nil
}

func compress(body []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(body) // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	return buf.Bytes()
}

// protoV2 converts a swagger 2.0 JSON document to gnostic's protobuf.
func protoV2(json []byte) ([]byte, error) {
	doc, err := openapiv2.ParseDocument(json)
	if err != nil {
		return nil, fmt.Errorf("converting /openapi/v2 to protobuf: %w", err)
	}
	return proto.Marshal(doc)
}

// protoV3 converts an OpenAPI 3.0 JSON document to gnostic's protobuf.
func protoV3(json []byte) ([]byte, error) {
	doc, err := openapiv3.ParseDocument(json)
	if err != nil {
		return nil, fmt.Errorf("converting an OpenAPI v3 document to protobuf: %w", err)
	}
	return proto.Marshal(doc)
}

// lazyDoc is a document built on first use. A failed build is not retried:
// the service makes a new lazyDoc when the inputs change.
type lazyDoc struct {
	once sync.Once
	doc  *document
	err  error
}

func (l *lazyDoc) get(build func() (*document, error)) (*document, error) {
	l.once.Do(func() { l.doc, l.err = build() })
	return l.doc, l.err
}
