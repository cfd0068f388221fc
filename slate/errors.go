package slate

import (
	"errors"
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/slate/objstore"
)

// Sentinel errors; test with errors.Is. Every error returned to a caller is an
// *errcode.Error wrapping one of these (or a store error).
var (
	// ErrFenced: a newer writer (or compactor) claimed the database. Terminal
	// for this handle: every later call fails with it.
	ErrFenced = errors.New("slate: fenced by a newer epoch")
	// ErrCorrupt: an object failed its checksum or could not be decoded.
	ErrCorrupt = errors.New("slate: corrupt object")
	// ErrFormatVersion: an object was written in a format this build cannot read.
	ErrFormatVersion = errors.New("slate: incompatible format version")
	// ErrMergeOperatorMissing: a merge operand was found and no operator is set.
	ErrMergeOperatorMissing = errors.New("slate: merge operator missing")
	// ErrBackpressure: a memory budget is full; flush and retry.
	ErrBackpressure = errors.New("slate: memory budget exceeded")
	// ErrBatchTooLarge: one batch is more than a memtable can hold (its
	// arena addresses at least 32 GiB; a single key or value is limited to
	// 4 GiB). Nothing was applied; retrying cannot help.
	ErrBatchTooLarge = errors.New("slate: batch too large for a memtable")
	// ErrClosed: the handle was closed or failed.
	ErrClosed = errors.New("slate: closed")
	// errStaleCommit: a manifest create landed at or below the GC boundary.
	errStaleCommit = errors.New("slate: manifest commit below GC boundary")
)

func corruptErr(objectKey string, format string, args ...any) error {
	return errcode.Wrap(errcode.StorageObjectCorrupt, ErrCorrupt, "object %s: %s", objectKey, fmt.Sprintf(format, args...))
}

func formatErr(objectKey string, format string, args ...any) error {
	return errcode.Wrap(errcode.StorageFormatVersionIncompatible, ErrFormatVersion, "object %s: %s", objectKey, fmt.Sprintf(format, args...))
}

func fencedErr(format string, args ...any) error {
	return errcode.Wrap(errcode.ShardFenceLost, ErrFenced, format, args...)
}

func mergeMissingErr(key []byte) error {
	return errcode.Wrap(errcode.StorageMergeOperatorMissing, ErrMergeOperatorMissing, "key %q has merge operands", key)
}

func backpressureErr(format string, args ...any) error {
	return errcode.Wrap(errcode.StorageMemoryBudgetExceeded, ErrBackpressure, format, args...)
}

func batchTooLargeErr(bytes int64) error {
	return errcode.Wrap(errcode.StorageMemoryBudgetExceeded, ErrBatchTooLarge, "batch of %d bytes does not fit an empty memtable", bytes)
}

func closedErr(cause error) error {
	if cause != nil {
		if _, ok := errcode.As(cause); ok {
			return cause
		}
	}
	return errcode.Wrap(errcode.StorageClosed, ErrClosed, "database handle is closed")
}

// storeErr wraps an object-store failure with context. Errors that already
// carry a code (corruption, fencing) pass through. A backend's report of a
// damaged object (objstore.ErrCorrupt) is corruption (RS-5002, matching
// ErrCorrupt too), not a retryable I/O failure: the bytes will not change.
func storeErr(err error, format string, args ...any) error {
	if _, ok := errcode.As(err); ok {
		return err
	}
	if errors.Is(err, objstore.ErrCorrupt) {
		return errcode.Wrap(errcode.StorageObjectCorrupt, fmt.Errorf("%w: %w", ErrCorrupt, err), format, args...)
	}
	return errcode.Wrap(errcode.DurableObjectStoreIOFailure, err, format, args...)
}

// isNotFound reports whether err is an object-store not-found.
func isNotFound(err error) bool { return errors.Is(err, objstore.ErrNotFound) }

func errorsIsFenced(err error) bool { return errors.Is(err, ErrFenced) }
