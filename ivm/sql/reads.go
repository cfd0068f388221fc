package sql

import (
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/access"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// Reads is how a plan reads the tables it scans: by primary keys, in key
// ranges of the primary key or of an index, at the rows that join rows
// read so (lookup joins), or whole (access.Reads).
type Reads = access.Reads

// KeyRange bounds the read of one table (access.KeyRange).
type KeyRange = access.KeyRange

// IndexCatalog lists the secondary indexes the store keeps entries for
// (access.Catalog); ReadableIndex is one of them.
type (
	IndexCatalog  = access.Catalog
	ReadableIndex = access.Index
)

// PlanReads chooses how a bound plan (an ad-hoc query's, or the rows of an
// UPDATE or DELETE) reads each table, with its parameters evaluated in
// env: the engine fetches what the result names from the shards and runs
// the plan over it. cat may be nil (no index is read).
func PlanReads(n plan.Node, env *expr.Env, cat IndexCatalog) Reads {
	return access.Plan(n, env, cat)
}
