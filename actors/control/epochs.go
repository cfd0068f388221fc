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
	// AllocEpoch → EpochAllocated: the next Count (at least one) global
	// epochs, the first at least Min (the asking shard's last epoch + 1:
	// its epochs only grow, also across a restart of either side).
	AllocEpoch struct {
		Min   uint64
		Count int
	}
	// EpochAllocated are fresh epochs Epoch .. Epoch+Count-1: no other
	// AllocEpoch got them, and they are above every epoch handed out
	// before the AllocEpoch arrived. Known is the highest epoch handed
	// out when it was answered (at least the last of them).
	EpochAllocated struct {
		Epoch uint64
		Count int
		Known uint64
	}
	// GetEpochs → EpochAllocated{Known}: the highest epoch handed out so
	// far, none allocated. A read waits for every table shard to seal
	// through it, so it sees every commit acknowledged before it began;
	// a restarted view shard shows nothing below it.
	GetEpochs struct{}
)

// epochAllocator is the control plane's epoch counter.
type epochAllocator struct {
	loaded bool
	// last is the last epoch handed out; reserved the durable record's.
	// INVARIANT: last <= reserved.
	last, reserved uint64
}

// loadEpochs reads the durable record once.
func (a *Actor) loadEpochs() error {
	x := &a.epochs
	if x.loaded {
		return nil
	}
	v, ok, err := a.store.Get(epochsKey())
	if err != nil {
		return errcode.Wrap(errcode.InternalError, err, "read the epoch counter")
	}
	if ok {
		if len(v) != 8 {
			return errcode.Wrap(CatalogCorrupt, fmt.Errorf("%d bytes", len(v)), "the control DB's epoch counter")
		}
		// Every epoch up to it may have been handed out before the
		// restart: start after it.
		x.reserved = binary.BigEndian.Uint64(v)
		x.last = x.reserved
	}
	x.loaded = true
	return nil
}

// knownEpoch answers GetEpochs.
func (a *Actor) knownEpoch() (EpochAllocated, error) {
	if err := a.loadEpochs(); err != nil {
		return EpochAllocated{}, err
	}
	return EpochAllocated{Known: a.epochs.last}, nil
}

// allocEpoch answers AllocEpoch.
func (a *Actor) allocEpoch(m AllocEpoch) (EpochAllocated, error) {
	if err := a.loadEpochs(); err != nil {
		return EpochAllocated{}, err
	}
	x := &a.epochs
	count := uint64(max(m.Count, 1))
	next := max(x.last+1, m.Min)
	if last := next + count - 1; last > x.reserved {
		reserved := last + epochsLogAhead - 1
		b := kv.WriteBatch{Ops: []kv.Op{{Key: epochsKey(), Value: binary.BigEndian.AppendUint64(nil, reserved)}}}
		if err := a.store.Apply(&b); err != nil {
			// NB: the write may or may not be durable: reread it next
			// time (a higher record is only a gap).
			x.loaded = false
			return EpochAllocated{}, errcode.Wrap(errcode.ShardUnavailable, err, "the epoch counter could not be made durable")
		}
		x.reserved = reserved
	}
	x.last = next + count - 1
	return EpochAllocated{Epoch: next, Count: int(count), Known: x.last}, nil
}
