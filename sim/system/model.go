package system

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// state of a commit as the clients know it.
type state uint8

const (
	// inflight: issued, no reply yet.
	inflight state = iota
	// unknown: the reply was an error, was lost, or the process crashed;
	// the commit must be all-or-nothing.
	unknown
	acked
)

// touch is a commit's change to an earlier acknowledged commit's rows.
type touch struct {
	target int64
	delete bool
	v, w   int64
}

// commitRec is one transaction of the workload: it inserts rows with key
// id into t1 and t2 and may update or delete the rows of ONE earlier
// acknowledged commit (each commit's rows are touched at most once), so
// the expected table state follows from the set of applied commits alone,
// whatever order concurrent or unknown commits landed in.
type commitRec struct {
	id      int64
	session int
	v, w    int64
	touch   *touch
	state   state
	epoch   uint64
	// floor is the highest epoch acknowledged before this commit was
	// issued: its own epoch must be above it (real-time order).
	floor uint64
	// call is when the commit was issued (virtual ns).
	call int64
	// Observations of a not-yet-acknowledged commit by reads: the lowest
	// frontier that showed it and the highest that did not. A read at
	// frontier F shows exactly the commits of epoch <= F, so
	// absentMax < presentMin always, and an acknowledged epoch e must lie
	// in (absentMax, presentMin].
	presentMin uint64
	absentMax  uint64
	absentSeen bool
}

type model struct {
	commits []*commitRec
	// touchable lists acknowledged commits nobody touched yet.
	touchable      []int64
	acked, unknown int
	nextID         int64
}

func newModel() *model { return &model{nextID: 1} }

func (m *model) get(id int64) *commitRec { return m.commits[id-1] }

// rowT1 and rowT2 are the rows commit c writes for its own key.
func (c *commitRec) rowT1() types.Row { return types.Row{c.id, c.v, c.id} }
func (c *commitRec) rowT2() types.Row { return types.Row{c.id, c.w, c.id} }

// observe records what a read at frontier f showed about a commit that is
// not acknowledged (yet).
func (c *commitRec) observe(f uint64, present bool) error {
	if present {
		c.presentMin = min(c.presentMin, f)
	} else if !c.absentSeen || f > c.absentMax {
		c.absentSeen, c.absentMax = true, f
	}
	if c.absentSeen && c.absentMax >= c.presentMin {
		return fmt.Errorf("%w: commit %d was visible at frontier %d but not at the later frontier %d", errChecker, c.id, c.presentMin, c.absentMax)
	}
	return nil
}

// checkAck checks an acknowledged epoch against earlier observations.
func (c *commitRec) checkAck() error {
	switch {
	case c.epoch > c.presentMin:
		return fmt.Errorf("%w: commit %d acknowledged at epoch %d but a read at frontier %d already showed it", errChecker, c.id, c.epoch, c.presentMin)
	case c.absentSeen && c.epoch <= c.absentMax:
		return fmt.Errorf("%w: commit %d acknowledged at epoch %d but a read at frontier %d did not show it", errChecker, c.id, c.epoch, c.absentMax)
	case c.epoch <= c.floor:
		return fmt.Errorf("%w: commit %d acknowledged at epoch %d, not after epoch %d acknowledged before it was issued", errChecker, c.id, c.epoch, c.floor)
	}
	return nil
}

// expected is the table state implied by the applied commits.
func (m *model) expected(applied func(*commitRec) bool) (t1, t2 map[int64]types.Row) {
	t1, t2 = map[int64]types.Row{}, map[int64]types.Row{}
	for _, c := range m.commits {
		if !applied(c) {
			continue
		}
		t1[c.id] = c.rowT1()
		t2[c.id] = c.rowT2()
	}
	for _, c := range m.commits {
		if !applied(c) || c.touch == nil {
			continue
		}
		t := c.touch
		if t.delete {
			delete(t1, t.target)
			delete(t2, t.target)
		} else {
			t1[t.target] = types.Row{t.target, t.v, c.id}
			t2[t.target] = types.Row{t.target, t.w, c.id}
		}
	}
	return t1, t2
}

