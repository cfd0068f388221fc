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
// A store that ingests sorted batches (SortedIngester: slate writes them
// straight to SST files, no WAL, no memtable) takes the held state in one
// sorted run, durable when the ingest returns: the bulk path. Writing a
// million keys spread over the key space through the memtable cost a
// cache miss or more per skiplist level per key, most of a join's
// backfill. There, past backfillStateBytesMax the held state is ingested
// (spilled) and holding goes on over the store (reads of a key not held
// fall through to it), so the whole state reaches the store in a few
// large sorted runs however large it is.
//
// Without ingest, past backfillStateBytesMax the state is flushed and the
// rest of the backfill writes through to the store, as every chunk did
// before. So it is too when holding does not pay: a view whose chunks
// mostly add keys (a filter's rows, a join's sides and rows) would write
// each key to the store once anyway, and holding it first only adds the
// copy. Judged over windows of backfillStateJudgeOps writes: held on while
// at least an eighth of them rewrote or deleted a held key rather than
// adding one.

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
	// backfillSpillEntriesMin: a held state of at least this many entries
	// is ingested (spilled) before the next source's rows are fed, where
	// the store ingests. Those rows may scan the arrangements the earlier
	// sources built (a join's other side), and a held hash table is put in
	// key order for its first scan by a B-tree insert per key (about 4 µs
	// a key at a million), where the store's sorted files scan in order.
	// Simulation range: fixed.
	backfillSpillEntriesMin = 1 << 16
	// backfillIngestEntriesMin: a held state of fewer entries (never
	// spilled) is written through the memtable rather than ingested. An
	// ingest flushes the memtable first (slate.DB.Ingest), which a few
	// thousand writes do not pay for (a GROUP BY of a thousand groups).
	// Simulation range: fixed.
	backfillIngestEntriesMin = 1 << 14
)

// backfillState is a backfill's view state held in memory: a Txn over an
// empty store, whose writes are hashed (a rewrite replaces an entry) and
// put in key order only when a step scans them or the state is flushed.
type backfillState struct {
	// held holds the state's writes over base: an empty store, or the
	// store once part of the state was ingested (spilled).
	held kv.Txn
	base kv.Reader
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
	// ingest: the store ingests sorted batches (SortedIngester); holding
	// always pays then, and a flush is one ingest.
	ingest bool
	// spilled: part of the state was ingested; held reads the store
	// under its writes, and its deletes are written too.
	spilled bool
	// entries counts the keys held (net of deletes) since the state was
	// last ingested.
	entries int
	// ingestEntriesMin is backfillIngestEntriesMin (tests lower it).
	ingestEntriesMin int
}

// spillBeforeNextSource reports whether the held state is ingested before
// the next source is fed (backfillSpillEntriesMin).
func (s *backfillState) spillBeforeNextSource() bool {
	return s.ingest && s.entries >= backfillSpillEntriesMin
}

// SortedIngester is a store that takes a large batch straight into its
// files (storage.KV: slate's Ingest), durable when Ingest returns.
type SortedIngester interface {
	Ingest(b *kv.WriteBatch) error
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
	_, ingest := a.store.(SortedIngester)
	empty := kv.NewMemory()
	b.state = &backfillState{held: kv.NewTxn(empty), base: empty, prefixes: prefixes, bytesMax: backfillStateBytesMax, judgeOps: backfillStateJudgeOps,
		ingest: ingest, ingestEntriesMin: backfillIngestEntriesMin}
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
			s.entries--
		case !op.Delete && !had:
			s.added++
			s.entries++
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
	if s.ops >= s.judgeOps && !s.ingest {
		if 8*s.added > 7*s.ops {
			s.flush = true
		}
		s.ops, s.added = 0, 0
	}
	if s.bytes > s.bytesMax && !s.compact() {
		s.flush = true
	}
	return &rest, nil
}

// compact rebuilds the held state from its live entries when they take at
// most half of bytesMax, and reports whether it did. The held Txn keeps
// every value a rewrite replaced and every key a delete removed: an
// aggregate over a hundred thousand groups rewrites its accumulators and
// output rows in every chunk, and its held bytes outgrew the bound many
// times over the few megabytes it holds live, which spilled it to the store
// (or, without ingest, made the rest of the backfill write through).
func (s *backfillState) compact() bool {
	ops := s.held.(kv.UnsortedBatcher).UnsortedBatch().Ops
	live, entries := 0, 0
	for _, op := range ops {
		if op.Delete && !s.spilled {
			continue // nothing to delete below (flushBackfillState)
		}
		live += len(op.Key) + len(op.Value)
		if !op.Delete {
			entries++
		}
	}
	if live > s.bytesMax/2 {
		return false
	}
	held := kv.NewTxnSized(s.base, len(ops))
	for _, op := range ops {
		var err error
		switch {
		case op.Delete && !s.spilled:
			continue
		case op.Delete:
			err = held.Delete(op.Key)
		case op.Merge:
			err = held.(kv.Merger).Merge(op.Key, op.Value)
		default:
			err = held.Put(op.Key, op.Value)
		}
		if err != nil {
			return false
		}
	}
	s.held, s.bytes = held, live
	if !s.spilled {
		s.entries = entries
	}
	return true
}

// flushBackfillState writes the next backfillFlushEntries held entries to
// the store; once none is left, the backfill writes through. A store that
// ingests takes them all at once, and a backfill still feeding pinned rows
// (the state outgrew its bound) then holds on over the store.
func (a *Actor) flushBackfillState(b *backfill) error {
	s := b.state
	if s.ingest && (s.spilled || s.entries >= s.ingestEntriesMin) {
		ops := s.held.Batch().Ops
		if !s.spilled {
			// NB: as below, a held delete has nothing to delete.
			kept := ops[:0]
			for _, op := range ops {
				if !op.Delete {
					kept = append(kept, op)
				}
			}
			ops = kept
		}
		// NB: Immutable: the held writes are dropped after the ingest,
		// never changed, so the store need not copy them first.
		if err := a.ingestSorted(&kv.WriteBatch{Ops: ops, Immutable: true}); err != nil {
			a.poison(err)
			return err
		}
		a.stats.BackfillIngests++
		if b.scanned {
			b.state = nil
			return nil
		}
		s.held, s.base, s.spilled, s.flush = kv.NewTxn(a.store), a.store, true, false
		s.bytes, s.ops, s.added, s.entries = 0, 0, 0, 0
		return nil
	}
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

// ingestSorted writes a batch of distinct keys in key order through the
// store's ingest, durable when it returns (Apply where it has none).
func (a *Actor) ingestSorted(b *kv.WriteBatch) error {
	if len(b.Ops) == 0 {
		return nil
	}
	if s, ok := a.store.(SortedIngester); ok {
		return s.Ingest(b)
	}
	return a.store.Apply(b)
}

// CompactionDeferrer is a store whose background compactions can wait
// (storage.KV: slate's DeferCompaction).
type CompactionDeferrer interface {
	DeferCompaction(on bool)
}

// deferCompactionWhileBackfilling defers the store's compactions while a
// backfill runs here or a table shard exports tables for one (within L0's
// bound: slate.DB.DeferCompaction). A CREATE waits for its backfill, and
// the compactions meanwhile (of a load's flushes just before, of the
// backfill's own ingests while it still writes more) took 11-17% of a
// backfill's CPU; the export's pinned snapshot keeps what they replace.
func (a *Actor) deferCompactionWhileBackfilling() {
	if d, ok := a.store.(CompactionDeferrer); ok {
		d.DeferCompaction(len(a.backfills) > 0 || len(a.exports) > 0)
	}
}
