package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

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