// rowsByKey turns a table batch into rows by primary key (weights must be 1).
func rowsByKey(name string, b zset.Batch) (map[int64]types.Row, error) {
	b = zset.Consolidate(b)
	out := map[int64]types.Row{}
	for i, row := range b.Rows {
		if b.Weights[i] != 1 {
			return nil, fmt.Errorf("%w: table %s row %v has weight %d", errChecker, name, row, b.Weights[i])
		}
		k := row[0].(int64)
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%w: table %s has two rows with key %d", errChecker, name, k)
		}
		out[k] = row
	}
	return out, nil
}

// checkTables checks a consistent read of t1 and t2 at frontier f against
// the model: exactly the acknowledged commits of epoch <= f, and every
// other commit all-or-nothing and consistent with earlier reads.
func (m *model) checkTables(f uint64, got1, got2 map[int64]types.Row) error {
	// Infer which unacknowledged commits applied from their own t1 row
	// (never touched: only acknowledged commits are touched).
	for _, c := range m.commits {
		if c.state == acked {
			continue
		}
		if err := c.observe(f, got1[c.id] != nil); err != nil {
			return err
		}
	}
	want1, want2 := m.expected(func(c *commitRec) bool {
		if c.state == acked {
			return c.epoch <= f
		}
		return got1[c.id] != nil
	})
	if err := diffTable("t1", want1, got1); err != nil {
		return err
	}
	return diffTable("t2", want2, got2)
}

func diffTable(name string, want, got map[int64]types.Row) error {
	var problems []string
	for _, k := range sortedKeys(want, got) {
		w, g := want[k], got[k]
		if fmt.Sprint(w) != fmt.Sprint(g) {
			problems = append(problems, fmt.Sprintf("key %d: want %v, got %v", k, w, g))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: table %s differs from the model of acknowledged commits (lost or partial commit): %s", errChecker, name, strings.Join(problems, "; "))
	}
	return nil
}

// sortedKeys is the sorted union of the maps' keys.
func sortedKeys(maps ...map[int64]types.Row) []int64 {
	keys := map[int64]bool{}
	for _, m := range maps {
		//lint:maprange keys are sorted before use.
		for k := range m {
			keys[k] = true
		}
	}
	sorted := make([]int64, 0, len(keys))
	//lint:maprange sorted below.
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return sorted
}

// noPresence is presentMin before any read showed the commit.
const noPresence = math.MaxUint64

// compileView compiles a view's defining query against the catalog.
func compileView(snap catalog.Catalog, sql string) (*rsql.View, error) {
	return rsql.CompileView(snap, sql)
}

// adhoc serves the reference run's scans from one consistent read.
type adhoc struct{ batches map[catalog.ID]zset.Batch }

func (a adhoc) ScanRelation(rel *catalog.Relation) (zset.Batch, error) {
	b, ok := a.batches[rel.ID]
	if !ok {
		return zset.Batch{}, errcode.New(errcode.InternalError, "relation %s not read", rel.Name)
	}
	return b, nil
}

// checkView compares the incrementally maintained view with its defining
// query run once (non-incrementally) over the same snapshot of the tables.
func checkView(snap *control.Snapshot, view *catalog.Relation, inputs map[catalog.ID]zset.Batch, got zset.Batch, at types.TimestampTZ) error {
	v, err := compileView(snap, view.SQL)
	if err != nil {
		return err
	}
	// A temporal filter's reference runs at the read frontier's time.
	rows, err := rsql.RunPlan(v.Plan, adhoc{batches: inputs}, &expr.Env{StatementTime: at})
	if err != nil {
		return fmt.Errorf("reference for view %s: %w", view.Name, err)
	}
	var want []string
	for _, row := range rows {
		want = append(want, fmt.Sprint(row))
	}
	var have []string
	got = zset.Consolidate(got)
	for i, row := range got.Rows {
		if got.Weights[i] <= 0 {
			return fmt.Errorf("%w: view %s row %v has weight %d", errChecker, view.Name, row, got.Weights[i])
		}
		for range got.Weights[i] {
			have = append(have, fmt.Sprint(row))
		}
	}
	sort.Strings(want)
	sort.Strings(have)
	if strings.Join(want, "\n") != strings.Join(have, "\n") {
		return fmt.Errorf("%w: view %s (%s) differs from its query run over the tables:\nwant %v\ngot  %v", errChecker, view.Name, view.SQL, want, have)
	}
	return nil
}
