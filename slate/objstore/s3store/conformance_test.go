package s3store

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/rockstream/rockstream/slate/objstore"
	"github.com/rockstream/rockstream/slate/objstore/objstoretest"
)

func TestConformanceS3(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store { return newFakeS3(t, "") }, objstoretest.Capabilities{IdenticalBytesSameVersion: true})
}

func TestConformanceS3Prefixed(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store { return newFakeS3(t, "tenant/a") }, objstoretest.Capabilities{IdenticalBytesSameVersion: true})
}

// newFakeS3 starts gofakes3 (in-memory backend) in-process and returns our S3
// client pointed at it. gofakes3's s3mem backend evaluates If-None-Match and
// If-Match under its bucket lock (backend/s3mem PutObject), so conditional
// writes are atomic there and the suite tests our client code unwrapped.
func newFakeS3(t *testing.T, prefix string) *Store {
	t.Helper()
	backend := s3mem.New()
	faker := gofakes3.New(backend)
	ts := httptest.NewServer(faker.Server())
	t.Cleanup(ts.Close)
	if err := backend.CreateBucket("bucket"); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseURL("s3://bucket/" + prefix + "?endpoint=" + ts.URL + "&region=us-east-1&path_style=true&access_key_id=k&secret_access_key=s")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseURL(t *testing.T) {
	cfg, err := ParseURL("s3://bkt/some/prefix/?endpoint=http://h:9000&region=eu-west-1&path_style=true")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Bucket != "bkt" || cfg.Prefix != "some/prefix" || cfg.Endpoint != "http://h:9000" || cfg.Region != "eu-west-1" || !cfg.UsePathStyle {
		t.Fatalf("parsed %+v", cfg)
	}
	for _, bad := range []string{"s3:///nobucket", "gs://x/y", "s3://b/p?path_style=maybe"} {
		if _, err := ParseURL(bad); err == nil {
			t.Fatalf("ParseURL(%q) succeeded", bad)
		}
	}
}

// TestMissingCredentialsSaysWhatToSet: with no credentials anywhere the
// SDK looks, New fails at once naming the variables to set, rather than
// every request failing later as a transient error.
func TestMissingCredentialsSaysWhatToSet(t *testing.T) {
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	cfg, err := ParseURL("s3://bucket/db?endpoint=http://127.0.0.1:1&region=us-east-1&path_style=true")
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(context.Background(), cfg)
	if err == nil {
		t.Fatal("New succeeded without credentials")
	}
	for _, want := range []string{"no AWS credentials found", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "access_key_id="} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	// Credentials in the environment are enough.
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	if _, err := New(context.Background(), cfg); err != nil {
		t.Fatalf("New with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set: %v", err)
	}
}
