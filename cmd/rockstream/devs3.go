package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/spf13/cobra"

	"github.com/rockstream/rockstream/engine"
)

// devS3Options configures `rockstream dev s3`.
type devS3Options struct {
	Listen string
	Dir    string // "" keeps the objects in memory
	Bucket string
	Prefix string
}

// devS3Region is the region the printed storage URL names. The server
// ignores it; the AWS SDK wants one to sign requests.
const devS3Region = "us-east-1"

func newDevCommand() *cobra.Command {
	dev := &cobra.Command{
		Use:   "dev",
		Short: "Tools for local development and tests",
	}
	dev.AddCommand(newDevS3Command())
	return dev
}

func newDevS3Command() *cobra.Command {
	opts := devS3Options{}
	cmd := &cobra.Command{
		Use:   "s3",
		Short: "Run a local S3-protocol server to try --storage s3:// against",
		Long: `Run a local S3-protocol server (gofakes3) and create a bucket in it, then
print the rockstream start line and the environment variables that use it.

Objects are served from memory and kept as files under --dir, so they
survive restarts of this server (each is loaded back when it starts: the
whole data set must fit in memory); with --dir '' they are in memory only
and lost when it stops. It is for local use and tests: it checks no
credentials (any AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are accepted,
but the AWS SDK needs some set), so it binds loopback addresses only.`,
		Example: `  rockstream dev s3 --listen 127.0.0.1:9000 --dir ./s3data`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serveDevS3(ctx, opts, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Listen, "listen", "127.0.0.1:9000", "address to serve S3 on (loopback only)")
	f.StringVar(&opts.Dir, "dir", "./s3data", "directory the objects are kept in ('' keeps them in memory, lost on stop)")
	f.StringVar(&opts.Bucket, "bucket", "rockstream", "bucket to create (kept if it exists)")
	f.StringVar(&opts.Prefix, "prefix", "data", "key prefix the printed --storage URL puts RockStream's objects under")
	return cmd
}

// serveDevS3 runs the server until ctx ends, after printing how to use it.
func serveDevS3(ctx context.Context, opts devS3Options, out io.Writer) error {
	if !engine.LoopbackAddress(opts.Listen) {
		return usageError("dev s3 checks no credentials, so --listen must be a loopback address (127.0.0.1:9000, localhost:9000, [::1]:9000), not %q", opts.Listen)
	}
	if opts.Bucket == "" {
		return usageError("--bucket must not be empty")
	}
	var backend gofakes3.Backend
	kept := "in memory only (lost when this server stops)"
	if opts.Dir == "" {
		backend = s3mem.New()
	} else {
		abs, err := filepath.Abs(opts.Dir)
		if err != nil {
			return usageError("--dir: %v", err)
		}
		files, err := newFiledBackend(abs)
		if err != nil {
			return fmt.Errorf("dev s3: cannot use --dir %s: %w", abs, err)
		}
		backend = files
		kept = "kept under " + abs + " across restarts"
	}
	exists, err := backend.BucketExists(opts.Bucket)
	if err != nil {
		return fmt.Errorf("dev s3: bucket %q: %w", opts.Bucket, err)
	}
	if !exists {
		if err := backend.CreateBucket(opts.Bucket); err != nil {
			return fmt.Errorf("dev s3: cannot create bucket %q: %w", opts.Bucket, err)
		}
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return fmt.Errorf("dev s3: cannot listen on %s (pick another address with --listen): %w", opts.Listen, err)
	}
	endpoint := "http://" + ln.Addr().String()
	storage := devS3StorageURL(opts.Bucket, opts.Prefix, endpoint)
	fmt.Fprintf(out, "S3 server on %s with bucket %s; objects %s.\n", endpoint, opts.Bucket, kept)
	fmt.Fprintf(out, "It accepts any credentials, but the AWS SDK needs some. In another shell:\n\n")
	fmt.Fprintf(out, "  export AWS_ACCESS_KEY_ID=rockstream AWS_SECRET_ACCESS_KEY=rockstream AWS_REGION=%s\n", devS3Region)
	fmt.Fprintf(out, "  rockstream start --storage '%s'\n\n", storage)
	fmt.Fprintf(out, "(from a checkout: go run ./cmd/rockstream start --storage '...'). Ctrl-C stops this server.\n")

	srv := &http.Server{
		Handler:           gofakes3.New(backend, gofakes3.WithAutoBucket(false)).Server(),
		ReadHeaderTimeout: 30 * time.Second,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("dev s3: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("dev s3: shutdown: %w", err)
	}
	return nil
}

// devS3StorageURL is the --storage URL of a prefix in a bucket of the
// local server at endpoint.
func devS3StorageURL(bucket, prefix, endpoint string) string {
	// NB: not url.Values.Encode, which escapes the endpoint's "://" (valid
	// but hard to read); an endpoint host:port has no '&' or '#'.
	u := "s3://" + bucket
	if prefix != "" {
		u += "/" + prefix
	}
	return u + "?endpoint=" + endpoint + "&region=" + devS3Region + "&path_style=true"
}

// filedBackend is gofakes3's in-memory backend with every object also
// kept as a file under dir (dir/<bucket>/<escaped key>), loaded back when
// the server starts. Serving from memory keeps what S3 guarantees and the
// in-memory backend passes our conformance suite with: atomic conditional
// writes, whole-object reads and sorted listings. A write is a file
// renamed into place once the memory backend has accepted it, so a killed
// server leaves each object old or new, never partial.
type filedBackend struct {
	gofakes3.Backend // *s3mem.Backend; an interface so versioned calls are not promoted
	dir              string
	mu               sync.Mutex // orders memory and file updates of writes alike
}

// objectFile is the file an object is kept in: one file per key, the key
// escaped so that "a" and "a/b" can both exist and no key leaves dir.
func (f *filedBackend) objectFile(bucket, key string) string {
	name := url.PathEscape(key)
	if strings.HasPrefix(name, ".") {
		name = "%2E" + name[1:]
	}
	return filepath.Join(f.dir, bucket, name)
}

// newFiledBackend loads every object under dir into a fresh memory backend.
func newFiledBackend(dir string) (*filedBackend, error) {
	// Uploads are written in dir/.tmp (no bucket name starts with a dot)
	// and renamed into place; what a killed server left there is dropped.
	if err := os.RemoveAll(filepath.Join(dir, ".tmp")); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, ".tmp"), 0o755); err != nil {
		return nil, err
	}
	f := &filedBackend{Backend: s3mem.New(), dir: dir}
	buckets, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, b := range buckets {
		if !b.IsDir() || gofakes3.ValidateBucketName(b.Name()) != nil {
			continue
		}
		if err := f.Backend.CreateBucket(b.Name()); err != nil {
			return nil, fmt.Errorf("bucket %s: %w", b.Name(), err)
		}
		files, err := os.ReadDir(filepath.Join(dir, b.Name()))
		if err != nil {
			return nil, err
		}
		for _, o := range files {
			name := o.Name()
			if o.IsDir() {
				continue
			}
			key, err := url.PathUnescape(name)
			if err != nil {
				continue // not ours
			}
			body, err := os.ReadFile(filepath.Join(dir, b.Name(), name))
			if err != nil {
				return nil, err
			}
			if _, err := f.Backend.PutObject(b.Name(), key, nil, bytes.NewReader(body), int64(len(body)), nil); err != nil {
				return nil, fmt.Errorf("object %s/%s: %w", b.Name(), key, err)
			}
		}
	}
	return f, nil
}

