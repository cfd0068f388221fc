package control

import (
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
)

// Global epochs: with tables partitioned over several shards, every
// commit's epoch comes from here, so epochs are one order over every
// shard: a commit acknowledged before another began has the lower epoch,
// whichever shards they ran on, and a view stepping epochs in order shows
// them in that order. A shard asks once per commit (AllocEpoch); the
// answer is held in memory, with a durable record running ahead of it
// (as sequences do, sequence.go), so a restarted control plane never
// hands out an epoch it may have handed out before:
//
//	topology key 0x03 'E' → the highest epoch that may have been handed out (uint64 BE)
//
// Epochs are sparse on each shard: a shard holds the log entries of the
// epochs it was given, and says which epochs it will never hold
// (actors/shard's seals), so a reader steps the epochs every shard has
// sealed.

// epochsLogAhead is how many epochs one durable write of the allocator
// covers. Larger: fewer writes, bigger gaps after a restart (gaps are free:
// an epoch no shard holds is empty). Simulation range: fixed.
const epochsLogAhead = 1 << 16

const topologyEpochs byte = 'E'

func epochsKey() []byte { return []byte{prefixTopology, topologyEpochs} }

type (
	// AllocEpoch → EpochAllocated: the next global epoch, at least Min
	// (the asking shard's last epoch + 1: its epochs only grow, also
	// across a restart of either side).
	AllocEpoch struct {
		Min uint64
	}
	// EpochAllocated is a fresh epoch: no other AllocEpoch got it, and it
	// is above every epoch handed out before the AllocEpoch arrived.
	EpochAllocated struct {
		Epoch uint64
	}
)

// epochAllocator is the control plane's epoch counter.
type epochAllocator struct {
	loaded bool
	// last is the last epoch handed out; reserved the durable record's.
	// INVARIANT: last <= reserved.
	last, reserved uint64
}

// allocEpoch answers AllocEpoch.
func (a *Actor) allocEpoch(m AllocEpoch) (EpochAllocated, error) {
	x := &a.epochs
	if !x.loaded {
		v, ok, err := a.store.Get(epochsKey())
		if err != nil {
			return EpochAllocated{}, errcode.Wrap(errcode.InternalError, err, "read the epoch counter")
		}
		if ok {
			if len(v) != 8 {
				return EpochAllocated{}, errcode.Wrap(CatalogCorrupt, fmt.Errorf("%d bytes", len(v)), "the control DB's epoch counter")
			}
			// Every epoch up to it may have been handed out before the
			// restart: start after it.
			x.reserved = binary.BigEndian.Uint64(v)
			x.last = x.reserved
		}
		x.loaded = true
	}
	next := max(x.last+1, m.Min)
	if next > x.reserved {
		reserved := next + epochsLogAhead - 1
		b := kv.WriteBatch{Ops: []kv.Op{{Key: epochsKey(), Value: binary.BigEndian.AppendUint64(nil, reserved)}}}
		if err := a.store.Apply(&b); err != nil {
			// NB: the write may or may not be durable: reread it next
			// time (a higher record is only a gap).
			x.loaded = false
			return EpochAllocated{}, errcode.Wrap(errcode.ShardUnavailable, err, "the epoch counter could not be made durable")
		}
		x.reserved = reserved
	}
	x.last = next
	return EpochAllocated{Epoch: next}, nil
}
