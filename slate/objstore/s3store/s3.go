package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/rockstream/rockstream/slate/objstore"
)

// Config configures an S3-compatible store. Empty fields fall back to the
// AWS SDK's defaults (environment, shared config files, instance roles).
type Config struct {
	// Bucket is required.
	Bucket string
	// Prefix is prepended to every key ("shards/7" → "shards/7/<key>").
	Prefix string
	// Endpoint overrides the service URL (MinIO, LocalStack, gofakes3).
	Endpoint string
	// Region defaults to "us-east-1" when neither this nor the environment sets one.
	Region string
	// AccessKeyID/SecretAccessKey/SessionToken: static credentials; when
	// AccessKeyID is empty the SDK's default chain is used.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// UsePathStyle addresses buckets as endpoint/bucket (MinIO, gofakes3).
	UsePathStyle bool
	// HTTPClient overrides the HTTP client (tests).
	HTTPClient *http.Client
}

// Store is an objstore.Store on an S3-compatible service. Conditional writes use
// If-None-Match: "*" (PutIfAbsent) and If-Match: <etag> (PutIfMatch), which
// the service evaluates atomically. Versions are ETags.
//
// NB: an S3 ETag is the MD5 of the bytes for single-part uploads, so two writes
// of identical bytes have the same version. slate never rewrites a key with
// identical bytes when it relies on CAS (every conditional write embeds a
// unique put id), so this does not weaken its protocols.
type Store struct {
	client *s3.Client
	bucket string
	prefix string
}

// New builds an S3 store from cfg.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("objstore s3: bucket is required")
	}
	var loadOpts []func(*config.LoadOptions) error
	if cfg.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(cfg.Region))
	}
	if cfg.AccessKeyID != "" {
		loadOpts = append(loadOpts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)))
	}
	if cfg.HTTPClient != nil {
		loadOpts = append(loadOpts, config.WithHTTPClient(cfg.HTTPClient))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("objstore s3: load config: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	// Look the credentials up now: without them every request fails with
	// a long chain of SDK errors (the last from the EC2 instance metadata
	// service), which reads as a transient storage failure. The SDK caches
	// what it finds, so the first request does not look again.
	if awsCfg.Credentials == nil {
		return nil, errors.New("objstore s3: " + missingCredentials)
	}
	if _, err := awsCfg.Credentials.Retrieve(ctx); err != nil {
		return nil, fmt.Errorf("objstore s3: %s (the AWS SDK said: %w)", missingCredentials, err)
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.UsePathStyle
		// NB: validate response checksums only when the request asks for
		// them. Some S3-compatible servers (gofakes3 among them) send the
		// whole object's checksum with a ranged response, which would fail
		// every range read; slate checksums its own blocks anyway.
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &Store{client: client, bucket: cfg.Bucket, prefix: prefix}, nil
}

// missingCredentials says what to set when the SDK finds no credentials.
const missingCredentials = "no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY " +
	"(and AWS_REGION, or region= in the URL) in the environment, or access_key_id= and secret_access_key= " +
	"in the s3:// URL, or name a profile with AWS_PROFILE"

func (s *Store) fullKey(key string) string { return s.prefix + key }

// s3Error maps an SDK error to the objstore error kinds. write says whether
// the failed call was a write: a write that failed for an unknown reason may
// still have been applied, so it is ambiguous rather than transient.
func s3Error(op, key string, err error, write bool) error {
	var apiErr smithy.APIError
	status := 0
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		status = respErr.HTTPStatusCode()
	}
	code := ""
	if errors.As(err, &apiErr) {
		code = apiErr.ErrorCode()
	}
	switch {
	case code == "PreconditionFailed" || status == http.StatusPreconditionFailed:
		return fmt.Errorf("%s %q: %w (%v)", op, key, objstore.ErrPreconditionFailed, err)
	case code == "NoSuchKey" || code == "NotFound" || status == http.StatusNotFound:
		return fmt.Errorf("%s %q: %w", op, key, objstore.ErrNotFound)
	case code == "ConditionalRequestConflict" || status == http.StatusConflict:
		// Another conditional write to the key is in flight; ours was not applied.
		return fmt.Errorf("%s %q: %w (%v)", op, key, objstore.ErrTransient, err)
	case status >= 400 && status < 500 && status != http.StatusTooManyRequests && status != http.StatusRequestTimeout:
		return fmt.Errorf("%s %q: %w", op, key, err)
	case write:
		return fmt.Errorf("%s %q: %w (%v)", op, key, objstore.ErrAmbiguous, err)
	default:
		return fmt.Errorf("%s %q: %w (%v)", op, key, objstore.ErrTransient, err)
	}
}

// Get implements objstore.Store.
func (s *Store) Get(ctx context.Context, key string) (objstore.Object, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.fullKey(key))})
	if err != nil {
		return objstore.Object{}, s3Error("get", key, err, false)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return objstore.Object{}, fmt.Errorf("get %q: read body: %w (%v)", key, objstore.ErrTransient, err)
	}
	return objstore.Object{Data: data, Version: objstore.Version(aws.ToString(out.ETag))}, nil
}

