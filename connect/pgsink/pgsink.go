// Package pgsink is the PostgreSQL sink (CREATE SINK name FROM view INTO
// POSTGRES (connection = '…', table = '…', mode = 'upsert' | 'append',
// key = '…')): it writes a materialized view's changes into a table of a
// PostgreSQL database, epoch by epoch.
//
//   - upsert: the table mirrors the view by key (INSERT ... ON CONFLICT
//     (key) DO UPDATE for a key inserted or changed, DELETE for a key that
//     left the view).
//   - append: every change is a new row: the view's columns, then
//     rockstream_epoch (the epoch the change belongs to) and
//     rockstream_diff (+n: n copies of the row inserted, -n: deleted).
//
// Exactly once: each batch of closed epochs is written in one PostgreSQL
// transaction together with the sink's progress row (ProgressTable, in the
// target table's schema): (sink_id, epoch) says through which epoch the
// table holds the view. A (re)started session reads that row and resumes
// AS OF its epoch (the view's change history must still reach it), so a
// crash before the COMMIT loses nothing and a crash after it repeats
// nothing; there is no local bookkeeping to disagree with the database.
// Every transaction advances the progress row only from the epoch its
// session read (UPDATE ... WHERE epoch = read), so two sessions of one
// sink (a stalled one and its successor) can never both deliver an epoch:
// the second one's UPDATE waits for the first's transaction and then
// matches no row.
//
// The rows travel as one JSON array per statement (the view's rows as
// row_to_json writes them) that the database turns back into typed rows
// with json_to_recordset, so every type converts the way PostgreSQL's own
// input functions and assignment casts convert it.
//
// It runs at the edge of the process, on its own goroutine per sink
// (package sink's Runner), reaching the view only through sink.Changes.
package pgsink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/connect/sink"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// ProgressTable is the table, in the target table's schema, holding every
// POSTGRES sink's last delivered epoch. A sink creates it if absent.
const ProgressTable = "rockstream_sink_progress"

// progressTableDDL creates ProgressTable in a schema (%s: the quoted
// schema name).
const progressTableDDL = `CREATE TABLE IF NOT EXISTS %s.` + ProgressTable + ` (
	sink_id text PRIMARY KEY,
	sink_name text NOT NULL,
	target text NOT NULL,
	epoch bigint NOT NULL,
	committed_at timestamptz NOT NULL DEFAULT now())`

// Limits (STYLE.md 10).
const (
	// txnRowsMax bounds the rows of one PostgreSQL transaction: a batch
	// of updates is cut at epoch boundaries past it (an epoch is never
	// split, so one huge epoch is one transaction).
	txnRowsMax = 50_000
	// statementRowsMax bounds the rows of one statement (one JSON
	// parameter) within a transaction.
	statementRowsMax = 10_000
	// connectTimeout bounds connecting to the database.
	connectTimeout = 30 * time.Second
	// requestTimeout bounds one transaction or one DDL-time check.
	requestTimeout = 60 * time.Second
)

// Config configures a sink.
type Config struct {
	// Name is the sink's name (logs, the progress row); Spec.SinkID
	// names its progress row.
	Name string
	Spec *ddl.PostgresSink
	// Columns are the view's columns; Key the indexes of Spec.Key in them.
	Columns []catalog.Column
	Key     []int
	Changes sink.Changes
	Logger  *slog.Logger
}

// Writer is a running POSTGRES sink.
type Writer struct {
	cfg Config
	*sink.Runner
}

// Start runs the sink on its own goroutine until Stop.
func Start(cfg Config) *Writer {
	w := &Writer{cfg: cfg}
	w.Runner = sink.Start(cfg.Name, "POSTGRES", cfg.Logger, w.session)
	return w
}

// String describes the sink for logs.
func (w *Writer) String() string {
	return fmt.Sprintf("POSTGRES sink %s → %s", w.cfg.Name, w.cfg.Spec.Table)
}

// sessionParams pin the settings the sink's text values are read in
// (intervals in postgres style, ISO dates, time stamps with their
// offset), whatever the target's defaults (ALTER DATABASE ... SET
// IntervalStyle = sql_standard, DateStyle = 'SQL, DMY').
//
//lint:immutable a constant table.
var sessionParams = map[string]string{
	"timezone":         "UTC",
	"datestyle":        "ISO, MDY",
	"intervalstyle":    "postgres",
	"application_name": "rockstream-sink",
}

