package shard

import (
	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// SpreadStepEvery: a shard running a spread view ends an epoch step at
// every multiple of it (epoch.go), so every shard's part of the view has
// a known state there, and a subscription merges the parts' streams there
// at the latest (actors/subscriber merge.go). Simulation range: fixed.
const SpreadStepEvery = 64

// runsSpreadViews reports whether a view spread over the shards runs here.
func (a *Actor) runsSpreadViews() bool {
	for _, v := range a.views {
		if v.spread != nil {
			return true
		}
	}
	return false
}

// spreadPart is one shard's part of a view spread over the shards
// (placement.go): its circuit steps only on the input rows whose partition
// key hashes to this shard (SpreadOwner), in epoch steps and in backfill
// chunks alike (installedView.trim), so its state and outputs are the
// view's rows made by those inputs, and the view is the sum of every
// shard's outputs.
//
//	t's delta {(1,'a'), (2,'b'), (3,'a')}, view GROUP BY b, 2 shards
//	   hash('a') → shard 1: its circuit steps on (1,'a'), (3,'a')
//	   hash('b') → shard 0: its circuit steps on (2,'b')
type spreadPart struct {
	m    partition.Map
	deal spreadDeal
	me   partition.ShardID
	env  *expr.Env
	// keys and types: each source's partition key and its types.
	keys  map[catalog.ID]SpreadKey
	types map[catalog.ID][]types.Type
}

// newSpreadPart is shard me's part of spread view rel of snap, whose
// sources are placed by keys (PlannedView.SpreadKeys); key expressions are
// evaluated in env, the view's.
func newSpreadPart(snap *control.Snapshot, rel *catalog.Relation, keys map[catalog.ID]SpreadKey, me partition.ShardID, env *expr.Env) (*spreadPart, error) {
	if keys == nil {
		// Cannot happen: CREATE spread the view because its plan could be.
		return nil, errcode.New(errcode.ViewBuildFailed, "materialized view %s is spread over the shards, but its plan can no longer be spread", rel.Name)
	}
	p := &spreadPart{m: snap.BucketMap(), deal: newSpreadDeal(snap.BucketMap()), me: me, env: env, keys: keys, types: map[catalog.ID][]types.Type{}}
	for id, k := range keys { //lint:maprange filled into a map keyed the same way
		src, ok := snap.RelationByID(id)
		if !ok {
			return nil, errcode.New(errcode.UndefinedObject, "view %s reads relation %s, which does not exist", rel.Name, id)
		}
		if pinned, ok := rel.PinnedRelation(id); ok {
			src = pinned
		}
		for _, c := range k.Cols {
			if c >= len(src.Columns) {
				return nil, errcode.New(errcode.ViewBuildFailed, "materialized view %s is spread by column %d of %s, which has %d columns", rel.Name, c, src.Name, len(src.Columns))
			}
		}
		var ts []types.Type
		if k.Exprs != nil {
			for _, e := range k.Exprs {
				ts = append(ts, e.Type())
			}
		} else {
			for _, c := range k.Cols {
				ts = append(ts, src.Columns[c].Type)
			}
		}
		p.types[id] = ts
	}
	return p, nil
}

// mine reports whether this shard maintains the rows whose key in source
// src is computed into key from row (key is scratch space, len(types)).
func (p *spreadPart) mine(k SpreadKey, ts []types.Type, key, row types.Row) bool {
	if k.Exprs == nil {
		for j, c := range k.Cols {
			key[j] = row[c]
		}
	} else {
		for j, e := range k.Exprs {
			v, err := e.Eval(p.env, row)
			if err != nil {
				// The view's own operators fail on the same row; it is
				// placed as a NULL key would be.
				v = nil
			}
			key[j] = v
		}
	}
	return p.deal.owner(types.HashRow(ts, key)) == p.me
}

// filter keeps the rows of b (rows of source src) this shard maintains.
func (p *spreadPart) filter(src catalog.ID, b zset.Batch) zset.Batch {
	k, ok := p.keys[src]
	if !ok {
		return b // not a relation the plan partitions (cannot happen)
	}
	ts := p.types[src]
	key := make(types.Row, len(ts))
	out := zset.Batch{Rows: make([]types.Row, 0, len(b.Rows)/2+1), Weights: make([]int64, 0, len(b.Rows)/2+1)}
	for i, r := range b.Rows {
		if p.mine(k, ts, key, r) {
			out.Rows = append(out.Rows, r)
			out.Weights = append(out.Weights, b.Weights[i])
		}
	}
	return out
}

// filterColumns is filter for a columnar delta: the rows kept are taken,
// never built whole (a key expression reads a row holding only the
// columns it reads).
func (p *spreadPart) filterColumns(src catalog.ID, c *zset.Columns) *zset.Columns {
	k, ok := p.keys[src]
	if !ok {
		return c
	}
	ts := p.types[src]
	key := make(types.Row, len(ts))
	row := make(types.Row, len(c.Schema()))
	sel := make([]int32, 0, c.Len()/2+1)
	for i := 0; i < c.Len(); i++ {
		for _, col := range k.Cols {
			row[col] = c.Datum(col, i)
		}
		if p.mine(k, ts, key, row) {
			sel = append(sel, int32(i))
		}
	}
	return c.Take(sel, nil)
}
