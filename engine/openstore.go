package engine

import (
	"context"
	"fmt"
	"net/url"

	"github.com/rockstream/rockstream/slate/objstore"
	"github.com/rockstream/rockstream/slate/objstore/fsstore"
	"github.com/rockstream/rockstream/slate/objstore/s3store"
)

// This file is the one place that turns a storage URL into a concrete
// object-store backend. It belongs to the wiring, not to slate/objstore:
// the backends are edges (real files, the AWS SDK over net/http and
// crypto/tls), and keeping the URL dispatch here means the deterministic
// core links only the objstore.Store interface.

// OpenStore opens an object store from a URL:
//
//	memory://                      a fresh in-memory store (tests, demos)
//	file:///var/lib/rockstream     the local filesystem store rooted there
//	s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1&path_style=true
//
// For S3, credentials come from the query (access_key_id, secret_access_key,
// session_token) or, when absent, from the AWS SDK's default chain.
func OpenStore(ctx context.Context, rawURL string) (objstore.Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("objstore: parse url %q: %w", rawURL, err)
	}
	switch u.Scheme {
	case "memory", "mem":
		return objstore.NewMemory(), nil
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
		return fsstore.New(p)
	case "s3":
		cfg, err := s3store.ParseURL(rawURL)
		if err != nil {
			return nil, err
		}
		return s3store.New(ctx, cfg)
	default:
		return nil, fmt.Errorf("objstore: unsupported url scheme %q in %q (want file://, s3:// or memory://)", u.Scheme, rawURL)
	}
}
