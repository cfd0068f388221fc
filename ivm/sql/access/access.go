package access

import (
	"slices"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Catalog is what the choice needs to know beyond the plan: the secondary
// indexes the store keeps entries for (an index recorded in the catalog
// only cannot be read through).
type Catalog interface {
	// Indexes lists table's readable indexes in creation order.
	Indexes(table *catalog.Relation) []Index
}

// Index is a readable secondary index of a table.
type Index struct {
	Relation *catalog.Relation
	// Columns are the table's columns the index keys on, in key order.
	Columns []int
}

// KeyRange bounds a read of a table to the rows whose first len(Eq) key
// columns equal Eq and whose next key column lies between Lo and Hi (nil:
// unbounded; LoOpen, HiOpen: exclusive). The key columns are the primary
// key's, or with Index set that index's. Its fields are those of
// actors/shard.KeyRange, which the engine converts it to.
type KeyRange struct {
	Index          catalog.ID
	Eq             types.Row
	Lo, Hi         types.Datum
	LoOpen, HiOpen bool
}

// Reads is how a plan reads the tables it scans; a table in neither map
// is read whole.
type Reads struct {
	// Points holds, per table read by primary keys, the keys.
	Points map[catalog.ID][]types.Row
	// Ranges holds, per table read in key ranges, the ranges.
	Ranges map[catalog.ID][]KeyRange
	// Lookups are the tables read only at the rows that join rows of
	// another table read in part (lookups.go), in the order to read them:
	// a Lookup's Driver is in Points or Ranges or an earlier Lookup.
	Lookups []Lookup
	// IndexScans are EXPLAIN's lines for the tables read through an
	// index ("Index Scan using idx on t"), sorted.
	IndexScans []string
}

// Plan chooses how n reads each table, with parameters and other row-free
// values evaluated in env. cat may be nil (no index is read).
func Plan(n plan.Node, env *expr.Env, cat Catalog) Reads {
	points := pointKeys(n, env)
	ranges, using := keyRanges(n, env, points, cat)
	scans, ok := filteredScans(n)
	if !ok {
		return Reads{Points: points, Ranges: ranges, IndexScans: using}
	}
	read := map[catalog.ID]bool{}
	for id := range points { //lint:maprange copying a map's keys into a set
		read[id] = true
	}
	for id := range ranges { //lint:maprange copying a map's keys into a set
		read[id] = true
	}
	ls, lines := lookups(n, scans, read, cat)
	using = append(using, lines...)
	slices.Sort(using)
	return Reads{Points: points, Ranges: ranges, Lookups: ls, IndexScans: using}
}

// indexScanLines renders the index each table is read through.
func indexScanLines(using map[catalog.ID]indexUse) []string {
	var out []string
	for _, u := range using { //lint:maprange sorted below
		out = append(out, "Index Scan using "+u.index.Name+" on "+u.table.Name)
	}
	slices.Sort(out)
	return out
}

// indexUse is a table read through one of its indexes.
type indexUse struct {
	table, index *catalog.Relation
}