// GetRange implements objstore.Store.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if offset < 0 || length < 0 {
		return nil, fmt.Errorf("get range %q: negative offset %d or length %d", key, offset, length)
	}
	if length == 0 {
		if _, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: aws.String(s.fullKey(key))}); err != nil {
			return nil, s3Error("get range", key, err, false)
		}
		return []byte{}, nil
	}
	rng := fmt.Sprintf("bytes=%d-%d", offset, offset+length-1)
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.fullKey(key)), Range: &rng})
	if err != nil {
		var apiErr smithy.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode() == "InvalidRange" {
			return []byte{}, nil // offset at or past the end
		}
		return nil, s3Error("get range", key, err, false)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("get range %q: read body: %w (%v)", key, objstore.ErrTransient, err)
	}
	if int64(len(data)) > length {
		// A server that ignores Range returns the whole object.
		end := min(offset+length, int64(len(data)))
		if offset >= int64(len(data)) {
			return []byte{}, nil
		}
		data = data[offset:end]
	}
	return data, nil
}

func (s *Store) put(ctx context.Context, op, key string, data []byte, ifNoneMatch, ifMatch *string) (objstore.Version, error) {
	out, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           aws.String(s.fullKey(key)),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		IfNoneMatch:   ifNoneMatch,
		IfMatch:       ifMatch,
	})
	if err != nil {
		return "", s3Error(op, key, err, true)
	}
	return objstore.Version(aws.ToString(out.ETag)), nil
}

// Put implements objstore.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	return s.put(ctx, "put", key, data, nil, nil)
}

// PutIfAbsent implements objstore.Store.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	return s.put(ctx, "put-if-absent", key, data, aws.String("*"), nil)
}

// PutIfMatch implements objstore.Store. S3 answers a missing key with 404 or 412
// depending on the implementation; a 412 on a missing key is reported as
// ErrNotFound after a HEAD so callers see one behaviour.
func (s *Store) PutIfMatch(ctx context.Context, key string, data []byte, match objstore.Version) (objstore.Version, error) {
	v, err := s.put(ctx, "put-if-match", key, data, nil, aws.String(string(match)))
	if err != nil && errors.Is(err, objstore.ErrPreconditionFailed) {
		if _, herr := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: aws.String(s.fullKey(key))}); herr != nil {
			if mapped := s3Error("put-if-match", key, herr, false); errors.Is(mapped, objstore.ErrNotFound) {
				return "", mapped
			}
		}
	}
	return v, err
}

// Delete implements objstore.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: aws.String(s.fullKey(key))})
	if err != nil {
		mapped := s3Error("delete", key, err, false)
		if errors.Is(mapped, objstore.ErrNotFound) {
			return nil
		}
		return mapped
	}
	return nil
}

// List implements objstore.Store.
func (s *Store) List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error) {
	var out []objstore.ObjectInfo
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(s.fullKey(prefix))})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s3Error("list", prefix, err, false)
		}
		for _, o := range page.Contents {
			out = append(out, objstore.ObjectInfo{
				Key:     strings.TrimPrefix(aws.ToString(o.Key), s.prefix),
				Size:    aws.ToInt64(o.Size),
				Version: objstore.Version(aws.ToString(o.ETag)),
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

var _ objstore.Store = (*Store)(nil)