// connect opens a connection to the sink's database.
func connect(ctx context.Context, connString string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, errcode.Wrap(errcode.SQLInvalidParameterValue, err, "invalid connection string for the POSTGRES sink")
	}
	for k, v := range sessionParams { //lint:maprange order does not matter: a map of parameters
		cfg.RuntimeParams[k] = v
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > connectTimeout {
		cfg.ConnectTimeout = connectTimeout
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		return conn, nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "28"):
			return nil, errcode.Wrap(errcode.ConnectorAuthenticationFailed, err, "the sink's PostgreSQL at %s:%d refused user %q", cfg.Host, cfg.Port, cfg.User)
		case pgErr.Code == "3D000":
			return nil, errcode.Wrap(errcode.ConnectorUnreachable, err, "the sink's database %q does not exist", cfg.Database)
		}
	}
	return nil, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot connect to the sink's PostgreSQL at %s:%d", cfg.Host, cfg.Port)
}

// table is the sink's target table as the database resolved it, with the
// statements writing it.
type table struct {
	schema, name string
	// quoted is schema.name quoted; progress the quoted ProgressTable.
	quoted, progress string
	// upsert, remove (upsert mode) and insert (append mode) take one JSON
	// array parameter.
	upsert, remove, insert string
}

// resolve finds the target table (RS-1023 when missing) and builds the
// sink's statements.
func (w *Writer) resolve(ctx context.Context, conn *pgx.Conn) (*table, error) {
	spec := w.cfg.Spec
	var schema, name *string
	err := conn.QueryRow(ctx, `SELECT n.nspname::text, c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = to_regclass($1) AND c.relkind IN ('r', 'p')`, spec.Table).Scan(&schema, &name)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errcode.New(errcode.ConnectorSinkTableMissing, "the POSTGRES sink's table %s does not exist (or is not a table) in the target database", spec.Table)
	}
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42602" {
			return nil, errcode.Wrap(errcode.ConnectorSinkTableMissing, err, "the POSTGRES sink option table = '%s' is not a table name", spec.Table)
		}
		return nil, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot look up the sink's table %s", spec.Table)
	}
	t := &table{schema: *schema, name: *name}
	t.quoted = pgx.Identifier{t.schema, t.name}.Sanitize()
	t.progress = pgx.Identifier{t.schema, ProgressTable}.Sanitize()

	// NB: a json or jsonb value travels as a JSON string of its text and
	// is cast back: as a nested JSON value, json_to_recordset would turn
	// the JSON null into SQL NULL.
	cols := make([]string, len(w.cfg.Columns))
	defs := make([]string, len(w.cfg.Columns))
	sel := make([]string, len(w.cfg.Columns))
	for i, c := range w.cfg.Columns {
		cols[i] = pgx.Identifier{c.Name}.Sanitize()
		defs[i] = cols[i] + " " + typeName(c.Type)
		sel[i] = "d." + cols[i]
		if asText(c.Type) {
			defs[i] = cols[i] + " text"
			sel[i] += "::" + typeName(c.Type)
		}
	}
	list, selList := strings.Join(cols, ", "), strings.Join(sel, ", ")
	if spec.Mode == ddl.PostgresSinkAppend {
		epoch, diff := pgx.Identifier{ddl.PostgresSinkEpochColumn}.Sanitize(), pgx.Identifier{ddl.PostgresSinkDiffColumn}.Sanitize()
		t.insert = fmt.Sprintf("INSERT INTO %s (%s, %s, %s) SELECT %s, d.%s, d.%s FROM json_to_recordset($1::json) AS d(%s, %s bigint, %s bigint)",
			t.quoted, list, epoch, diff, selList, epoch, diff, strings.Join(defs, ", "), epoch, diff)
		return t, nil
	}
	isKey := map[int]bool{}
	var keyCols, keyDefs, match, set []string
	for _, at := range w.cfg.Key {
		isKey[at] = true
		keyCols = append(keyCols, cols[at])
		keyDefs = append(keyDefs, defs[at])
		match = append(match, fmt.Sprintf("t.%s = %s", cols[at], sel[at]))
	}
	for i := range cols {
		if !isKey[i] {
			set = append(set, fmt.Sprintf("%s = EXCLUDED.%s", cols[i], cols[i]))
		}
	}
	action := "DO NOTHING"
	if len(set) > 0 {
		action = "DO UPDATE SET " + strings.Join(set, ", ")
	}
	t.upsert = fmt.Sprintf("INSERT INTO %s AS t (%s) SELECT %s FROM json_to_recordset($1::json) AS d(%s) ON CONFLICT (%s) %s",
		t.quoted, list, selList, strings.Join(defs, ", "), strings.Join(keyCols, ", "), action)
	t.remove = fmt.Sprintf("DELETE FROM %s AS t USING json_to_recordset($1::json) AS d(%s) WHERE %s",
		t.quoted, strings.Join(keyDefs, ", "), strings.Join(match, " AND "))
	return t, nil
}

