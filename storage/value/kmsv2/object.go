package kmsv2

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DEKSourceType is how the plaintext of an EncryptedObject's DEK source
// gives the data key (kube's EncryptedDEKSourceType enum).
type DEKSourceType int32

const (
	// AESGCMKey: the source is the AES-GCM key itself.
	AESGCMKey DEKSourceType = 0
	// HKDFSeed: the source is a seed; each value's key is
	// HKDF-SHA256(seed, the value's first 32 bytes).
	HKDFSeed DEKSourceType = 1
)

// EncryptedObject is the stored form of a KMS v2 value, the protobuf
// message k8s.io/apiserver's kmsv2/v2 package defines:
//
//	bytes encryptedData = 1; string keyID = 2; bytes encryptedDEKSource = 3;
//	map<string, bytes> annotations = 4; EncryptedDEKSourceType encryptedDEKSourceType = 5;
//
// encoded and decoded here with protowire so that the bytes are the ones
// kube writes and reads.
type EncryptedObject struct {
	EncryptedData      []byte
	KeyID              string
	EncryptedDEKSource []byte
	Annotations        map[string][]byte
	DEKSourceType      DEKSourceType
}

// kube's limits on what a plugin returns.
const (
	keyIDMaxSize              = 1024
	encryptedDEKSourceMaxSize = 1024
	annotationsMaxSize        = 32 * 1024
)

// Marshal encodes o as protobuf, fields in number order and annotations
// sorted by key (proto3 omits empty fields).
func (o *EncryptedObject) Marshal() []byte {
	var b []byte
	if len(o.EncryptedData) > 0 {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, o.EncryptedData)
	}
	if o.KeyID != "" {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, o.KeyID)
	}
	if len(o.EncryptedDEKSource) > 0 {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendBytes(b, o.EncryptedDEKSource)
	}
	keys := make([]string, 0, len(o.Annotations))
	for k := range o.Annotations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var entry []byte
		entry = protowire.AppendTag(entry, 1, protowire.BytesType)
		entry = protowire.AppendString(entry, k)
		if v := o.Annotations[k]; len(v) > 0 {
			entry = protowire.AppendTag(entry, 2, protowire.BytesType)
			entry = protowire.AppendBytes(entry, v)
		}
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendBytes(b, entry)
	}
	if o.DEKSourceType != 0 {
		b = protowire.AppendTag(b, 5, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(o.DEKSourceType))
	}
	return b
}

var errMalformed = errors.New("malformed EncryptedObject")

// Unmarshal decodes data into a new EncryptedObject, skipping unknown
// fields as protobuf does.
func Unmarshal(data []byte) (*EncryptedObject, error) {
	o := &EncryptedObject{}
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return nil, errMalformed
		}
		data = data[n:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			o.EncryptedData, n = consumeBytes(data)
		case num == 2 && typ == protowire.BytesType:
			var v []byte
			v, n = consumeBytes(data)
			o.KeyID = string(v)
		case num == 3 && typ == protowire.BytesType:
			o.EncryptedDEKSource, n = consumeBytes(data)
		case num == 4 && typ == protowire.BytesType:
			var entry []byte
			if entry, n = consumeBytes(data); n >= 0 {
				if err := o.addAnnotation(entry); err != nil {
					return nil, err
				}
			}
		case num == 5 && typ == protowire.VarintType:
			var v uint64
			v, n = protowire.ConsumeVarint(data)
			o.DEKSourceType = DEKSourceType(int32(v))
		default:
			n = protowire.ConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			return nil, errMalformed
		}
		data = data[n:]
	}
	return o, nil
}

func consumeBytes(data []byte) ([]byte, int) {
	v, n := protowire.ConsumeBytes(data)
	return slices.Clone(v), n
}

func (o *EncryptedObject) addAnnotation(entry []byte) error {
	var key string
	var val []byte
	for len(entry) > 0 {
		num, typ, n := protowire.ConsumeTag(entry)
		if n < 0 {
			return errMalformed
		}
		entry = entry[n:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			var v []byte
			v, n = consumeBytes(entry)
			key = string(v)
		case num == 2 && typ == protowire.BytesType:
			val, n = consumeBytes(entry)
		default:
			n = protowire.ConsumeFieldValue(num, typ, entry)
		}
		if n < 0 {
			return errMalformed
		}
		entry = entry[n:]
	}
	if o.Annotations == nil {
		o.Annotations = map[string][]byte{}
	}
	o.Annotations[key] = val
	return nil
}

// Validate applies kube's checks, with its messages.
func (o *EncryptedObject) Validate() error {
	if o.DEKSourceType != AESGCMKey && o.DEKSourceType != HKDFSeed {
		return fmt.Errorf("unknown encryptedDEKSourceType: %d", o.DEKSourceType)
	}
	if len(o.EncryptedData) == 0 {
		return errors.New("encrypted data is empty")
	}
	if err := validateDEKSource(o.EncryptedDEKSource); err != nil {
		return fmt.Errorf("failed to validate encrypted DEK source: %w", err)
	}
	if err := validateKeyID(o.KeyID); err != nil {
		return fmt.Errorf("failed to validate key id: %w", err)
	}
	if err := validateAnnotations(o.Annotations); err != nil {
		return fmt.Errorf("failed to validate annotations: %w", err)
	}
	return nil
}

func validateDEKSource(src []byte) error {
	if len(src) == 0 {
		return errors.New("encrypted DEK source is empty")
	}
	if len(src) > encryptedDEKSourceMaxSize {
		return fmt.Errorf("encrypted DEK source is %d bytes, which exceeds the max size of %d", len(src), encryptedDEKSourceMaxSize)
	}
	return nil
}

func validateKeyID(keyID string) error {
	if keyID == "" {
		return errors.New("keyID is empty")
	}
	if len(keyID) > keyIDMaxSize {
		return fmt.Errorf("keyID is %d bytes, which exceeds the max size of %d", len(keyID), keyIDMaxSize)
	}
	return nil
}

func validateAnnotations(annotations map[string][]byte) error {
	var msgs []string
	size := 0
	for k, v := range annotations {
		for _, e := range validation.IsFullyQualifiedDomainName(field.NewPath("annotations"), k) {
			msgs = append(msgs, e.Error())
		}
		size += len(k) + len(v)
	}
	if size > annotationsMaxSize {
		msgs = append(msgs, fmt.Sprintf("total size of annotations is %d, which exceeds the max size of %d", size, annotationsMaxSize))
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, ", "))
}
