package system

import (
	"fmt"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/source"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// The generator source (spec §13.5.0): a row generator actor in the same
// crashable process commits rows 1, 2, ... of "gen" together with its
// offset. Checker: every read shows exactly rows 1..n (no gap, no
// duplicate, each once), n never decreases as the frontier grows, and
// after healing the generator makes progress again.

// sourceSQL is the generator's definition (rate substituted per run).
const sourceSQL = "CREATE SOURCE gen FROM GENERATE ROWS AS (id BIGINT GENERATED, q INT UNIFORM(1, 5), region TEXT PICK('a', 'b', 'c')) RATE = %d PER SECOND"

// sourceObs is what one read showed of the source.
type sourceObs struct{ frontier, n uint64 }

type sourceState struct {
	rate      int
	tick      time.Duration
	perCommit int
	spec      *ddl.CreateSource
	rel       *catalog.Relation
	spawned   bool
	obs       []sourceObs
	// atHeal is the highest n seen before healing.
	atHeal uint64
}

func (r *runner) drawSource() {
	r.src = sourceState{rate: 20 + r.rnd.IntN(280), tick: time.Duration(5+r.rnd.IntN(100)) * time.Millisecond, perCommit: 1 + r.rnd.IntN(20)}
}

func (r *runner) sourceSQL() string { return fmt.Sprintf(sourceSQL, r.src.rate) }

// sourceDDL is the CreateRelation of the source, as the engine builds it.
func (r *runner) sourceDDL() control.CreateRelation {
	spec := r.sourceSpec()
	cols := make([]catalog.Column, len(spec.Columns))
	for i, c := range spec.Columns {
		cols[i] = c.Column
	}
	return control.CreateRelation{IfNotExists: true, Relation: &catalog.Relation{Kind: catalog.KindSource, Name: "gen", Columns: cols, InsertOnly: true, SQL: r.sourceSQL()}}
}

func (r *runner) sourceSpec() *ddl.CreateSource {
	if r.src.spec == nil {
		st, err := parse.ParseOne(r.sourceSQL())
		if err != nil {
			// INVARIANT: the fixed source definition parses.
			panic(err)
		}
		conv, err := ddl.Convert(st)
		if err != nil {
			panic(err)
		}
		r.src.spec = conv.(*ddl.CreateSource)
	}
	return r.src.spec
}

// spawnSource starts the generator as a root actor of the process (it
// restarts with it and resumes from its durable offset).
func (r *runner) spawnSource() error {
	if r.src.spawned {
		return nil
	}
	r.src.spawned = true
	// NB: a generator's commits name the catalog version it was started
	// with; a restarted shard that gets one older than its catalog floor
	// fetches a current catalog instead of adopting it (actors/shard
	// catalog.go), so the version only needs to hold the source.
	return r.s.Spawn(processName, source.ActorID(r.src.rel.ID), func() runtime.Actor {
		return source.New(source.Config{
			CatalogVersion: r.snap.Version, Source: r.src.rel.ID, Spec: r.sourceSpec(), TickEvery: r.src.tick, RowsPerCommitMax: r.src.perCommit, Router: r.router,
		})()
	})
}

// checkSource checks one read of the source at frontier f.
func (r *runner) checkSource(f uint64, b zset.Batch) error {
	b = zset.Consolidate(b)
	ids := map[int64]bool{}
	for i, row := range b.Rows {
		if b.Weights[i] != 1 {
			return fmt.Errorf("%w: source row %v has weight %d (duplicate or retracted)", errChecker, row, b.Weights[i])
		}
		id := row[0].(int64)
		if ids[id] {
			return fmt.Errorf("%w: source row %d appears twice", errChecker, id)
		}
		ids[id] = true
	}
	n := uint64(len(ids))
	for id := int64(1); id <= int64(n); id++ {
		if !ids[id] {
			return fmt.Errorf("%w: source rows have a gap: %d rows but row %d missing", errChecker, n, id)
		}
	}
	for _, o := range r.src.obs {
		if (f >= o.frontier && n < o.n) || (f <= o.frontier && n > o.n) {
			return fmt.Errorf("%w: source showed %d rows at frontier %d but %d rows at frontier %d", errChecker, o.n, o.frontier, n, f)
		}
	}
	r.src.obs = append(r.src.obs, sourceObs{frontier: f, n: n})
	if !r.healed {
		r.src.atHeal = max(r.src.atHeal, n)
	}
	return nil
}

// sourceProgress: after healing the generator commits again.
func (r *runner) sourceProgress() error {
	last := r.src.obs[len(r.src.obs)-1]
	if last.n <= r.src.atHeal {
		return fmt.Errorf("liveness: the generator made no progress after healing (%d rows, %d before healing)", last.n, r.src.atHeal)
	}
	return nil
}
