// Package sqltest holds helpers shared by the compiler's tests: building an
// in-memory catalog from DDL text and rendering errors for golden files.
package sqltest

import (
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/parse"
)

// Exec applies DDL statements (CREATE TABLE / VIEW / MATERIALIZED VIEW /
// SOURCE / INDEX, DROP, ALTER TABLE ADD COLUMN) to an in-memory catalog. A
// materialized view's columns are computed by describe (nil = no columns).
func Exec(cat *catalog.Memory, sql string, describe func(cat catalog.Catalog, query string) ([]catalog.Column, error)) error {
	stmts, err := parse.Parse(sql)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		d, err := ddl.Convert(st)
		if err != nil {
			return err
		}
		switch x := d.(type) {
		case *ddl.CreateTable:
			cat.Add(&catalog.Relation{Kind: catalog.KindTable, Name: x.Name, Columns: x.Columns, PrimaryKey: x.PrimaryKey, InsertOnly: x.InsertOnly})
		case *ddl.CreateSource:
			rel := &catalog.Relation{Kind: catalog.KindSource, Name: x.Name, InsertOnly: true}
			for _, c := range x.Columns {
				rel.Columns = append(rel.Columns, c.Column)
			}
			cat.Add(rel)
		case *ddl.CreateView:
			kind := catalog.KindView
			if x.Materialized {
				kind = catalog.KindMaterializedView
			}
			var cols []catalog.Column
			if describe != nil {
				if cols, err = describe(cat, x.Query); err != nil {
					return err
				}
				for i, n := range x.ColumnNames {
					cols[i].Name = n
				}
			}
			cat.Add(&catalog.Relation{Kind: kind, Name: x.Name, SQL: x.Query, Columns: cols})
		case *ddl.CreateIndex:
			table, ok := cat.LookupRelation([]string{x.Table})
			if !ok {
				return fmt.Errorf("no table %s", x.Table)
			}
			cat.Add(&catalog.Relation{Kind: catalog.KindIndex, Name: x.Name, Index: &catalog.Index{Table: table.ID, Columns: x.Columns, Unique: x.Unique}})
		case *ddl.Drop:
			for _, n := range x.Names {
				cat.Drop(n)
			}
		case *ddl.AddColumn:
			rel, ok := cat.LookupRelation([]string{x.Table})
			if !ok {
				return fmt.Errorf("no table %s", x.Table)
			}
			rel.Columns = append(rel.Columns, x.Column)
		}
	}
	return nil
}

// FormatError renders an error for golden files: SQLSTATE, RS code,
// position and message.
func FormatError(err error) string {
	if e, ok := errcode.As(err); ok {
		s := fmt.Sprintf("error %s %s", e.State(), e.Code.ID)
		if e.Position > 0 {
			s += fmt.Sprintf(" at %d", e.Position)
		}
		return s + ": " + e.Message + "\n"
	}
	return "untyped error: " + err.Error() + "\n"
}