// typeName is a view column's type as a column definition of
// json_to_recordset names it: without modifiers (the table's column
// applies its own on assignment).
func typeName(t types.Type) string {
	switch t.Kind {
	case types.KindArray:
		if t.Elem != nil {
			return typeName(*t.Elem) + "[]"
		}
	case types.KindChar:
		return "bpchar"
	case types.KindUnknown:
		return "text"
	}
	return types.Type{Kind: t.Kind, Typmod: -1}.SQLName()
}

// asText reports the types whose values travel as JSON strings of their
// text (rowJSON).
func asText(t types.Type) bool { return t.Kind == types.KindJSON || t.Kind == types.KindJSONB }

// ensureProgressTable creates ProgressTable in the target's schema if it
// is absent.
func ensureProgressTable(ctx context.Context, conn *pgx.Conn, t *table) error {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", t.progress).Scan(&exists); err != nil {
		return errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot look up the sink progress table %s", t.progress)
	}
	if exists {
		return nil
	}
	ddlText := fmt.Sprintf(progressTableDDL, pgx.Identifier{t.schema}.Sanitize())
	if _, err := conn.Exec(ctx, ddlText); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			// NB: another session created it at the same time.
			return nil
		}
		return errcode.Wrap(errcode.ConnectorPostgresSinkFailed, err, "cannot create the sink progress table %s; create it beforehand as: %s", t.progress, strings.Join(strings.Fields(ddlText), " "))
	}
	return nil
}

// Check is CREATE SINK's validation, before anything is created: the
// database is reachable, the table exists, PostgreSQL accepts the sink's
// statements on it (planned, not run: every view column has a column of
// its name taking its type, the epoch and diff columns of append mode
// exist, upsert's key has a unique index), its other columns can be left
// to their defaults, and an upsert sink's table is empty. It creates the
// progress table if absent.
func Check(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	conn, err := connect(ctx, cfg.Spec.Connection)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	w := &Writer{cfg: cfg}
	t, err := w.resolve(ctx, conn)
	if err != nil {
		return err
	}
	written := map[string]bool{}
	for _, c := range cfg.Columns {
		written[c.Name] = true
	}
	if cfg.Spec.Mode == ddl.PostgresSinkAppend {
		written[ddl.PostgresSinkEpochColumn], written[ddl.PostgresSinkDiffColumn] = true, true
	}
	rows, err := conn.Query(ctx, `SELECT attname::text FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped
		AND attnotnull AND NOT atthasdef AND attidentity = '' AND attgenerated = '' ORDER BY attnum`, t.quoted)
	if err != nil {
		return errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read the columns of %s", t.quoted)
	}
	required, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read the columns of %s", t.quoted)
	}
	for _, c := range required {
		if !written[c] {
			return errcode.New(errcode.ConnectorSinkTableIncompatible, "column %q of the sink's table %s is NOT NULL without a default, and the view has no column of that name", c, t.quoted)
		}
	}
	stmts := []string{t.insert}
	if cfg.Spec.Mode == ddl.PostgresSinkUpsert {
		stmts = []string{t.upsert, t.remove}
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, "EXPLAIN "+s, "[]"); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) {
				return errcode.Wrap(errcode.ConnectorSinkTableIncompatible, err, "the sink's table %s cannot take the rows of the view: %s", t.quoted, pgErr.Message)
			}
			return errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot check the sink's table %s", t.quoted)
		}
	}
	if cfg.Spec.Mode == ddl.PostgresSinkUpsert {
		if err := checkEmpty(ctx, conn, t); err != nil {
			return err
		}
	}
	return ensureProgressTable(ctx, conn, t)
}

