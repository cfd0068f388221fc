package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Open opens a store from a URL:
//
//	memory://                      a fresh in-memory store (tests, demos)
//	file:///var/lib/rockstream     the local filesystem store rooted there
//	s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1&path_style=true
//
// For S3, credentials come from the query (access_key_id, secret_access_key,
// session_token) or, when absent, from the AWS SDK's default chain.
func Open(ctx context.Context, rawURL string) (Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("objstore: parse url %q: %w", rawURL, err)
	}
	switch u.Scheme {
	case "memory", "mem":
		return NewMemory(), nil
	case "file", "":
		p := u.Path
		if u.Scheme == "" {
			p = rawURL
		} else if u.Host != "" && u.Host != "localhost" {
			// file://relative/dir is a common mistake: treat host+path as relative.
			p = u.Host + u.Path
		}
		if p == "" {
			return nil, fmt.Errorf("objstore: url %q has no path", rawURL)
		}
		return NewFS(p)
	case "s3":
		cfg, err := ParseS3URL(rawURL)
		if err != nil {
			return nil, err
		}
		return NewS3(ctx, cfg)
	default:
		return nil, fmt.Errorf("objstore: unsupported url scheme %q in %q (want file://, s3:// or memory://)", u.Scheme, rawURL)
	}
}

// ParseS3URL parses s3://bucket/prefix?endpoint=...&region=...&path_style=true.
func ParseS3URL(rawURL string) (S3Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return S3Config{}, fmt.Errorf("objstore: parse url %q: %w", rawURL, err)
	}
	if u.Scheme != "s3" {
		return S3Config{}, fmt.Errorf("objstore: %q is not an s3:// url", rawURL)
	}
	if u.Host == "" {
		return S3Config{}, fmt.Errorf("objstore: s3 url %q has no bucket", rawURL)
	}
	q := u.Query()
	cfg := S3Config{
		Bucket:          u.Host,
		Prefix:          strings.Trim(u.Path, "/"),
		Endpoint:        q.Get("endpoint"),
		Region:          q.Get("region"),
		AccessKeyID:     q.Get("access_key_id"),
		SecretAccessKey: q.Get("secret_access_key"),
		SessionToken:    q.Get("session_token"),
	}
	switch strings.ToLower(q.Get("path_style")) {
	case "", "false", "0":
	case "true", "1":
		cfg.UsePathStyle = true
	default:
		return S3Config{}, fmt.Errorf("objstore: s3 url %q: path_style must be true or false", rawURL)
	}
	return cfg, nil
}

// Prefixed returns a Store that puts every key under prefix+"/". It lets many
// databases (shards) share one store.
func Prefixed(s Store, prefix string) Store {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return s
	}
	return &prefixed{inner: s, prefix: prefix + "/"}
}

type prefixed struct {
	inner  Store
	prefix string
}

func (p *prefixed) Get(ctx context.Context, key string) (Object, error) {
	return p.inner.Get(ctx, p.prefix+key)
}
func (p *prefixed) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	return p.inner.GetRange(ctx, p.prefix+key, off, n)
}
func (p *prefixed) Put(ctx context.Context, key string, data []byte) (Version, error) {
	return p.inner.Put(ctx, p.prefix+key, data)
}
func (p *prefixed) PutIfAbsent(ctx context.Context, key string, data []byte) (Version, error) {
	return p.inner.PutIfAbsent(ctx, p.prefix+key, data)
}
func (p *prefixed) PutIfMatch(ctx context.Context, key string, data []byte, v Version) (Version, error) {
	return p.inner.PutIfMatch(ctx, p.prefix+key, data, v)
}
func (p *prefixed) Delete(ctx context.Context, key string) error {
	return p.inner.Delete(ctx, p.prefix+key)
}
func (p *prefixed) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	infos, err := p.inner.List(ctx, p.prefix+prefix)
	for i := range infos {
		infos[i].Key = strings.TrimPrefix(infos[i].Key, p.prefix)
	}
	return infos, err
}

// conditionalAttemptsMax bounds the retries of one conditional write after
// transient or ambiguous failures. Each retry is immediate (callers that want
// backoff wrap the store); the bound keeps a dead store from looping forever.
const conditionalAttemptsMax = 4

// PutIfAbsentVerified creates key with data, resolving ambiguity: it retries
// after ErrAmbiguous/ErrTransient, and when the create reports "already
// exists" it reads the object back — if the stored bytes equal data, the
// earlier (ambiguous) attempt was ours and the write succeeded.
//
// INVARIANT: data must be unique to this writer and attempt (slate embeds a
// put id in every conditionally written object); otherwise another writer's
// identical object would be mistaken for ours.
//
// It returns (version, nil) on success, an error wrapping
// ErrPreconditionFailed when someone else's object occupies key, or the last
// error after conditionalAttemptsMax attempts.
func PutIfAbsentVerified(ctx context.Context, s Store, key string, data []byte) (Version, error) {
	var lastErr error
	for attempt := 0; attempt < conditionalAttemptsMax; attempt++ {
		v, err := s.PutIfAbsent(ctx, key, data)
		if err == nil {
			return v, nil
		}
		lastErr = err
		switch {
		case errors.Is(err, ErrPreconditionFailed):
			// Read back always: the SDK or a proxy may have retried an
			// ambiguous attempt of ours below this layer.
			obj, gerr := s.Get(ctx, key)
			if gerr != nil {
				if errors.Is(gerr, ErrNotFound) {
					continue // deleted in between: try again
				}
				lastErr = gerr
				continue
			}
			if bytes.Equal(obj.Data, data) {
				return obj.Version, nil
			}
			return "", err
		case errors.Is(err, ErrAmbiguous), errors.Is(err, ErrTransient):
			continue
		default:
			return "", err
		}
	}
	return "", fmt.Errorf("put-if-absent %q: gave up after %d attempts: %w", key, conditionalAttemptsMax, lastErr)
}
