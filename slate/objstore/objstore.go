// Package objstore is the object-store seam beneath slate: a flat namespace of
// immutable-by-convention objects with atomic conditional writes.
//
// Every backend (in-memory, local filesystem, S3-compatible, and the
// simulator's fault-injecting wrapper) implements Store and passes the same
// conformance suite (objstoretest). Only the interface, the in-memory store
// and pure wrappers live here: the filesystem and S3 backends do real I/O
// (the S3 one links the AWS SDK, net/http and crypto/tls), so they live in
// the subpackages fsstore and s3store, which only the binary's wiring and
// tests import; the deterministic core never links them. Conditional writes are what make slate's manifest CAS and
// writer fencing correct (ARCHITECTURE.md §4), so a backend that cannot make
// PutIfAbsent and PutIfMatch atomic must not implement Store.
package objstore

import (
	"context"
	"errors"
)

// Version identifies one write of one object (an ETag on S3). Versions of the
// same key are distinct; comparing two is the only meaningful operation.
type Version string

// Object is a whole object read back.
type Object struct {
	Data    []byte
	Version Version
}

// ObjectInfo is one LIST entry.
type ObjectInfo struct {
	Key     string
	Size    int64
	Version Version
}

// Store is an object store with atomic conditional writes. Keys are
// '/'-separated paths without a leading slash. Methods are safe for concurrent
// use by multiple goroutines (the real runtime) and are called synchronously
// from actors (ARCHITECTURE.md §3).
type Store interface {
	// Get reads a whole object. ErrNotFound if absent.
	Get(ctx context.Context, key string) (Object, error)
	// GetRange reads length bytes at offset; a range past the end is
	// truncated to the object's end. ErrNotFound if absent.
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
	// Put writes unconditionally.
	Put(ctx context.Context, key string, data []byte) (Version, error)
	// PutIfAbsent writes only if no object exists at key; otherwise
	// ErrPreconditionFailed. Atomic: of N racing callers exactly one wins.
	PutIfAbsent(ctx context.Context, key string, data []byte) (Version, error)
	// PutIfMatch writes only if the current version of key is match; otherwise
	// ErrPreconditionFailed (ErrNotFound if the key is absent).
	PutIfMatch(ctx context.Context, key string, data []byte, match Version) (Version, error)
	// Delete removes an object. Deleting an absent key is not an error.
	Delete(ctx context.Context, key string) error
	// List returns the objects whose key starts with prefix, sorted by key
	// (byte order). Sorting at the interface keeps map order out of behaviour
	// (STYLE.md 2).
	List(ctx context.Context, prefix string) ([]ObjectInfo, error)
}

// Errors every backend returns (wrapped with context is fine; test with
// errors.Is).
var (
	ErrNotFound           = errors.New("objstore: not found")
	ErrPreconditionFailed = errors.New("objstore: precondition failed")
	// ErrAmbiguous: the outcome of a write is unknown (e.g. the response was
	// lost). The write may or may not have been applied; callers must read
	// back to learn the truth.
	ErrAmbiguous = errors.New("objstore: ambiguous write outcome")
	// ErrTransient: a retryable failure (throttling, 5xx, timeout before the
	// request was sent).
	ErrTransient = errors.New("objstore: transient failure")
	// ErrCorrupt: the backend's own framing of an object is damaged (e.g. the
	// filesystem backend's file header). Not retryable: reading again
	// returns the same bytes. Callers report it as corruption of that
	// object, never as an I/O failure to retry.
	ErrCorrupt = errors.New("objstore: object damaged")
)