// checkEmpty refuses a non-empty table for an upsert sink's first
// delivery (RS-1025).
func checkEmpty(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, t *table) error {
	var rows bool
	if err := q.QueryRow(ctx, "SELECT EXISTS (SELECT FROM "+t.quoted+")").Scan(&rows); err != nil {
		return errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read the sink's table %s", t.quoted)
	}
	if rows {
		return errcode.New(errcode.ConnectorSinkTableNotEmpty, "the table %s of upsert sink has rows; the sink's first delivery writes the whole view into an empty table", t.quoted)
	}
	return nil
}

// session connects, reads the sink's progress row, subscribes to the
// view after its epoch (or from a snapshot without one) and writes each
// batch of updates in one transaction with the progress row, until an
// error. NB: any failure ends the session, and the next one starts from
// what the database committed, so an ambiguous COMMIT is never guessed at.
func (w *Writer) session(ctx context.Context, r *sink.Runner) error {
	r.Update(func(st *sink.Status) { st.State = sink.StateConnecting })
	conn, err := connect(ctx, w.cfg.Spec.Connection)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	t, err := w.resolve(ctx, conn)
	if err != nil {
		return err
	}
	if err := ensureProgressTable(ctx, conn, t); err != nil {
		return err
	}
	id := w.cfg.Spec.SinkID
	if id == "" {
		return errcode.New(errcode.InternalError, "POSTGRES sink %s has no sink_id in its definition", w.cfg.Name)
	}
	var epoch int64
	found := true
	err = conn.QueryRow(ctx, "SELECT epoch FROM "+t.progress+" WHERE sink_id = $1", id).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		found, err = false, nil
	}
	if err != nil {
		return errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read the progress of sink %s from %s", w.cfg.Name, t.progress)
	}
	stream, err := w.cfg.Changes.Open(ctx, found, uint64(epoch))
	if err != nil {
		return err
	}
	defer stream.Close()
	return r.Deliver(ctx, stream, uint64(epoch), txnRowsMax, &txn{w: w, conn: conn, t: t, id: id, found: found, epoch: uint64(epoch)})
}

// txn is one PostgreSQL transaction being built: upsert mode keeps each
// key's last change (later epochs replace earlier ones), append mode every
// change in order.
type txn struct {
	w    *Writer
	conn *pgx.Conn
	t    *table
	id   string
	// found: the progress row exists, at epoch (the last delivered).
	found bool
	epoch uint64

	byKey   map[string]sink.KeyChange
	keys    []string
	appends []string
}

func (x *txn) Reset() {
	x.byKey, x.keys, x.appends = nil, nil, nil
}

func (x *txn) Add(u sink.Update) (int, error) {
	cfg := x.w.cfg
	if cfg.Spec.Mode == ddl.PostgresSinkAppend {
		delta := zset.Consolidate(u.Delta)
		for i, row := range delta.Rows {
			x.appends = append(x.appends, x.w.rowJSON(row, fmt.Sprintf(",%q:%d,%q:%d}", ddl.PostgresSinkEpochColumn, u.Epoch, ddl.PostgresSinkDiffColumn, delta.Weights[i])))
		}
		return len(delta.Rows), nil
	}
	changes, err := sink.ByKey(u.Delta, x.w.keyJSON)
	if err != nil {
		return 0, sink.KeyError(err, errcode.ConnectorPostgresSinkFailed, cfg.Name, u.Epoch, cfg.Spec.Key)
	}
	if x.byKey == nil {
		x.byKey = map[string]sink.KeyChange{}
	}
	for _, c := range changes {
		if c.Inserted {
			for _, at := range cfg.Key {
				if c.After[at] == nil {
					return 0, errcode.New(errcode.ConnectorPostgresSinkFailed, "sink %s: at epoch %d the view has a row whose key column %s is NULL; an upsert sink's key columns must not be NULL",
						cfg.Name, u.Epoch, cfg.Columns[at].Name)
				}
			}
		}
		if _, ok := x.byKey[c.Key]; !ok {
			x.keys = append(x.keys, c.Key)
		}
		x.byKey[c.Key] = c
	}
	return len(changes), nil
}

