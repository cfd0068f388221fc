package slate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/slate/objstore"
)

// instanceAttemptsMax bounds the allocation loop of allocateInstanceID.
const instanceAttemptsMax = 64

// allocateInstanceID returns an id no other opener of this database ever got,
// by creating instances/<n> with a plain put-if-absent (never a verified one:
// two allocators must not both believe they created the same slot). An
// ambiguous create just skips the slot.
//
// Instance ids make every conditional write's bytes unique (manifest put ids),
// which is what lets an ambiguous create be resolved by reading it back.
// Callers that already have a unique id (the runtime's incarnation id, a
// seeded random stream) pass it as Options.InstanceID and skip this.
func allocateInstanceID(ctx context.Context, store objstore.Store) (string, error) {
	infos, err := store.List(ctx, "instances/")
	if err != nil {
		return "", storeErr(err, "list instances")
	}
	var next uint64 = 1
	for _, o := range infos {
		if n, err := strconv.ParseUint(strings.TrimPrefix(o.Key, "instances/"), 10, 64); err == nil && n >= next {
			next = n + 1
		}
	}
	for attempt := 0; attempt < instanceAttemptsMax; attempt++ {
		key := fmt.Sprintf("instances/%020d", next)
		_, err := store.PutIfAbsent(ctx, key, nil)
		if err == nil {
			return "i" + strconv.FormatUint(next, 10), nil
		}
		if !errors.Is(err, objstore.ErrPreconditionFailed) && !errors.Is(err, objstore.ErrAmbiguous) && !errors.Is(err, objstore.ErrTransient) {
			return "", storeErr(err, "allocate instance id")
		}
		next++
	}
	return "", storeErr(fmt.Errorf("no free slot after %d attempts", instanceAttemptsMax), "allocate instance id")
}
