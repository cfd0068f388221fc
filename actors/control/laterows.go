package control

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Dead-letter tables. A table with a watermark may name a table its late
// rows are inserted into (WITH (late_rows = 'bids_late')), by id:
//
//	bids (watermark, late_rows) ──names──► bids_late (ordinary table)
//
// The table shard inserts a late row of bids into bids_late as it came,
// in the commit that brought it, so bids_late must take bids's rows
// unchanged: the same number of columns, of the same types, by position
// (names may differ), no NOT NULL where bids allows NULL, no CHECK
// constraint and no primary key (two late rows may be equal, and a key
// violation would fail the user's INSERT for a row it did not store), and
// no watermark of its own. checkLateRows enforces that when bids is
// created or ALTER TABLE bids SET (late_rows = ...) names it; afterwards the pair is kept matching: ADD COLUMN and ADD
// PRIMARY KEY are refused on both while they are linked, and bids_late
// cannot be dropped (not even with CASCADE, which would otherwise have to
// drop bids) while bids names it.

// SetLateRows is ALTER TABLE ... SET (late_rows = ...) / RESET
// (late_rows): the table's late rows go into LateRows from the next
// commit on (nil: dropped). Rows already dead-lettered stay where they
// are. (Ask; the reply is DDLResult or an error.)
type SetLateRows struct {
	Table    string
	LateRows *catalog.ID
}

func (a *Actor) setLateRows(m SetLateRows) (DDLResult, error) {
	rel, err := a.table(m.Table)
	if err != nil {
		return DDLResult{}, err
	}
	if rel.Watermark == nil {
		return DDLResult{}, errcode.New(errcode.LateRowsTableInvalid, "table %q has no watermark", rel.Name).
			WithDetail("Only a table declared WITH (watermark = '...') has late rows.")
	}
	altered := *rel
	watermark := *rel.Watermark
	watermark.LateRows = m.LateRows
	altered.Watermark = &watermark
	if err := a.checkLateRows(&altered); err != nil {
		return DDLResult{}, err
	}
	next := a.snap.clone()
	next.put(&altered, a.snap.deps[rel.ID])
	if err := a.commit(next, []*catalog.Relation{&altered}, nil); err != nil {
		return DDLResult{}, err
	}
	return DDLResult{Version: next.Version, Changed: &altered}, nil
}

// checkLateRows validates the dead-letter table named by table's watermark
// (nothing to check when it has none).
func (a *Actor) checkLateRows(table *catalog.Relation) error {
	if table.Watermark == nil || table.Watermark.LateRows == nil {
		return nil
	}
	dl, ok := a.snap.byID[*table.Watermark.LateRows]
	if !ok {
		return errcode.New(errcode.LateRowsTableInvalid, "the dead-letter table of %q does not exist", table.Name).WithSQLState("42P01")
	}
	invalid := func(state, format string, args ...any) error {
		return errcode.New(errcode.LateRowsTableInvalid, format, args...).WithSQLState(state).
			WithDetail("late_rows of table %s names %s %s.", table.Name, dl.Kind, dl.Name)
	}
	switch {
	case dl.ID == table.ID:
		return invalid("22023", "table %q cannot be its own dead-letter table", table.Name)
	case dl.Kind != catalog.KindTable:
		return invalid("42809", "dead-letter table %q is not a table", dl.Name)
	case dl.Watermark != nil:
		return invalid("22023", "dead-letter table %q has a watermark of its own", dl.Name)
	case len(dl.PrimaryKey) > 0:
		return invalid("22023", "dead-letter table %q has a primary key", dl.Name)
	case len(dl.Checks) > 0:
		return invalid("22023", "dead-letter table %q has CHECK constraints", dl.Name)
	case len(dl.Columns) != len(table.Columns):
		return invalid("42804", "dead-letter table %q has %d columns, but table %q has %d", dl.Name, len(dl.Columns), table.Name, len(table.Columns))
	}
	for i, c := range table.Columns {
		d := dl.Columns[i]
		if !d.Type.Equal(c.Type) {
			return invalid("42804", "column %d of dead-letter table %q is %s of type %s, but column %d of table %q is %s of type %s",
				i+1, dl.Name, d.Name, d.Type.SQLName(), i+1, table.Name, c.Name, c.Type.SQLName())
		}
		if d.NotNull && !c.NotNull {
			return invalid("22023", "column %q of dead-letter table %q is NOT NULL, but column %q of table %q is not", d.Name, dl.Name, c.Name, table.Name)
		}
	}
	return nil
}

// lateRowsUsers lists the tables whose late rows go into rel, sorted by
// id.
func (a *Actor) lateRowsUsers(rel *catalog.Relation) []*catalog.Relation {
	var out []*catalog.Relation
	for _, r := range a.snap.Relations() {
		if r.Kind == catalog.KindTable && r.Watermark != nil && r.Watermark.LateRows != nil && *r.Watermark.LateRows == rel.ID {
			out = append(out, r)
		}
	}
	return out
}

// checkDropLateRows refuses a DROP of the relations in order when one of
// them is the dead-letter table of a table that is not dropped with it.
// CASCADE does not help: the table naming it would have to go too.
func (a *Actor) checkDropLateRows(order []*catalog.Relation) error {
	dropped := map[catalog.ID]bool{}
	for _, r := range order {
		dropped[r.ID] = true
	}
	for _, r := range order {
		var lines []string
		for _, u := range a.lateRowsUsers(r) {
			if !dropped[u.ID] {
				lines = append(lines, fmt.Sprintf("late_rows of table %s names table %s", u.Name, r.Name))
			}
		}
		if len(lines) > 0 {
			return errcode.New(errcode.LateRowsTableInUse, "cannot drop table %s because other objects depend on it", r.Name).
				WithDetail("%s", strings.Join(lines, "\n"))
		}
	}
	return nil
}

// checkAlterLateRows refuses a change of rel's columns or key (what) while
// it is a dead-letter table or names one: the two tables must keep
// matching.
func (a *Actor) checkAlterLateRows(rel *catalog.Relation, what string) error {
	if rel.Watermark != nil && rel.Watermark.LateRows != nil {
		if dl, ok := a.snap.byID[*rel.Watermark.LateRows]; ok {
			return errcode.New(errcode.LateRowsTableInUse, "cannot %s table %s because its late rows go into table %s", what, rel.Name, dl.Name).
				WithSQLState("0A000").WithDetail("A dead-letter table keeps the columns of the table whose late rows it takes.")
		}
	}
	if users := a.lateRowsUsers(rel); len(users) > 0 {
		return errcode.New(errcode.LateRowsTableInUse, "cannot %s table %s because it is the dead-letter table of table %s", what, rel.Name, users[0].Name).
			WithSQLState("0A000").WithDetail("A dead-letter table keeps the columns of the table whose late rows it takes, and no primary key.")
	}
	return nil
}