// Commit writes the transaction: the progress row first (which fences
// any other session of the sink), then the changes, then COMMIT.
func (x *txn) Commit(ctx context.Context, through uint64) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	fail := func(err error, what string) error {
		return errcode.Wrap(errcode.ConnectorPostgresSinkFailed, err, "sink %s: %s (epochs %d to %d into %s)", x.w.cfg.Name, what, x.epoch+1, through, x.t.quoted)
	}
	tx, err := x.conn.Begin(ctx)
	if err != nil {
		return fail(err, "cannot begin a transaction")
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if x.found {
		tag, err := tx.Exec(ctx, "UPDATE "+x.t.progress+" SET epoch = $2, committed_at = now() WHERE sink_id = $1 AND epoch = $3",
			x.id, int64(through), int64(x.epoch))
		if err != nil {
			return fail(err, "cannot advance the progress row")
		}
		if tag.RowsAffected() != 1 {
			return errcode.New(errcode.ConnectorPostgresSinkFailed, "sink %s: its progress row in %s no longer says epoch %d (another session of the sink delivered meanwhile); starting again from the row",
				x.w.cfg.Name, x.t.progress, x.epoch)
		}
	} else {
		if _, err := tx.Exec(ctx, "INSERT INTO "+x.t.progress+" (sink_id, sink_name, target, epoch) VALUES ($1, $2, $3, $4)",
			x.id, x.w.cfg.Name, x.t.schema+"."+x.t.name, int64(through)); err != nil {
			return fail(err, "cannot insert the progress row")
		}
		if x.w.cfg.Spec.Mode == ddl.PostgresSinkUpsert {
			if err := checkEmpty(ctx, tx, x.t); err != nil {
				return err
			}
		}
	}
	if x.w.cfg.Spec.Mode == ddl.PostgresSinkAppend {
		if err := x.exec(ctx, tx, x.t.insert, x.appends); err != nil {
			return fail(err, "cannot append the changes")
		}
	} else {
		var upserts, deletes []string
		for _, k := range x.keys {
			c := x.byKey[k]
			if c.Inserted {
				upserts = append(upserts, x.w.rowJSON(c.After, "}"))
			} else {
				deletes = append(deletes, k)
			}
		}
		if err := x.exec(ctx, tx, x.t.remove, deletes); err != nil {
			return fail(err, "cannot delete the keys that left the view")
		}
		if err := x.exec(ctx, tx, x.t.upsert, upserts); err != nil {
			return fail(err, "cannot upsert the view's rows")
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fail(err, "COMMIT failed")
	}
	x.found, x.epoch = true, through
	return nil
}

// exec runs stmt over objects (JSON objects), statementRowsMax at a time.
func (x *txn) exec(ctx context.Context, tx pgx.Tx, stmt string, objects []string) error {
	for len(objects) > 0 {
		n := min(len(objects), statementRowsMax)
		if _, err := tx.Exec(ctx, stmt, "["+strings.Join(objects[:n], ",")+"]"); err != nil {
			return err
		}
		objects = objects[n:]
	}
	return nil
}

// rowJSON is a row as a JSON object of the view's columns (as
// PostgreSQL's row_to_json writes it, but json and jsonb values as JSON
// strings of their text), ended by end (which closes it).
func (w *Writer) rowJSON(row types.Row, end string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range w.cfg.Columns {
		if i > 0 {
			b.WriteByte(',')
		}
		w.appendColumn(&b, i, row)
	}
	b.WriteString(end)
	return b.String()
}

// keyJSON is a row's key columns as a JSON object (as rowJSON writes
// them).
func (w *Writer) keyJSON(row types.Row) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, at := range w.cfg.Key {
		if i > 0 {
			b.WriteByte(',')
		}
		w.appendColumn(&b, at, row)
	}
	b.WriteByte('}')
	return b.String()
}

// appendColumn writes "name":value of column i of row.
func (w *Writer) appendColumn(b *strings.Builder, i int, row types.Row) {
	c := w.cfg.Columns[i]
	b.WriteString(types.QuoteJSON(c.Name))
	b.WriteByte(':')
	var d types.Datum
	if i < len(row) {
		d = row[i]
	}
	if asText(c.Type) && d != nil {
		b.WriteString(types.QuoteJSON(types.Format(c.Type, d)))
		return
	}
	expr.AppendJSON(b, c.Type, d)
}
