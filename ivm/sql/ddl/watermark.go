package ddl

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/types"
)

// watermarkOption parses CREATE TABLE's watermark option against the
// table's columns: a column, or a column minus an interval literal (the
// lateness), as in
//
//	WITH (watermark = 'ts - interval ''5 seconds''')
//
// PostgreSQL's grammar has no WATERMARK clause, so the declaration is a
// table option, as insert_only is.
func watermarkOption(text string, cols []catalog.Column) (*catalog.Watermark, error) {
	bad := func(why string) error {
		return errcode.New(errcode.SQLInvalidParameterValue, "invalid value for option \"watermark\": %q (%s)", text, why).
			WithDetail("Write it as WITH (watermark = 'ts - interval ''5 seconds'''): an event-time column of type timestamp or timestamptz, minus how late its rows may come.").
			WithSQLState("22023")
	}
	res, err := parse.PGParse("SELECT " + text)
	if err != nil || len(res.Stmts) != 1 {
		return nil, bad("not an expression")
	}
	sel := res.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || len(sel.FromClause) > 0 || sel.WhereClause != nil {
		return nil, bad("not an expression")
	}
	val := sel.TargetList[0].GetResTarget().GetVal()
	var lateness int64
	if e := val.GetAExpr(); e != nil {
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 || e.Name[0].GetString_().GetSval() != "-" {
			return nil, bad("expected column - interval")
		}
		cast := e.Rexpr.GetTypeCast()
		if cast == nil || funcNameOf(cast.TypeName) != "pg_catalog.interval" || cast.Arg.GetAConst() == nil || cast.Arg.GetAConst().GetSval() == nil {
			return nil, bad("the lateness must be an interval literal")
		}
		d, err := types.ParseInterval(strings.TrimSpace(cast.Arg.GetAConst().GetSval().Sval))
		iv, ok := d.(types.Interval)
		if err != nil || !ok {
			return nil, bad("the lateness must be an interval literal")
		}
		if iv.Months != 0 || iv.Days != 0 || iv.Micros < 0 {
			// NB: months and days have no fixed length in timestamptz
			// arithmetic.
			return nil, bad("the lateness must be a non-negative interval of hours, minutes and seconds")
		}
		lateness = iv.Micros
		val = e.Lexpr
	}
	ref := val.GetColumnRef()
	if ref == nil || len(ref.Fields) != 1 || ref.Fields[0].GetString_() == nil {
		return nil, bad("expected a column")
	}
	name := ref.Fields[0].GetString_().GetSval()
	for i, c := range cols {
		if c.Name != name {
			continue
		}
		if c.Type.Kind != types.KindTimestamp && c.Type.Kind != types.KindTimestampTZ {
			return nil, bad("column " + name + " is of type " + c.Type.String() + ", not timestamp or timestamptz")
		}
		return &catalog.Watermark{Column: i, LatenessMicros: lateness}, nil
	}
	return nil, bad("no column " + name)
}

// LateRowsDrop is the late_rows value that drops late rows (the default).
const LateRowsDrop = "drop"

// LateRowsOption parses the late_rows option of a table with a watermark:
// 'drop' (the default) or the name of a dead-letter table, optionally
// schema-qualified, quoted as in SQL ('bids_late', 'audit.bids_late',
// '"Late"'). It returns the name in catalog.Qualify form, "" for drop.
func LateRowsOption(text string) (string, error) {
	if strings.EqualFold(strings.TrimSpace(text), LateRowsDrop) {
		return "", nil
	}
	bad := func(why string) error {
		return errcode.New(errcode.LateRowsTableInvalid, "invalid value for option \"late_rows\": %q (%s)", text, why).
			WithSQLState("22023")
	}
	res, err := parse.PGParse("SELECT FROM " + text)
	if err != nil || len(res.Stmts) != 1 {
		return "", bad("expected 'drop' or a table name")
	}
	sel := res.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.FromClause) != 1 || sel.WhereClause != nil || len(sel.TargetList) > 0 {
		return "", bad("expected 'drop' or a table name")
	}
	rv := sel.FromClause[0].GetRangeVar()
	if rv == nil || rv.Alias != nil || !rv.Inh {
		return "", bad("expected 'drop' or a table name")
	}
	if rv.Catalogname != "" {
		return "", crossDatabase(rv.Catalogname + "." + rv.Schemaname + "." + rv.Relname)
	}
	return catalog.Qualify(rv.Schemaname, rv.Relname), nil
}
