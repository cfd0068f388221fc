package engine

import (
	"context"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// VACUUM and ANALYZE are accepted, checked like PostgreSQL checks them
// (relations and columns must exist; VACUUM refuses a transaction block),
// and do nothing else: RockStream has no dead tuples to reclaim (slate
// compacts in the background) and no planner statistics to gather. Tools
// such as pgbench -i and ORMs' maintenance scripts issue them.
func (s *session) maintenance(_ context.Context, snap *control.Snapshot, vs *pg_query.VacuumStmt) (gateway.Cursor, error) {
	tag := "ANALYZE"
	if vs.IsVacuumcmd {
		tag = "VACUUM"
		if s.txn != nil && !s.txnImplicit {
			return nil, errcode.New(errcode.VacuumInTransactionBlock, "VACUUM cannot run inside a transaction block")
		}
	}
	for _, n := range vs.Rels {
		vr := n.GetVacuumRelation()
		if vr == nil || vr.Relation == nil {
			continue
		}
		name := []string{vr.Relation.Relname}
		if vr.Relation.Schemaname != "" {
			name = []string{vr.Relation.Schemaname, vr.Relation.Relname}
		}
		rel, ok := s.lookup(snap, name)
		if !ok {
			return nil, errcode.New(errcode.SQLUndefinedTable, "relation %q does not exist", vr.Relation.Relname)
		}
		for _, c := range vr.VaCols {
			col := c.GetString_().GetSval()
			if rel.ColumnIndex(col) < 0 && (rel.Kind == catalog.KindTable || rel.Kind == catalog.KindMaterializedView) {
				return nil, errcode.New(errcode.SQLUndefinedColumn, "column %q of relation %q does not exist", col, rel.Name)
			}
		}
	}
	return &rowsCursor{tag: tag}, nil
}
