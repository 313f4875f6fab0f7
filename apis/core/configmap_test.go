package core

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestValidateConfigMap(t *testing.T) {
	big := strings.Repeat("x", MaxSecretSize/2+1)
	tests := []struct {
		name   string
		data   map[string]string
		binary map[string][]byte
		want   []wantErr
	}{
		{"empty", nil, nil, nil},
		{"valid keys", map[string]string{"a.b": "1", "_c-D": "2"}, map[string][]byte{"bin.dat": {1}}, nil},
		{"bad data key", map[string]string{"a/b": "1"}, nil, []wantErr{inv("data[a/b]")}},
		{"dot key", map[string]string{"..": "1"}, nil, []wantErr{inv("data[..]")}},
		{"bad binary key", nil, map[string][]byte{"a b": {1}}, []wantErr{inv("binaryData[a b]")}},
		{"duplicate", map[string]string{"k": "1"}, map[string][]byte{"k": {1}}, []wantErr{inv("data[k]")}},
		{"at the limit", map[string]string{"a": big[:MaxSecretSize/2], "b": big[:MaxSecretSize/2]}, nil, nil},
		{"too big", map[string]string{"a": big}, map[string][]byte{"b": []byte(big)}, []wantErr{long("[]")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{Data: tt.data, BinaryData: tt.binary}
			checkErrs(t, ConfigMapStrategy{}.Validate(context.Background(), cm), tt.want...)
		})
	}
	dup := &corev1.ConfigMap{Data: map[string]string{"k": ""}, BinaryData: map[string][]byte{"k": nil}}
	checkDetail(t, ValidateConfigMap(dup), "duplicate of key present in binaryData")
}

func TestValidateConfigMapUpdate(t *testing.T) {
	cm := func(immutable *bool, data map[string]string, binary map[string][]byte) *corev1.ConfigMap {
		return &corev1.ConfigMap{Immutable: immutable, Data: data, BinaryData: binary}
	}
	d1, d2 := map[string]string{"a": "1"}, map[string]string{"a": "2"}
	b1 := map[string][]byte{"b": {1}}
	tests := []struct {
		name     string
		new, old *corev1.ConfigMap
		want     []wantErr
	}{
		{"mutable change", cm(nil, d2, nil), cm(nil, d1, nil), nil},
		{"becomes immutable with change", cm(ptr(true), d2, nil), cm(ptr(false), d1, nil), nil},
		{"immutable unchanged", cm(ptr(true), d1, b1), cm(ptr(true), d1, b1), nil},
		{"immutable nil vs empty", cm(ptr(true), map[string]string{}, map[string][]byte{}), cm(ptr(true), nil, nil), nil},
		{"immutable data change", cm(ptr(true), d2, b1), cm(ptr(true), d1, b1), []wantErr{forb("data")}},
		{"immutable binary change", cm(ptr(true), d1, nil), cm(ptr(true), d1, b1), []wantErr{forb("binaryData")}},
		{"immutable unset", cm(nil, d1, nil), cm(ptr(true), d1, nil), []wantErr{forb("immutable")}},
		{"immutable false", cm(ptr(false), d1, nil), cm(ptr(true), d1, nil), []wantErr{forb("immutable")}},
		{"new object validated", cm(nil, map[string]string{"a/b": ""}, nil), cm(nil, nil, nil), []wantErr{inv("data[a/b]")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, ConfigMapStrategy{}.ValidateUpdate(context.Background(), tt.new, tt.old), tt.want...)
		})
	}
	checkDetail(t, ValidateConfigMapUpdate(cm(nil, d1, nil), cm(ptr(true), d1, nil)), "field is immutable when `immutable` is set")
}

func TestConfigMapDefault(t *testing.T) {
	cm := &corev1.ConfigMap{}
	ConfigMapStrategy{}.Default(cm)
	if cm.Data == nil {
		t.Error("data not defaulted to an empty map")
	}
}
