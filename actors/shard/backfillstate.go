package shard

import (
	"bytes"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
)

// A backfill's view state is held in memory while the pinned rows are fed
// (the scanning chunks), and written to the store once, in flushing chunks,
// before the buffered deltas are fed. Each scanning chunk steps the view's
// circuit once, and an operator rewrites the state of every key the chunk
// touches: an aggregate over a thousand groups rewrites a thousand
// accumulators and replaces a thousand output rows in every chunk, and in a
// large memtable each of those writes cost more than the chunk's rows did.
// In memory a rewrite replaces an entry in a hash table and an output row
// replaced before it reached the store never does.
//
// Safe because nothing but the backfill reads or writes the view's state
// while it runs (reads of the view wait for it, a view reading it is filled
// after it), and an unfinished backfill's state is dropped anyway (a crash
// drops the partial state, prepareBackfill). It is used only when the
// store holds none of the view's state at the start (checked, one seek per
// arrangement), so the memory alone answers every read of it.
//
// Memory: past backfillStateBytesMax the state is flushed and the rest of
// the backfill writes through to the store, as every chunk did before.
// So it is too when holding does not pay: a view whose chunks mostly add
// keys (a filter's rows, a join's sides and rows) would write each key to
// the store once anyway, and holding it first only adds the copy. Judged
// over windows of backfillStateJudgeOps writes: held on while at least an
// eighth of them rewrote or deleted a held key rather than adding one.

// Backfill state limits.
const (
	// backfillStateBytesMax bounds the state a backfill holds in memory.
	// Simulation range: fixed.
	backfillStateBytesMax = 64 << 20
	// backfillFlushEntries is how many held entries one flushing chunk
	// writes: about one chunk's time (backfillChunkTarget) of memtable
	// writes. Simulation range: fixed.
	backfillFlushEntries = 4096
	// backfillStateJudgeOps is the window of held writes over which a
	// backfill judges whether holding its state pays. Simulation range:
	// fixed.
	backfillStateJudgeOps = 1 << 16
)

// backfillState is a backfill's view state held in memory: a Txn over an
// empty store, whose writes are hashed (a rewrite replaces an entry) and
// put in key order only when a step scans them or the state is flushed.
type backfillState struct {
	held kv.Txn
	// prefixes are the view circuit's arrangement prefixes: the keys held.
	prefixes [][]byte
	// bytes counts the bytes written into held (what it holds, with the
	// values rewrites replaced).
	bytes int
	// bytesMax and judgeOps are backfillStateBytesMax and
	// backfillStateJudgeOps (tests lower them).
	bytesMax, judgeOps int
	// flush: the held state is being written to the store (the pinned
	// rows are all fed, it outgrew bytesMax or holding did not pay);
	// flushOps are its writes, flushed up to flushAt.
	flush    bool
	flushOps []kv.Op
	flushAt  int
	// ops and added count the held writes of the current judging window
	// and the held keys they added (net of those they deleted).
	ops, added int
}

// holdBackfillState starts holding b's view state in memory, unless the
// store already holds some of it (or Config.BackfillRows asks for the
// reference path).
func (a *Actor) holdBackfillState(b *backfill) error {
	if a.cfg.BackfillRows {
		return nil
	}
	prefixes := b.view.circuit.StatePrefixes()
	for _, p := range prefixes {
		found := false
		err := a.store.Scan(p, kv.PrefixEnd(p), func(_, _ []byte) error {
			found = true
			return kv.ErrStop
		})
		if err != nil || found {
			return err
		}
	}
	b.state = &backfillState{held: kv.NewTxn(kv.NewMemory()), prefixes: prefixes, bytesMax: backfillStateBytesMax, judgeOps: backfillStateJudgeOps}
	return nil
}

func (s *backfillState) holds(k []byte) bool {
	for _, p := range s.prefixes {
		if bytes.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// stateReader reads the held state from memory and every other key from
// the store.
type stateReader struct {
	s     *backfillState
	store kv.Reader
}

func (r stateReader) Get(k []byte) ([]byte, bool, error) {
	if r.s.holds(k) {
		return r.s.held.Get(k)
	}
	return r.store.Get(k)
}

// Scan reads a range within one arrangement from memory, and a range
// holding no held key from the store.
func (r stateReader) Scan(start, end []byte, fn func(k, v []byte) error) error {
	for _, p := range r.s.prefixes {
		if !bytes.HasPrefix(start, p) {
			if bytes.Compare(start, p) < 0 && (end == nil || bytes.Compare(p, end) < 0) {
				return errcode.New(errcode.InternalError, "a backfill's scan from %x to %x spans held state and stored keys", start, end)
			}
			continue
		}
		if pe := kv.PrefixEnd(p); end == nil || bytes.Compare(end, pe) > 0 {
			return errcode.New(errcode.InternalError, "a backfill's scan from %x to %x spans held state and stored keys", start, end)
		}
		return r.s.held.Scan(start, end, fn)
	}
	return r.store.Scan(start, end, fn)
}

// keepState splits a chunk's batch (of distinct keys, in any order): the
// held keys' writes are applied to memory and the rest returned sorted,
// for the store.
func (s *backfillState) keepState(batch *kv.WriteBatch) (*kv.WriteBatch, error) {
	var rest kv.WriteBatch
	// NB: one lookup per write, which also says whether the key was held
	// (a Get first resolved every held merge operand again).
	held := s.held.(kv.OpApplier)
	for _, op := range batch.Ops {
		if !s.holds(op.Key) {
			rest.Ops = append(rest.Ops, op)
			continue
		}
		had, err := held.ApplyOp(op)
		if err != nil {
			return nil, err
		}
		switch {
		case op.Delete && had:
			s.added--
		case !op.Delete && !had:
			s.added++
		}
		s.ops++
		s.bytes += len(op.Key) + len(op.Value)
	}
	if len(rest.Ops) > 1 {
		keys := make([][]byte, len(rest.Ops))
		for i, op := range rest.Ops {
			keys[i] = op.Key
		}
		ops := make([]kv.Op, len(rest.Ops))
		for i, n := range kv.SortOrder(keys) {
			ops[i] = rest.Ops[n]
		}
		rest.Ops = ops
	}
	if s.ops >= s.judgeOps {
		if 8*s.added > 7*s.ops {
			s.flush = true
		}
		s.ops, s.added = 0, 0
	}
	if s.bytes > s.bytesMax {
		s.flush = true
	}
	return &rest, nil
}

// flushBackfillState writes the next backfillFlushEntries held entries to
// the store; once none is left, the backfill writes through.
func (a *Actor) flushBackfillState(b *backfill) error {
	s := b.state
	if s.flushOps == nil {
		s.flushOps = []kv.Op{}
		for _, op := range s.held.Batch().Ops {
			// NB: the store held none of the view's state when the
			// backfill began (holdBackfillState) and nothing was flushed
			// since: a held delete has nothing to delete there.
			if !op.Delete {
				s.flushOps = append(s.flushOps, op)
			}
		}
	}
	end := min(len(s.flushOps), s.flushAt+backfillFlushEntries)
	if end > s.flushAt {
		if err := a.applyNoWait(&kv.WriteBatch{Ops: s.flushOps[s.flushAt:end]}); err != nil {
			a.poison(err)
			return err
		}
	}
	s.flushAt = end
	if end == len(s.flushOps) {
		b.state = nil
	}
	return nil
}
