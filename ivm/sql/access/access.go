package access

import (
	"slices"
	"strings"

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
	// IndexScans are EXPLAIN's lines for the tables read by primary key
	// or through an index ("Index Scan using t_pkey on t" with its "Index
	// Cond", "Index Scan using idx on t"), sorted.
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
	using = append(using, primaryKeyLines(scans, points, ranges)...)
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

// primaryKeyLines renders the tables read by primary key (points, or
// ranges not of an index) as PostgreSQL names a scan of the primary key's
// index, with the keys or ranges read as its condition.
func primaryKeyLines(scans []filteredScan, points map[catalog.ID][]types.Row, ranges map[catalog.ID][]KeyRange) []string {
	var out []string
	count := map[catalog.ID]int{}
	for _, fs := range scans {
		count[fs.rel.ID]++
	}
	done := map[catalog.ID]bool{}
	for _, fs := range scans {
		rel := fs.rel
		if done[rel.ID] {
			continue
		}
		done[rel.ID] = true
		// The keys read are the table's, for every scan of it: a table
		// scanned twice is named without an alias.
		name := scanName(fs.scan)
		if count[rel.ID] > 1 {
			name = rel.Name
		}
		col := func(j int) (string, types.Type) {
			c := rel.Columns[rel.PrimaryKey[j]]
			return c.Name, c.Type
		}
		var conds []string
		if keys, ok := points[rel.ID]; ok {
			for _, k := range keys {
				var eq []string
				for j, v := range k {
					name, t := col(j)
					eq = append(eq, name+" = "+plan.FormatDatum(v, t))
				}
				conds = append(conds, strings.Join(eq, " AND "))
			}
		} else if rs, ok := ranges[rel.ID]; ok && rs[0].Index == (catalog.ID{}) {
			for _, r := range rs {
				var parts []string
				for j, v := range r.Eq {
					name, t := col(j)
					parts = append(parts, name+" = "+plan.FormatDatum(v, t))
				}
				if len(r.Eq) < len(rel.PrimaryKey) {
					name, t := col(len(r.Eq))
					if r.Lo != nil {
						op := " >= "
						if r.LoOpen {
							op = " > "
						}
						parts = append(parts, name+op+plan.FormatDatum(r.Lo, t))
					}
					if r.Hi != nil {
						op := " <= "
						if r.HiOpen {
							op = " < "
						}
						parts = append(parts, name+op+plan.FormatDatum(r.Hi, t))
					}
				}
				conds = append(conds, strings.Join(parts, " AND "))
			}
		} else {
			continue
		}
		cond := "(" + conds[0] + ")"
		if len(conds) > 1 {
			cond = "((" + strings.Join(conds, ") OR (") + "))"
		}
		out = append(out, "Index Scan using "+rel.PrimaryKeyConstraint()+" on "+name+"\n  Index Cond: "+cond)
	}
	return out
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
