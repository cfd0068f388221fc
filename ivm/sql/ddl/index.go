package ddl

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// CreateIndex is CREATE [UNIQUE] INDEX [CONCURRENTLY] [IF NOT EXISTS]
// [name] ON table [USING btree] (column [opclass] [ASC|DESC] [NULLS
// FIRST|LAST], …). Rows are stored in primary-key order and no index
// structure is kept: the index is a catalog object, accepted so ORM
// migrations run, and it never changes a plan. What would need a real
// index to mean anything (expressions, WHERE, INCLUDE, other access
// methods) is refused by name.
type CreateIndex struct {
	// Name is "" when the statement names none (the control plane picks
	// PostgreSQL's table_column_idx).
	Name        string
	Table       string
	IfNotExists bool
	Unique      bool
	// Concurrently is CREATE INDEX CONCURRENTLY (refused in a transaction
	// block, as in PostgreSQL).
	Concurrently bool
	Columns      []catalog.IndexColumn
}

func (*CreateIndex) ddl() {}

// patternOperatorClasses are the non-default btree operator classes an
// index may name (Django creates *_pattern_ops indexes for LIKE lookups);
// they change nothing here either.
//
//lint:immutable a constant set of operator class names.
var patternOperatorClasses = map[string]bool{"text_pattern_ops": true, "varchar_pattern_ops": true, "bpchar_pattern_ops": true}

// defaultOperatorClasses are default btree operator classes: naming one is
// the same as naming none.
//
//lint:immutable a constant set of operator class names.
var defaultOperatorClasses = map[string]bool{"text_ops": true, "varchar_ops": true, "bpchar_ops": true, "int2_ops": true, "int4_ops": true,
	"int8_ops": true, "numeric_ops": true, "float4_ops": true, "float8_ops": true, "bool_ops": true, "date_ops": true,
	"timestamp_ops": true, "timestamptz_ops": true, "uuid_ops": true, "bytea_ops": true, "interval_ops": true, "time_ops": true}

func (c *converter) createIndex(s *pg_query.IndexStmt) (*CreateIndex, error) {
	if s.Relation == nil {
		return nil, c.unsupported(-1, "CREATE INDEX without a table")
	}
	table, err := c.relName(s.Relation)
	if err != nil {
		return nil, err
	}
	loc := s.Relation.Location
	switch {
	case s.AccessMethod != "" && s.AccessMethod != "btree":
		return nil, c.unsupported(loc, "index access method "+s.AccessMethod+" (CREATE INDEX ... USING "+s.AccessMethod+"); only btree indexes are accepted")
	case s.WhereClause != nil:
		return nil, c.unsupported(loc, "partial indexes (CREATE INDEX ... WHERE)")
	case len(s.IndexIncludingParams) > 0:
		return nil, c.unsupported(loc, "CREATE INDEX ... INCLUDE")
	case len(s.Options) > 0:
		return nil, c.unsupported(loc, "index storage parameters (CREATE INDEX ... WITH (...))")
	case s.TableSpace != "":
		return nil, c.unsupported(loc, "tablespaces (CREATE INDEX ... TABLESPACE)")
	case s.NullsNotDistinct:
		return nil, c.unsupported(loc, "CREATE INDEX ... NULLS NOT DISTINCT")
	}
	out := &CreateIndex{Name: s.Idxname, Table: table, IfNotExists: s.IfNotExists, Unique: s.Unique, Concurrently: s.Concurrent}
	for _, p := range s.IndexParams {
		e := p.GetIndexElem()
		if e == nil {
			return nil, c.unsupported(loc, "this CREATE INDEX column")
		}
		if e.Expr != nil || e.Name == "" {
			return nil, c.unsupported(loc, "expression indexes (CREATE INDEX ... ((expression)))")
		}
		if len(e.Collation) > 0 {
			return nil, c.unsupported(loc, "COLLATE in an index column")
		}
		if len(e.Opclassopts) > 0 {
			return nil, c.unsupported(loc, "operator class parameters in an index column")
		}
		col := catalog.IndexColumn{Column: e.Name}
		if len(e.Opclass) > 0 {
			var parts []string
			for _, n := range e.Opclass {
				parts = append(parts, n.GetString_().GetSval())
			}
			if len(parts) == 2 && parts[0] == "pg_catalog" {
				parts = parts[1:]
			}
			name := strings.Join(parts, ".")
			switch {
			case patternOperatorClasses[name]:
				col.OperatorClass = name
			case defaultOperatorClasses[name]:
			default:
				return nil, c.unsupported(loc, "the operator class "+name+" in an index column")
			}
		}
		switch e.Ordering {
		case pg_query.SortByDir_SORTBY_DESC:
			col.Descending, col.NullsFirst = true, true
		case pg_query.SortByDir_SORTBY_USING:
			return nil, c.unsupported(loc, "USING operator in an index column")
		}
		switch e.NullsOrdering {
		case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
			col.NullsFirst = true
		case pg_query.SortByNulls_SORTBY_NULLS_LAST:
			col.NullsFirst = false
		}
		out.Columns = append(out.Columns, col)
	}
	if len(out.Columns) == 0 {
		return nil, errcode.New(errcode.SQLSyntaxError, "CREATE INDEX needs at least one column").WithPosition(c.pos(loc))
	}
	return out, nil
}
