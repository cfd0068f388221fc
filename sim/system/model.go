package system

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// outcome of a commit as the client saw it.
type outcome uint8

const (
	// unknown: the reply was an error or the process crashed; the commit
	// must be all-or-nothing.
	unknown outcome = iota
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
// whatever order unknown commits landed in.
type commitRec struct {
	id      int64
	v, w    int64
	touch   *touch
	outcome outcome
	epoch   uint64
	// observed is set once a read showed whether an unknown commit applied;
	// it must never change afterwards.
	observed, applied bool
}

type model struct {
	commits []*commitRec
	// touchable lists acknowledged commits nobody touched yet.
	touchable       []int64
	acked, unknown  int
	nextID          int64
	touchedByID     map[int64]int64
	maxObservedUnkn int64
}

func newModel() *model { return &model{nextID: 1, touchedByID: map[int64]int64{}} }

func (m *model) get(id int64) *commitRec { return m.commits[id-1] }

// commitOne issues one transaction and records its outcome.
func (r *runner) commitOne() (uint64, bool) {
	m := r.model
	c := &commitRec{id: m.nextID, v: int64(r.rnd.IntN(valueDomain)), w: int64(r.rnd.IntN(2 * valueDomain))}
	m.nextID++
	m.commits = append(m.commits, c)
	if len(m.touchable) > 0 && r.rnd.IntN(2) == 0 {
		i := r.rnd.IntN(len(m.touchable))
		target := m.touchable[i]
		m.touchable = append(m.touchable[:i], m.touchable[i+1:]...)
		c.touch = &touch{target: target, delete: r.rnd.IntN(3) == 0, v: int64(r.rnd.IntN(valueDomain)), w: int64(r.rnd.IntN(2 * valueDomain))}
		m.touchedByID[target] = c.id
	}
	writes := []shard.RowWrite{
		{Table: r.t1.ID, Key: types.Row{c.id}, Row: types.Row{c.id, c.v, c.id}, MustNotExist: true},
		{Table: r.t2.ID, Key: types.Row{c.id}, Row: types.Row{c.id, c.w, c.id}, MustNotExist: true},
	}
	if t := c.touch; t != nil {
		if t.delete {
			writes = append(writes,
				shard.RowWrite{Table: r.t1.ID, Key: types.Row{t.target}},
				shard.RowWrite{Table: r.t2.ID, Key: types.Row{t.target}})
		} else {
			writes = append(writes,
				shard.RowWrite{Table: r.t1.ID, Key: types.Row{t.target}, Row: types.Row{t.target, t.v, c.id}},
				shard.RowWrite{Table: r.t2.ID, Key: types.Row{t.target}, Row: types.Row{t.target, t.w, c.id}})
		}
	}
	reply, err := r.ask(shard.ActorID, shard.Commit{Snapshot: r.snap, Writes: writes})
	if err != nil {
		m.unknown++
		r.logf("commit %d (touch %+v): unknown: %v", c.id, c.touch, err)
		return 0, false
	}
	c.outcome, c.epoch = acked, reply.(shard.Committed).Epoch
	m.acked++
	r.logf("commit %d (touch %+v): epoch %d", c.id, c.touch, c.epoch)
	if c.epoch <= r.maxAcked {
		// Sequential client: each acknowledged commit is later than the last.
		r.s.Fail(fmt.Errorf("%w: commit %d acknowledged epoch %d, not after the previous acknowledged epoch %d", errChecker, c.id, c.epoch, r.maxAcked))
		return 0, false
	}
	r.maxAcked = c.epoch
	m.touchable = append(m.touchable, c.id)
	return c.epoch, true
}

// expected is the table state implied by the applied commits.
func (m *model) expected(applied func(*commitRec) bool) (t1, t2 map[int64]types.Row) {
	t1, t2 = map[int64]types.Row{}, map[int64]types.Row{}
	for _, c := range m.commits {
		if !applied(c) {
			continue
		}
		t1[c.id] = types.Row{c.id, c.v, c.id}
		t2[c.id] = types.Row{c.id, c.w, c.id}
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

// checkTables checks a consistent read of t1 and t2 against the model:
// every acknowledged commit (up to minEpoch) present, every unknown commit
// all-or-nothing and stable once observed.
func (r *runner) checkTables(b1, b2 zset.Batch) error {
	got1, err := rowsByKey("t1", b1)
	if err != nil {
		return err
	}
	got2, err := rowsByKey("t2", b2)
	if err != nil {
		return err
	}
	m := r.model
	// Infer which unknown commits applied from their own t1 row (never
	// touched: only acknowledged commits are touched).
	for _, c := range m.commits {
		if c.outcome != unknown {
			continue
		}
		_, present := got1[c.id]
		if c.observed && c.applied != present {
			return fmt.Errorf("%w: unknown commit %d was observed applied=%v, now applied=%v", errChecker, c.id, c.applied, present)
		}
		c.observed, c.applied = true, present
	}
	want1, want2 := m.expected(func(c *commitRec) bool { return c.outcome == acked || c.applied })
	if err := diffTable("t1", want1, got1); err != nil {
		return err
	}
	return diffTable("t2", want2, got2)
}

func diffTable(name string, want, got map[int64]types.Row) error {
	var problems []string
	keys := map[int64]bool{}
	//lint:maprange keys are sorted before use.
	for k := range want {
		keys[k] = true
	}
	//lint:maprange keys are sorted before use.
	for k := range got {
		keys[k] = true
	}
	sorted := make([]int64, 0, len(keys))
	//lint:maprange sorted below.
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for _, k := range sorted {
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

// readCheck reads both tables and every view at MinEpoch and checks them.
func (r *runner) readCheck(minEpoch uint64, final bool) error {
	rels := []catalog.ID{r.t1.ID, r.t2.ID}
	for _, v := range r.views {
		rels = append(rels, v.ID)
	}
	reply, err := r.ask(shard.ActorID, shard.Read{Snapshot: r.snap, Relations: rels, MinEpoch: minEpoch})
	if err != nil {
		r.logf("read at %d: %v", minEpoch, err)
		if final {
			return err
		}
		return nil
	}
	r.reads++
	res := reply.(shard.ReadResult)
	if res.Frontier < minEpoch {
		return fmt.Errorf("%w: read with MinEpoch %d answered at frontier %d (read-your-writes)", errChecker, minEpoch, res.Frontier)
	}
	if res.Frontier < r.last.Frontier {
		return fmt.Errorf("%w: read frontier %d behind a frontier seen before (%d)", errChecker, res.Frontier, r.last.Frontier)
	}
	r.last.Frontier = res.Frontier
	if err := r.checkTables(res.Batches[0], res.Batches[1]); err != nil {
		return fmt.Errorf("read at frontier %d: %w", res.Frontier, err)
	}
	inputs := map[catalog.ID]zset.Batch{r.t1.ID: res.Batches[0], r.t2.ID: res.Batches[1]}
	for i, v := range r.views {
		if err := checkView(r.snap, v, inputs, res.Batches[2+i]); err != nil {
			return fmt.Errorf("read at frontier %d: %w", res.Frontier, err)
		}
	}
	return nil
}

// statusCheck: LastEpoch and Frontier never go backwards (across crashes),
// the frontier never passes the last epoch, and no acknowledged epoch is
// above the durable last epoch.
func (r *runner) statusCheck() error {
	reply, err := r.ask(shard.ActorID, shard.GetStatus{})
	if err != nil {
		return err
	}
	st := reply.(shard.Status)
	switch {
	case st.LastEpoch < r.last.LastEpoch:
		return fmt.Errorf("%w: shard LastEpoch went backwards: %d after %d", errChecker, st.LastEpoch, r.last.LastEpoch)
	case st.LastEpoch < r.maxAcked:
		return fmt.Errorf("%w: shard LastEpoch %d below acknowledged epoch %d", errChecker, st.LastEpoch, r.maxAcked)
	case st.Frontier < r.last.Frontier:
		return fmt.Errorf("%w: shard frontier went backwards: %d after %d", errChecker, st.Frontier, r.last.Frontier)
	case st.Frontier > st.LastEpoch:
		return fmt.Errorf("%w: shard frontier %d ahead of its last epoch %d", errChecker, st.Frontier, st.LastEpoch)
	}
	r.last.LastEpoch, r.last.Frontier = st.LastEpoch, st.Frontier
	return nil
}

// compileView compiles a view's defining query against the catalog.
func compileView(snap *control.Snapshot, sql string) (*rsql.View, error) {
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
func checkView(snap *control.Snapshot, view *catalog.Relation, inputs map[catalog.ID]zset.Batch, got zset.Batch) error {
	v, err := compileView(snap, view.SQL)
	if err != nil {
		return err
	}
	rows, err := rsql.RunPlan(v.Plan, adhoc{batches: inputs}, &expr.Env{})
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