func (f *filedBackend) CreateBucket(name string) error {
	if err := gofakes3.ValidateBucketName(name); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.Backend.CreateBucket(name); err != nil {
		return err
	}
	return os.MkdirAll(filepath.Join(f.dir, name), 0o755)
}

func (f *filedBackend) DeleteBucket(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.Backend.DeleteBucket(name); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(f.dir, name))
}

func (f *filedBackend) ForceDeleteBucket(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.Backend.ForceDeleteBucket(name); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(f.dir, name))
}

func (f *filedBackend) PutObject(bucket, key string, meta map[string]string, input io.Reader, size int64, conds *gofakes3.PutConditions) (gofakes3.PutObjectResult, error) {
	body, err := gofakes3.ReadAll(input, size)
	if err != nil {
		return gofakes3.PutObjectResult{}, err
	}
	// NB: the file is written and synced before taking the lock, so a
	// large upload does not hold up other writes; only the rename is
	// under it, in the order the memory backend took the writes.
	if ok, err := f.Backend.BucketExists(bucket); err != nil || !ok {
		if err == nil {
			err = gofakes3.BucketNotFound(bucket)
		}
		return gofakes3.PutObjectResult{}, err
	}
	final := f.objectFile(bucket, key)
	tmp, err := writeTemp(filepath.Join(f.dir, ".tmp"), body)
	if err != nil {
		return gofakes3.PutObjectResult{}, err
	}
	defer os.Remove(tmp) // a no-op once renamed
	f.mu.Lock()
	defer f.mu.Unlock()
	res, err := f.Backend.PutObject(bucket, key, meta, bytes.NewReader(body), int64(len(body)), conds)
	if err != nil {
		return res, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return res, fmt.Errorf("dev s3: keep %s/%s: %w", bucket, key, err)
	}
	return res, nil
}

// writeTemp writes body to a fresh file in dir and syncs it.
func writeTemp(dir string, body []byte) (string, error) {
	tmp, err := os.CreateTemp(dir, "put-*")
	if err != nil {
		return "", err
	}
	_, err = tmp.Write(body)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

func (f *filedBackend) CopyObject(srcBucket, srcKey, dstBucket, dstKey string, meta map[string]string) (gofakes3.CopyObjectResult, error) {
	// Through f, so the copy is kept as a file too.
	return gofakes3.CopyObject(f, srcBucket, srcKey, dstBucket, dstKey, meta)
}

func (f *filedBackend) DeleteObject(bucket, key string) (gofakes3.ObjectDeleteResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	res, err := f.Backend.DeleteObject(bucket, key)
	if err != nil {
		return res, err
	}
	if err := os.Remove(f.objectFile(bucket, key)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, err
	}
	return res, nil
}

func (f *filedBackend) DeleteMulti(bucket string, keys ...string) (gofakes3.MultiDeleteResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	res, err := f.Backend.DeleteMulti(bucket, keys...)
	if err != nil {
		return res, err
	}
	for _, d := range res.Deleted {
		if err := os.Remove(f.objectFile(bucket, d.Key)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, err
		}
	}
	return res, nil
}
