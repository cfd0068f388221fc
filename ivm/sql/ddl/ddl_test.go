package ddl_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/sql/sqltest"
)

func formatColumn(c catalog.Column) string {
	s := c.Name + " " + c.Type.SQLName()
	if c.NotNull {
		s += " NOT NULL"
	}
	if c.Default != "" {
		s += " DEFAULT " + c.Default
	}
	if c.Identity != "" {
		s += " IDENTITY " + c.Identity
	}
	return s
}

func describe(d ddl.Statement) string {
	var b strings.Builder
	switch x := d.(type) {
	case *ddl.CreateTable:
		fmt.Fprintf(&b, "create table %s if_not_exists=%v insert_only=%v pk=%v\n", x.Name, x.IfNotExists, x.InsertOnly, x.PrimaryKey)
		for _, c := range x.Columns {
			fmt.Fprintf(&b, "  %s\n", formatColumn(c))
		}
		for _, c := range x.Checks {
			fmt.Fprintf(&b, "  check %s: %s\n", c.Name, c.Expr)
		}
		for _, s := range x.Sequences {
			fmt.Fprintf(&b, "  sequence for column %d identity=%q %s\n", s.Column, s.Identity, formatSequence(s.Sequence))
		}
		if len(x.SequenceRefs) > 0 {
			fmt.Fprintf(&b, "  default sequences %v\n", x.SequenceRefs)
		}
	case *ddl.CreateSequence:
		fmt.Fprintf(&b, "create sequence %s if_not_exists=%v %s owned_by=%s.%s\n", x.Name, x.IfNotExists, formatSequence(x.Sequence), x.OwnedByTable, x.OwnedByColumn)
	case *ddl.AlterSequence:
		restart := "start"
		if x.Restart != nil {
			restart = fmt.Sprint(*x.Restart)
		}
		fmt.Fprintf(&b, "alter sequence %s if_exists=%v restart=%s\n", x.Name, x.IfExists, restart)
	case *ddl.CreateView:
		fmt.Fprintf(&b, "create view %s materialized=%v or_replace=%v columns=%v options=%v\n  query: %s\n", x.Name, x.Materialized, x.OrReplace, x.ColumnNames, x.Options, x.Query)
	case *ddl.Drop:
		fmt.Fprintf(&b, "drop kind=%d names=%v if_exists=%v cascade=%v\n", x.Kind, x.Names, x.IfExists, x.Cascade)
	case *ddl.CreateIndex:
		fmt.Fprintf(&b, "create index %q on %s if_not_exists=%v unique=%v\n", x.Name, x.Table, x.IfNotExists, x.Unique)
		for _, c := range x.Columns {
			fmt.Fprintf(&b, "  %s desc=%v nulls_first=%v opclass=%q\n", c.Column, c.Descending, c.NullsFirst, c.OperatorClass)
		}
	case *ddl.AddColumn:
		fmt.Fprintf(&b, "alter table %s add column if_not_exists=%v %s\n", x.Table, x.IfNotExists, formatColumn(x.Column))
	case *ddl.AddPrimaryKey:
		fmt.Fprintf(&b, "add primary key %s (%s) name=%s\n", x.Table, strings.Join(x.Columns, ", "), x.Name)
	case *ddl.CreateSource:
		fmt.Fprintf(&b, "create source %s rate=%d\n", x.Name, x.RatePerSecond)
		for _, c := range x.Columns {
			fmt.Fprintf(&b, "  %s gen=%d args=%v\n", formatColumn(c.Column), c.Generator, c.Args)
		}
	case *ddl.CreateSchema:
		fmt.Fprintf(&b, "create schema %s if_not_exists=%v\n", x.Name, x.IfNotExists)
	case *ddl.DropSchema:
		fmt.Fprintf(&b, "drop schema names=%v if_exists=%v cascade=%v\n", x.Names, x.IfExists, x.Cascade)
	}
	// Qualified names as written (catalog.Qualify) show as schema/name.
	return strings.ReplaceAll(b.String(), "\x00", "/")
}

func formatSequence(s catalog.Sequence) string {
	return fmt.Sprintf("as %s start %d increment %d min %d max %d cache %d cycle=%v", s.Type.SQLName(), s.Start, s.Increment, s.Min, s.Max, s.Cache, s.Cycle)
}

func TestConvert(t *testing.T) {
	datadriven.RunTest(t, "testdata/ddl", func(t *testing.T, d *datadriven.TestData) string {
		st, err := parse.ParseOne(d.Input)
		if err != nil {
			return sqltest.FormatError(err)
		}
		out, err := ddl.Convert(st)
		if err != nil {
			return sqltest.FormatError(err)
		}
		return describe(out)
	})
}

// TestLateRowsOption: late_rows is 'drop' (any case) or a table name
// written as in SQL; anything else is refused naming the option.
func TestLateRowsOption(t *testing.T) {
	for text, want := range map[string]string{
		"drop": "", " DROP ": "", "bids_late": "bids_late", "Bids_Late": "bids_late",
		`"Late"`: "Late", "audit.bids_late": catalog.Qualify("audit", "bids_late"), `"drop"`: "drop",
	} {
		got, err := ddl.LateRowsOption(text)
		if err != nil || got != want {
			t.Errorf("late_rows = %q: %q, %v; want %q", text, got, err, want)
		}
	}
	for _, text := range []string{"", "a b", "t; DROP TABLE u", "only t", "1", "t AS x", "db.s.t"} {
		if got, err := ddl.LateRowsOption(text); err == nil {
			t.Errorf("late_rows = %q: %q, want an error", text, got)
		}
	}
}
