package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rockstream/rockstream/actors/control"
	sessionactor "github.com/rockstream/rockstream/actors/session"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/expr"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/syscat"
)

// writer applies one DML statement's row changes to the transaction.
type writer struct {
	s   *session
	rel *catalog.Relation
	// view holds the rows, by encoded key, this statement looked up or
	// changed, as the transaction sees them; sets, appended and removed
	// are its changes not yet sent to the session actor (flush).
	view     map[string]types.Row
	setKeys  []types.Row
	setEncs  []string // encodePK of setKeys
	setRows  []types.Row
	appended []types.Row
	removed  []types.Row
	// touched marks keys this statement already changed (ON CONFLICT DO
	// UPDATE may not affect a row twice; UPDATE changes a row once).
	touched map[string]bool
	// written are the new rows of this statement, for CHECK constraints.
	written []types.Row
	snap    *control.Snapshot
	// read is the target table as the statement's row plan read it (for
	// UPDATE ... FROM / DELETE ... USING on tables without a key).
	read zset.Batch
}

// verifyChecks evaluates the table's CHECK constraints over the rows this
// statement wrote, in one run of the engine: SELECT *, (check)... over just
// those rows. A false result fails the statement with 23514 (which aborts
// the transaction, so its partial writes never commit).
func (w *writer) verifyChecks(env *expr.Env) error {
	if len(w.rel.Checks) == 0 || len(w.written) == 0 {
		return nil
	}
	var sb strings.Builder
	sb.WriteString("SELECT *")
	for _, c := range w.rel.Checks {
		sb.WriteString(", (" + c.Expr + ")::boolean")
	}
	sb.WriteString(" FROM " + quoteIdent(w.rel.SchemaName()) + "." + quoteIdent(w.rel.Name))
	q, err := rsql.CompileQuery(w.snap, sb.String(), rsql.Options{})
	if err != nil {
		return err
	}
	var batch zset.Batch
	for _, r := range w.written {
		batch.Add(r, 1)
	}
	rows, err := runOnce(q.Plan, map[catalog.ID]zset.Batch{w.rel.ID: batch}, env)
	if err != nil {
		return err
	}
	width := len(w.rel.Columns)
	for _, r := range rows {
		for i, c := range w.rel.Checks {
			if r[width+i] == false {
				return errcode.New(errcode.CheckViolation, "new row for relation %q violates check constraint %q", w.rel.Name, c.Name).
					WithDetail("Failing row contains %s.", formatRow(w.rel, r[:width], w.s.outputStyle()))
			}
		}
	}
	return nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (s *session) writerFor(ctx context.Context, snap *control.Snapshot, rel *catalog.Relation, verb string) (*writer, error) {
	if err := s.ensureTxn(ctx); err != nil {
		return nil, err
	}
	if s.txn.readOnly {
		return nil, errcode.New(errcode.ReadOnlyTransaction, "cannot execute %s in a read-only transaction", verb)
	}
	if rel.Kind != catalog.KindTable || syscat.IsSystem(rel.ID) {
		return nil, errcode.New(errcode.WrongObjectType, "cannot change relation %q", rel.Name).
			WithDetail("%q is a %s; only tables accept INSERT, UPDATE and DELETE", rel.Name, rel.Kind)
	}
	return &writer{s: s, rel: rel, view: map[string]types.Row{}, touched: map[string]bool{}, snap: snap}, nil
}

// flush sends the statement's buffered changes to the session actor:
// the end of a statement (or a COPY chunk), before it returns success.
// Rows it looked up are forgotten too: later statements ask the actor.
func (w *writer) flush(ctx context.Context) error {
	defer clear(w.view)
	if len(w.setKeys) > 0 {
		keys, encs, rows := w.setKeys, w.setEncs, w.setRows
		w.setKeys, w.setEncs, w.setRows = nil, nil, nil
		if _, err := w.s.req(ctx, sessionactor.Set{Table: *w.rel, Keys: keys, Encoded: encs, Rows: rows}); err != nil {
			return err
		}
	}
	if len(w.appended) > 0 {
		rows := w.appended
		w.appended = nil
		if _, err := w.s.req(ctx, sessionactor.Append{Table: *w.rel, Rows: rows}); err != nil {
			return err
		}
	}
	if len(w.removed) > 0 {
		rows := w.removed
		w.removed = nil
		if _, err := w.s.req(ctx, sessionactor.Remove{Table: *w.rel, Rows: rows}); err != nil {
			return err
		}
	}
	return nil
}

// done flushes a statement that succeeded.
func (w *writer) done(ctx context.Context, cur gateway.Cursor, err error) (gateway.Cursor, error) {
	if err != nil {
		return nil, err
	}
	written := w.written
	if err := w.flush(ctx); err != nil {
		return nil, err
	}
	if err := w.checkUnique(ctx, written); err != nil {
		return nil, err
	}
	return cur, nil
}

// current returns the row a key has as this transaction sees it, asking
// the session actor in one request for the keys this statement has not
// seen yet.
func (w *writer) current(ctx context.Context, keys []types.Row) ([]types.Row, error) {
	return w.lookup(ctx, keys, nil, sessionactor.Lookup{})
}

// lookup is current with the keys' encodings (encodePK) when the caller
// has them (nil: computed here) and the actor's lookup options (lock,
// rows read, REPEATABLE READ visibility: actors/session Lookup).
func (w *writer) lookup(ctx context.Context, keys []types.Row, encs []string, opts sessionactor.Lookup) ([]types.Row, error) {
	if encs == nil {
		encs = make([]string, len(keys))
		for i, k := range keys {
			encs[i] = encodePK(w.rel, k)
		}
	}
	out := make([]types.Row, len(keys))
	ask, askEncs := keys, encs
	var at []int
	if !opts.Lock && opts.Read == nil && len(w.view) > 0 {
		// Keys this statement saw already need no request (a COPY chunk
		// starts with none).
		ask, askEncs = make([]types.Row, 0, len(keys)), make([]string, 0, len(keys))
		for i, k := range encs {
			if r, ok := w.view[k]; ok {
				out[i] = r
				continue
			}
			ask, askEncs = append(ask, keys[i]), append(askEncs, k)
			at = append(at, i)
		}
	}
	if len(ask) == 0 {
		return out, nil
	}
	opts.CatalogVersion, opts.Table, opts.Keys, opts.Encoded = w.snap.Version, *w.rel, ask, askEncs
	m, err := w.s.req(ctx, opts)
	if err != nil {
		return nil, err
	}
	res := m.(sessionactor.LookupResult)
	if res.Stale {
		return nil, errStaleRead
	}
	for j, r := range res.Rows {
		i := j
		if at != nil {
			i = at[j]
		}
		if mine, ok := w.view[encs[i]]; ok {
			r = mine // changed by this statement, not flushed yet
		} else {
			w.view[encs[i]] = r
		}
		out[i] = r
	}
	return out, nil
}

// currentRead is current for rows a statement read itself (UPDATE and
// DELETE evaluate their WHERE over a snapshot): for keys the transaction
// had not touched before, the row the statement read, not the one looked
// up now, is the base the commit checks (RS-2008). A row changed or
// deleted by another transaction between the statement's read and the
// lookup then conflicts at COMMIT instead of being overwritten with a
// value computed from its old version (a lost update).
//
// With lock, the keys are row-locked first, and a row that changed since
// the statement read it makes the statement run again (errStaleRead)
// instead of failing at COMMIT (REPEATABLE READ: 40001).
func (w *writer) currentRead(ctx context.Context, keys, read []types.Row, lock bool) ([]types.Row, error) {
	return w.lookup(ctx, keys, nil, sessionactor.Lookup{Read: read, Lock: lock})
}

// set changes the row under key (nil deletes it).
func (w *writer) set(key types.Row, row types.Row) error {
	return w.setEncoded(encodePK(w.rel, key), key, row)
}

// setEncoded is set for a key already encoded (encodePK).
func (w *writer) setEncoded(k string, key, row types.Row) error {
	if _, ok := w.view[k]; !ok {
		panic("engine: set before current") // current() records every key first
	}
	w.view[k] = row
	w.setKeys = append(w.setKeys, key)
	w.setEncs = append(w.setEncs, k)
	w.setRows = append(w.setRows, row)
	if row != nil {
		w.written = append(w.written, row)
	}
	if n := len(w.setKeys); n > sessionactor.TxnWritesMax {
		return errcode.New(errcode.TransactionTooLarge, "transaction changes more than %d rows", sessionactor.TxnWritesMax)
	}
	return nil
}

func (w *writer) checkNotNull(row types.Row) error {
	for i, c := range w.rel.Columns {
		if c.NotNull && row[i] == nil {
			return errcode.New(errcode.NotNullViolation, "null value in column %q of relation %q violates not-null constraint", c.Name, w.rel.Name).
				WithDetail("Failing row contains %s.", formatRow(w.rel, row, w.s.outputStyle()))
		}
	}
	return nil
}

// formatRow is an error detail's (v, ...), in the session's DateStyle,
// IntervalStyle and TimeZone as PostgreSQL prints it.
func formatRow(rel *catalog.Relation, row types.Row, st types.OutputStyle) string {
	parts := make([]string, len(row))
	for i, d := range row {
		if d == nil {
			parts[i] = "null"
		} else {
			parts[i] = types.FormatStyle(rel.Columns[i].Type, d, st)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// describeKey is an error detail's (col, ...)=(val, ...) of a primary key,
// its values in the session's styles (formatRow).
func describeKey(rel *catalog.Relation, key types.Row, st types.OutputStyle) string {
	names := make([]string, len(rel.PrimaryKey))
	vals := make([]string, len(rel.PrimaryKey))
	for i, c := range rel.PrimaryKey {
		names[i] = rel.Columns[c].Name
		vals[i] = types.FormatStyle(rel.Columns[c].Type, key[i], st)
	}
	return fmt.Sprintf("(%s)=(%s)", strings.Join(names, ", "), strings.Join(vals, ", "))
}

func (w *writer) duplicate(key types.Row) error {
	return errcode.New(errcode.UniqueViolation, "duplicate key value violates unique constraint %q", w.rel.PrimaryKeyConstraint()).
		WithDetail("Key %s already exists.", describeKey(w.rel, key, w.s.outputStyle()))
}

// returning evaluates a RETURNING list over affected rows.
type returning struct {
	exprs []expr.Expr
	rows  []types.Row
}

func newReturning(r *bind.Returning) (*returning, error) {
	if r == nil {
		return nil, nil
	}
	out := &returning{}
	for _, sc := range r.Exprs {
		e, err := lowerScalar(sc)
		if err != nil {
			return nil, err
		}
		out.exprs = append(out.exprs, e)
	}
	return out, nil
}

func (r *returning) add(env *expr.Env, row types.Row) error {
	if r == nil {
		return nil
	}
	out := make(types.Row, len(r.exprs))
	for i, e := range r.exprs {
		v, err := e.Eval(env, row)
		if err != nil {
			return err
		}
		out[i] = v
	}
	r.rows = append(r.rows, out)
	return nil
}

func (r *returning) cursor(tag string) gateway.Cursor {
	if r == nil {
		return &rowsCursor{tag: tag}
	}
	return &rowsCursor{rows: r.rows, tag: tag}
}

// startDML opens the writer of a DML statement, prepares its RETURNING
// list and runs its row plan over the snapshot (with the transaction's own
// writes).
func (s *session) startDML(ctx context.Context, snap *control.Snapshot, table *catalog.Relation, verb string, r *bind.Returning, rowsPlan plan.Node, env *expr.Env) (*writer, *returning, []types.Row, error) {
	w, err := s.writerFor(ctx, snap, table, verb)
	if err != nil {
		return nil, nil, nil, err
	}
	ret, err := newReturning(r)
	if err != nil {
		return nil, nil, nil, err
	}
	if rows, ok, err := valuesInOrder(rowsPlan, env); ok || err != nil {
		return w, ret, rows, err
	}
	rows, inputs, err := s.runPlanInputs(ctx, snap, rowsPlan, env)
	if err != nil {
		return nil, nil, nil, err
	}
	w.read = inputs[table.ID]
	return w, ret, rows, nil
}

func (s *session) insert(ctx context.Context, snap *control.Snapshot, st *rsql.Insert, env *expr.Env) (gateway.Cursor, error) {
	w, ret, rows, err := s.startDML(ctx, snap, st.Table, "INSERT", st.Returning, st.Rows, env)
	if err != nil {
		return nil, err
	}
	n, err := w.insertRows(ctx, snap, rows, st.OnConflict, env, ret)
	if err != nil {
		return nil, err
	}
	if err := w.verifyChecks(env); err != nil {
		return nil, err
	}
	return w.done(ctx, ret.cursor(fmt.Sprintf("INSERT 0 %d", n)), nil)
}

// insertRows inserts full rows (INSERT and COPY FROM), returning how many
// rows were inserted or updated.
func (w *writer) insertRows(ctx context.Context, snap *control.Snapshot, rows []types.Row, oc *bind.OnConflict, env *expr.Env, ret *returning) (int64, error) {
	for _, r := range rows {
		if err := w.checkNotNull(r); err != nil {
			return 0, err
		}
	}
	if len(w.rel.PrimaryKey) == 0 {
		w.written = append(w.written, rows...)
		w.appended = append(w.appended, rows...)
		for _, r := range rows {
			if err := ret.add(env, r); err != nil {
				return 0, err
			}
		}
		return int64(len(rows)), nil
	}
	// The keys and their encodings, computed once per row: the key rows
	// carved from one slab, the encodings from one string (a COPY's
	// transaction keeps them: one object for the collector to mark per
	// chunk instead of one per row).
	keys := make([]types.Row, len(rows))
	encs := make([]string, len(rows))
	npk := len(w.rel.PrimaryKey)
	slab := make(types.Row, len(rows)*npk)
	ends := make([]int, len(rows))
	buf := make([]byte, 0, len(rows)*9*npk)
	for i, r := range rows {
		k := slab[i*npk : (i+1)*npk : (i+1)*npk]
		for j, c := range w.rel.PrimaryKey {
			k[j] = r[c]
		}
		keys[i] = k
		buf = sessionactor.AppendKey(buf, w.rel, k)
		ends[i] = len(buf)
	}
	all, from := string(buf), 0
	for i, end := range ends {
		encs[i], from = all[from:end], end
	}
	if oc == nil && len(w.view) == 0 && slices.IsSorted(encs) && !hasRepeat(encs) {
		return w.insertNew(ctx, keys, encs, rows, env, ret)
	}
	// INSERT ... ON CONFLICT reads the rows it may update: the keys
	// (present or not) are locked before they are looked up, so two
	// upserts of one key run one after the other, the second seeing the
	// first's row, instead of losing an update or failing with 23505. At
	// REPEATABLE READ a conflicting row committed after the snapshot fails
	// with 40001 (actors/session Lookup.CheckVisible).
	opts := sessionactor.Lookup{}
	if oc != nil {
		opts.Lock, opts.CheckVisible = true, w.s.txn.repeatable()
	}
	if _, err := w.lookup(ctx, keys, encs, opts); err != nil {
		return 0, err
	}
	var set []expr.Expr
	var where expr.Expr
	if oc != nil && !oc.DoNothing {
		set = make([]expr.Expr, len(oc.Set))
		for i, a := range oc.Set {
			e, err := lowerScalar(a.Expr)
			if err != nil {
				return 0, err
			}
			set[i] = e
		}
		if oc.Where != nil {
			e, err := lowerScalar(oc.Where)
			if err != nil {
				return 0, err
			}
			where = e
		}
	}
	// Room for every row up front: flush hands these slices on, so each
	// COPY chunk starts them anew, and growing them by appending made
	// twice the garbage.
	w.setKeys, w.setEncs, w.setRows = slices.Grow(w.setKeys, len(rows)), slices.Grow(w.setEncs, len(rows)), slices.Grow(w.setRows, len(rows))
	w.written = slices.Grow(w.written, len(rows))
	var skip *uniqueSkipper
	if oc != nil && oc.DoNothing && oc.AnyConstraint {
		var err error
		if skip, err = w.uniqueSkipper(ctx, rows); err != nil {
			return 0, err
		}
	}
	var n int64
	for i, r := range rows {
		k := encs[i]
		existing := w.view[k]
		if existing == nil {
			if skip.conflicts(w, r) {
				continue
			}
			if err := w.setEncoded(k, keys[i], r); err != nil {
				return 0, err
			}
			if oc != nil {
				// Only ON CONFLICT reads touched: without it a second row
				// with this key is a duplicate by the check above.
				w.touched[k] = true
			}
			n++
			if err := ret.add(env, r); err != nil {
				return 0, err
			}
			continue
		}
		switch {
		case oc == nil:
			return 0, w.duplicate(keys[i])
		case oc.DoNothing:
			continue
		}
		if w.touched[k] {
			return 0, errcode.New(errcode.CardinalityViolation, "ON CONFLICT DO UPDATE command cannot affect row a second time").
				WithDetail("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")
		}
		combined := append(append(types.Row{}, existing...), r...)
		if where != nil {
			ok, err := where.Eval(env, combined)
			if err != nil {
				return 0, err
			}
			if ok != true {
				continue
			}
		}
		updated := append(types.Row{}, existing...)
		for j, a := range oc.Set {
			v, err := set[j].Eval(env, combined)
			if err != nil {
				return 0, err
			}
			updated[a.Column] = v
		}
		if err := w.checkNotNull(updated); err != nil {
			return 0, err
		}
		if err := w.replace(ctx, snap, keys[i], updated); err != nil {
			return 0, err
		}
		w.touched[k] = true
		n++
		if err := ret.add(env, updated); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// hasRepeat reports whether sorted holds a string twice.
func hasRepeat(sorted []string) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return true
		}
	}
	return false
}

// insertNew is insertRows for plain inserts of distinct keys by a
// statement that has seen no key yet (a COPY chunk in key order, an
// INSERT's rows): only a row the transaction already sees under a key is
// a duplicate, so the statement's view of keys (writer.view, a map entry
// per row) is not needed; nothing reads it before the flush.
func (w *writer) insertNew(ctx context.Context, keys []types.Row, encs []string, rows []types.Row, env *expr.Env, ret *returning) (int64, error) {
	m, err := w.s.req(ctx, sessionactor.Lookup{CatalogVersion: w.snap.Version, Table: *w.rel, Keys: keys, Encoded: encs})
	if err != nil {
		return 0, err
	}
	res := m.(sessionactor.LookupResult)
	if res.Stale {
		return 0, errStaleRead
	}
	for i, r := range rows {
		if res.Rows[i] != nil {
			return 0, w.duplicate(keys[i])
		}
		if err := ret.add(env, r); err != nil {
			return 0, err
		}
	}
	if len(w.setKeys) == 0 && len(w.written) == 0 {
		// NB: the statement's lists are these (a COPY chunk's): handed
		// on as they are instead of copied into lists of their own, which
		// were garbage once flushed (90 bytes a row, and more collections
		// over a COPY's growing heap).
		w.setKeys, w.setEncs, w.setRows, w.written = keys, encs, rows, rows
	} else {
		w.setKeys, w.setEncs, w.setRows = append(w.setKeys, keys...), append(w.setEncs, encs...), append(w.setRows, rows...)
		w.written = append(w.written, rows...)
	}
	if len(w.setKeys) > sessionactor.TxnWritesMax {
		return 0, errcode.New(errcode.TransactionTooLarge, "transaction changes more than %d rows", sessionactor.TxnWritesMax)
	}
	return int64(len(rows)), nil
}

// replace writes updated in place of the row under oldKey, moving it when
// its primary key changed.
func (w *writer) replace(ctx context.Context, snap *control.Snapshot, oldKey types.Row, updated types.Row) error {
	newKey := pkOf(w.rel, updated)
	if encodePK(w.rel, newKey) == encodePK(w.rel, oldKey) {
		return w.set(oldKey, updated)
	}
	cur, err := w.current(ctx, []types.Row{newKey})
	if err != nil {
		return err
	}
	if cur[0] != nil {
		return w.duplicate(newKey)
	}
	if err := w.set(oldKey, nil); err != nil {
		return err
	}
	w.touched[encodePK(w.rel, newKey)] = true
	return w.set(newKey, updated)
}

func (s *session) update(ctx context.Context, snap *control.Snapshot, st *rsql.Update, env *expr.Env) (gateway.Cursor, error) {
	if st.Table.InsertOnly && st.Table.Kind == catalog.KindTable {
		return nil, errcode.New(errcode.InsertOnlyTable, "cannot update table %q because it is insert-only", st.Table.Name)
	}
	w, ret, pairs, err := s.startDML(ctx, snap, st.Table, "UPDATE", st.Returning, st.Rows, env)
	if err != nil {
		return nil, err
	}
	width := len(st.Table.Columns)
	if len(w.rel.PrimaryKey) == 0 {
		if st.From {
			if pairs, err = w.onePerPhysicalRow(pairs), nil; err != nil {
				return nil, err
			}
		}
		cur, err := w.updateKeyless(pairs, width, env, ret)
		return w.done(ctx, cur, err)
	}
	var n int64
	oldKeys := make([]types.Row, 0, len(pairs))
	for _, p := range pairs {
		oldKeys = append(oldKeys, pkOf(w.rel, p[:width]))
	}
	oldRows := make([]types.Row, len(pairs))
	for i, p := range pairs {
		oldRows[i] = p[:width]
	}
	if _, err := w.currentRead(ctx, oldKeys, oldRows, true); err != nil {
		return nil, err
	}
	for i, p := range pairs {
		k := encodePK(w.rel, oldKeys[i])
		if w.touched[k] {
			continue // the same row reached twice (UPDATE ... FROM): changed once, as PostgreSQL
		}
		newRow := append(types.Row{}, p[width:2*width]...)
		if err := w.checkNotNull(newRow); err != nil {
			return nil, err
		}
		if err := w.replace(ctx, snap, oldKeys[i], newRow); err != nil {
			return nil, err
		}
		w.touched[k] = true
		n++
		if err := ret.add(env, withSources(newRow, p[2*width:])); err != nil {
			return nil, err
		}
	}
	if err := w.verifyChecks(env); err != nil {
		return nil, err
	}
	return w.done(ctx, ret.cursor(fmt.Sprintf("UPDATE %d", n)), nil)
}

func (s *session) delete(ctx context.Context, snap *control.Snapshot, st *rsql.Delete, env *expr.Env, lock bool) (gateway.Cursor, error) {
	if st.Table.InsertOnly && st.Table.Kind == catalog.KindTable {
		return nil, errcode.New(errcode.InsertOnlyTable, "cannot delete from table %q because it is insert-only", st.Table.Name)
	}
	w, ret, rows, err := s.startDML(ctx, snap, st.Table, "DELETE", st.Returning, st.Rows, env)
	if err != nil {
		return nil, err
	}
	if len(w.rel.PrimaryKey) == 0 {
		if st.Using {
			if rows, err = w.onePerPhysicalRow(rows), nil; err != nil {
				return nil, err
			}
		}
		cur, err := w.deleteKeyless(rows, len(st.Table.Columns), env, ret)
		return w.done(ctx, cur, err)
	}
	keys := make([]types.Row, len(rows))
	for i, r := range rows {
		keys[i] = pkOf(w.rel, r)
	}
	width := len(st.Table.Columns)
	read := make([]types.Row, len(rows))
	for i, r := range rows {
		read[i] = r[:width]
	}
	if _, err := w.currentRead(ctx, keys, read, lock); err != nil {
		return nil, err
	}
	var n int64
	for i, r := range rows {
		k := encodePK(w.rel, keys[i])
		if w.touched[k] || w.view[k] == nil {
			continue
		}
		if err := w.set(keys[i], nil); err != nil {
			return nil, err
		}
		w.touched[k] = true
		n++
		if err := ret.add(env, r); err != nil {
			return nil, err
		}
	}
	return w.done(ctx, ret.cursor(fmt.Sprintf("DELETE %d", n)), nil)
}

// valuesInOrder evaluates a statement's rows given by VALUES (under
// projections) in the order they are written, as PostgreSQL processes
// them: which of two rows with one key ON CONFLICT DO NOTHING keeps, and
// the order of RETURNING, depend on it (the ad-hoc circuit returns rows
// in no particular order). ok is false for any other plan.
func valuesInOrder(n plan.Node, env *expr.Env) (rows []types.Row, ok bool, err error) {
	switch x := n.(type) {
	case *plan.Values:
		// Every row lowered before any is evaluated: a fallback to the
		// circuit must not follow nextval calls already made.
		exprs := make([][]expr.Expr, len(x.Rows))
		for i, r := range x.Rows {
			if exprs[i], ok = lowerAll(r); !ok {
				return nil, false, nil // evaluated by the circuit instead
			}
		}
		rows = make([]types.Row, len(x.Rows))
		for i, r := range exprs {
			if rows[i], err = evalAll(r, env, nil); err != nil {
				return nil, true, err
			}
		}
		return rows, true, nil
	case *plan.Project:
		exprs, ok := lowerAll(x.Exprs)
		if !ok {
			return nil, false, nil
		}
		in, ok, err := valuesInOrder(x.Input, env)
		if !ok || err != nil {
			return nil, ok, err
		}
		rows = make([]types.Row, len(in))
		for i, r := range in {
			if rows[i], err = evalAll(exprs, env, r); err != nil {
				return nil, true, err
			}
		}
		return rows, true, nil
	}
	return nil, false, nil
}

// lowerAll lowers scalars; ok is false if one cannot be evaluated alone.
func lowerAll(scalars []plan.Scalar) ([]expr.Expr, bool) {
	out := make([]expr.Expr, len(scalars))
	for i, sc := range scalars {
		e, err := lowerScalar(sc)
		if err != nil {
			return nil, false
		}
		out[i] = e
	}
	return out, true
}

// evalAll evaluates exprs over row in into one row.
func evalAll(exprs []expr.Expr, env *expr.Env, in types.Row) (types.Row, error) {
	out := make(types.Row, len(exprs))
	for i, e := range exprs {
		v, err := e.Eval(env, in)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
