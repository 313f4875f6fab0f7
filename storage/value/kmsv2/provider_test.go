package kmsv2

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kmsapi "k8s.io/kms/apis/v2"

	"github.com/capstan-io/capstan/internal/kmstest"
	"github.com/capstan-io/capstan/metrics"
)

// direct calls a test plugin without gRPC.
type direct struct{ p *kmstest.Plugin }

func (d direct) Status(ctx context.Context) (*kmsapi.StatusResponse, error) {
	return d.p.Status(ctx, &kmsapi.StatusRequest{})
}

func (d direct) Encrypt(ctx context.Context, uid string, plaintext []byte) (*kmsapi.EncryptResponse, error) {
	return d.p.Encrypt(ctx, &kmsapi.EncryptRequest{Plaintext: plaintext, Uid: uid})
}

func (d direct) Decrypt(ctx context.Context, uid string, req *kmsapi.DecryptRequest) ([]byte, error) {
	resp, err := d.p.Decrypt(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.Plaintext, nil
}

type clock struct{ now time.Time }

func (c *clock) Now() time.Time          { return c.now }
func (c *clock) advance(d time.Duration) { c.now = c.now.Add(d) }
func newClock() *clock                   { return &clock{now: time.Unix(1_800_000_000, 0)} }
func startPlugin(t *testing.T) *kmstest.Plugin {
	t.Helper()
	p, err := kmstest.Start(filepath.Join(t.TempDir(), "kms.sock"), "key-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

var ad = []byte("/registry/secrets/default/s")

func TestProviderRotation(t *testing.T) {
	ctx := context.Background()
	plugin := startPlugin(t)
	clk := newClock()
	p := newProvider("test", direct{plugin}, clk.Now, nil)

	if _, err := p.TransformToStorage(ctx, []byte("v"), ad); err == nil || err.Error() != "got unexpected nil transformer" {
		t.Fatalf("write before the first healthy status: %v", err)
	}
	if err := p.Check(ctx); err != nil {
		t.Fatal(err)
	}
	old, err := p.TransformToStorage(ctx, []byte("old"), ad)
	if err != nil {
		t.Fatal(err)
	}
	o, err := Unmarshal(old)
	if err != nil || o.KeyID != "key-1" || o.DEKSourceType != HKDFSeed || len(o.Annotations) != 1 {
		t.Fatalf("stored object %+v %v", o, err)
	}
	same, _ := p.TransformToStorage(ctx, []byte("same"), ad)
	if o2, _ := Unmarshal(same); !bytes.Equal(o2.EncryptedDEKSource, o.EncryptedDEKSource) {
		t.Fatal("a second write made a new seed: the seed is per key ID")
	}

	if err := plugin.Rotate("key-2"); err != nil {
		t.Fatal(err)
	}
	// The cached healthy answer stands for 20s: writes keep key-1.
	if err := p.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if v, _ := p.TransformToStorage(ctx, []byte("v"), ad); mustKeyID(t, v) != "key-1" {
		t.Fatal("rotated before the status was asked again")
	}
	clk.advance(positiveTTL)
	if err := p.Check(ctx); err != nil {
		t.Fatal(err)
	}
	fresh, err := p.TransformToStorage(ctx, []byte("new"), ad)
	if err != nil || mustKeyID(t, fresh) != "key-2" {
		t.Fatalf("after rotation: %v", err)
	}
	for _, tc := range []struct {
		stored []byte
		plain  string
		stale  bool
	}{{old, "old", true}, {fresh, "new", false}} {
		out, stale, err := p.TransformFromStorage(ctx, tc.stored, ad)
		if err != nil || string(out) != tc.plain || stale != tc.stale {
			t.Errorf("read %q: %q stale=%v %v", tc.plain, out, stale, err)
		}
	}

	// Without a healthy status for 3 minutes the seed may not write.
	clk.advance(writeSeedTTL + time.Second)
	if _, err := p.TransformToStorage(ctx, []byte("v"), ad); err == nil || !strings.Contains(err.Error(), "expired at") {
		t.Fatalf("write with an expired seed: %v", err)
	}
	if _, _, err := p.TransformFromStorage(ctx, fresh, ad); err != nil {
		t.Fatalf("reads do not expire: %v", err)
	}
}

func mustKeyID(t *testing.T, stored []byte) string {
	t.Helper()
	o, err := Unmarshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	return o.KeyID
}

func TestProviderHealth(t *testing.T) {
	ctx := context.Background()
	plugin := startPlugin(t)
	clk := newClock()
	p := newProvider("test", direct{plugin}, clk.Now, nil)
	plugin.SetHealthz("disk on fire")
	err := p.Check(ctx)
	if err == nil || err.Error() != "kmsv2 Provider test is not healthy, error: got unexpected healthz status: disk on fire" {
		t.Fatalf("got %v", err)
	}
	plugin.SetHealthz("ok")
	if p.Check(ctx) == nil {
		t.Fatal("a failure is kept for 3s")
	}
	clk.advance(negativeTTL)
	if err := p.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestProviderReadCache: a DEK source is decrypted by the plugin once.
func TestProviderReadCache(t *testing.T) {
	ctx := context.Background()
	plugin := startPlugin(t)
	clk := newClock()
	generated := sampleCount(t, "apiserver_storage_data_key_generation_duration_seconds")
	writer := newProvider("test", direct{plugin}, clk.Now, nil)
	if err := writer.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if n := sampleCount(t, "apiserver_storage_data_key_generation_duration_seconds") - generated; n < 1 {
		t.Errorf("a new seed counted %v data key generations", n)
	}
	var values [][]byte
	for range 5 {
		v, err := writer.TransformToStorage(ctx, []byte("x"), ad)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, v)
	}
	reader := newProvider("test", direct{plugin}, clk.Now, nil)
	if err := reader.Check(ctx); err != nil {
		t.Fatal(err)
	}
	before, misses := plugin.Decrypts.Load(), sampleCount(t, "apiserver_storage_envelope_transformation_cache_misses_total")
	for _, v := range values {
		if _, _, err := reader.TransformFromStorage(ctx, v, ad); err != nil {
			t.Fatal(err)
		}
	}
	if n := plugin.Decrypts.Load() - before; n != 1 {
		t.Fatalf("%d Decrypt calls for one DEK source", n)
	}
	if n := sampleCount(t, "apiserver_storage_envelope_transformation_cache_misses_total") - misses; n != 1 {
		t.Errorf("%v cache misses counted for one DEK source", n)
	}
	if _, _, err := reader.TransformFromStorage(ctx, values[0], []byte("/registry/secrets/default/other")); err == nil {
		t.Fatal("read under another etcd key")
	}
	for i := range values[0] {
		if _, _, err := reader.TransformFromStorage(ctx, values[0][:i], ad); err == nil {
			t.Fatalf("a value cut at %d read", i)
		}
		flipped := bytes.Clone(values[0])
		flipped[i] ^= 1
		if out, _, err := reader.TransformFromStorage(ctx, flipped, ad); err == nil && string(out) != "x" {
			t.Fatalf("a value changed at %d read as %q", i, out)
		}
	}
}

// sampleCount is the value of the counter family, or the sample count
// of the histogram family, in capstan's metrics.
func sampleCount(t *testing.T, family string) float64 {
	t.Helper()
	mfs, err := metrics.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
		for _, m := range mf.Metric {
			if m.Histogram != nil {
				return float64(m.Histogram.GetSampleCount())
			}
			return m.Counter.GetValue()
		}
	}
	return 0
}

func TestEncryptedObject(t *testing.T) {
	o := &EncryptedObject{EncryptedData: []byte("data"), KeyID: "k", EncryptedDEKSource: []byte("src"),
		Annotations: map[string][]byte{"a.example.com": []byte("1"), "b.example.com": nil}, DEKSourceType: HKDFSeed}
	b := o.Marshal()
	got, err := Unmarshal(b)
	if err != nil || got.Validate() != nil {
		t.Fatal(err, got.Validate())
	}
	if !bytes.Equal(got.Marshal(), b) {
		t.Fatal("not the same bytes after a round trip")
	}
	// Cut anywhere: never a panic (a cut at a field boundary is a valid
	// message; the data's authentication catches it).
	for i := range b {
		if o, err := Unmarshal(b[:i]); err == nil {
			_ = o.Validate()
		}
	}
	for _, tc := range []struct {
		o    EncryptedObject
		want string
	}{
		{EncryptedObject{KeyID: "k", EncryptedDEKSource: []byte("s")}, "encrypted data is empty"},
		{EncryptedObject{EncryptedData: []byte("d"), KeyID: "k"}, "failed to validate encrypted DEK source: encrypted DEK source is empty"},
		{EncryptedObject{EncryptedData: []byte("d"), EncryptedDEKSource: []byte("s")}, "failed to validate key id: keyID is empty"},
		{EncryptedObject{EncryptedData: []byte("d"), KeyID: "k", EncryptedDEKSource: []byte("s"), DEKSourceType: 7}, "unknown encryptedDEKSourceType: 7"},
		{EncryptedObject{EncryptedData: []byte("d"), KeyID: "k", EncryptedDEKSource: []byte("s"), Annotations: map[string][]byte{"Not A Domain": nil}}, "failed to validate annotations"},
	} {
		if err := tc.o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}
