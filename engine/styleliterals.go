package engine

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/types"
)

// foldTableLiterals reads the date, timestamp, timestamptz and interval
// literals of a new table's DEFAULT and CHECK expressions once, in the
// creating session's DateStyle, IntervalStyle and TimeZone, and stores
// them in a form every session reads alike ('01/02/03'::date under DMY
// becomes '2003-02-01'::date), as PostgreSQL reads them at CREATE TABLE
// and keeps the constant: an INSERT from a session with other settings
// gets the creator's values.
func foldTableLiterals(cols []catalog.Column, checks []catalog.Check, in types.InputStyle) ([]catalog.Column, []catalog.Check, error) {
	outCols := append([]catalog.Column(nil), cols...)
	for i := range outCols {
		if outCols[i].Default == "" {
			continue
		}
		t := outCols[i].Type
		text, err := foldStyleLiterals(outCols[i].Default, cols, &t, in)
		if err != nil {
			return nil, nil, err
		}
		outCols[i].Default = text
	}
	outChecks := append([]catalog.Check(nil), checks...)
	for i := range outChecks {
		text, err := foldStyleLiterals(outChecks[i].Expr, cols, nil, in)
		if err != nil {
			return nil, nil, err
		}
		outChecks[i].Expr = text
	}
	return outCols, outChecks, nil
}

// foldStyleLiterals rewrites, in an expression's SQL text, the string
// literals whose reading depends on the session: those cast to date,
// timestamp, timestamptz or interval, those compared with (or IN a list
// against) a column of such a type, and the whole expression when it is a
// literal and target is such a type (a DEFAULT). 'now', 'today',
// 'tomorrow' and 'yesterday' are left to be read per row.
func foldStyleLiterals(text string, cols []catalog.Column, target *types.Type, in types.InputStyle) (string, error) {
	res, err := parse.PGParse("SELECT " + text)
	if err != nil || len(res.Stmts) != 1 {
		return text, nil // the binder reports it
	}
	sel := res.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || sel.TargetList[0].GetResTarget() == nil {
		return text, nil
	}
	top := sel.TargetList[0].GetResTarget().Val
	changed := false
	var foldErr error
	fold := func(n *pg_query.Node, t types.Type) {
		c := n.GetAConst()
		if c == nil || c.GetSval() == nil || foldErr != nil {
			return
		}
		s := c.GetSval().Sval
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "now", "today", "tomorrow", "yesterday":
			return
		}
		d, err := types.ParseStyle(t, s, in)
		if err != nil {
			foldErr = err
			return
		}
		if norm := types.Format(t, d); norm != s {
			c.GetSval().Sval = norm
			changed = true
		}
	}
	if target != nil && styleDependent(*target) {
		fold(top, *target)
	}
	colType := func(n *pg_query.Node) (types.Type, bool) {
		ref := n.GetColumnRef()
		if ref == nil || len(ref.Fields) == 0 {
			return types.Type{}, false
		}
		name := ref.Fields[len(ref.Fields)-1].GetString_()
		if name == nil {
			return types.Type{}, false
		}
		for _, c := range cols {
			if c.Name == name.Sval && styleDependent(c.Type) {
				return c.Type, true
			}
		}
		return types.Type{}, false
	}
	foldSide := func(n *pg_query.Node, t types.Type) {
		if l := n.GetList(); l != nil {
			for _, item := range l.Items {
				fold(item, t)
			}
			return
		}
		fold(n, t)
	}
	walkMessages(top.ProtoReflect(), func(m protoreflect.Message) {
		switch x := m.Interface().(type) {
		case *pg_query.TypeCast:
			if t, ok := castType(x.TypeName); ok {
				fold(x.Arg, t)
			}
		case *pg_query.A_Expr:
			if t, ok := colType(x.Lexpr); ok && x.Rexpr != nil {
				foldSide(x.Rexpr, t)
			} else if t, ok := colType(x.Rexpr); ok && x.Lexpr != nil {
				foldSide(x.Lexpr, t)
			}
		}
	})
	if foldErr != nil {
		return "", foldErr
	}
	if !changed {
		return text, nil
	}
	out, err := bind.DeparseExpr(top)
	if err != nil {
		return "", errcode.Wrap(errcode.InternalError, err, "store the expression %s", text)
	}
	return out, nil
}

// styleDependent reports the types whose text input depends on DateStyle,
// IntervalStyle or TimeZone.
func styleDependent(t types.Type) bool {
	switch t.Kind {
	case types.KindDate, types.KindTimestamp, types.KindTimestampTZ, types.KindInterval:
		return true
	}
	return false
}

// castType is the style-dependent type a cast names (without an interval
// field range, which changes how the text is read: left alone).
func castType(tn *pg_query.TypeName) (types.Type, bool) {
	if tn == nil || len(tn.Names) == 0 || len(tn.ArrayBounds) > 0 {
		return types.Type{}, false
	}
	name := tn.Names[len(tn.Names)-1].GetString_()
	if name == nil {
		return types.Type{}, false
	}
	switch name.Sval {
	case "date":
		return types.TDate, true
	case "timestamp":
		return types.TTimestamp, true
	case "timestamptz":
		return types.TTimestampTZ, true
	case "interval":
		if len(tn.Typmods) == 0 {
			return types.TInterval, true
		}
	}
	return types.Type{}, false
}
