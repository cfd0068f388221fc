package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/types"
)

// Table is an upstream table of the publication as RockStream mirrors it.
type Table struct {
	Schema, Name string
	Columns      []catalog.Column
	// PrimaryKey lists column indexes in key order.
	PrimaryKey []int
}

// connectTimeout bounds one connection attempt to the upstream server.
const connectTimeout = 15 * time.Second

// sessionParams make the upstream print values in the forms types.Parse
// reads, whatever the server's defaults: UTC time stamps, ISO dates, hex
// bytea and shortest exact floats.
//
//lint:immutable a constant table.
var sessionParams = map[string]string{
	"timezone":           "UTC",
	"datestyle":          "ISO, MDY",
	"intervalstyle":      "postgres",
	"extra_float_digits": "3",
	"bytea_output":       "hex",
	"application_name":   "rockstream",
}

// connConfig parses the connection string and applies sessionParams
// (replication adds replication=database for the walsender connection).
func connConfig(connString string, replication bool) (*pgconn.Config, error) {
	cfg, err := pgconn.ParseConfig(connString)
	if err != nil {
		return nil, errcode.Wrap(errcode.SQLInvalidParameterValue, err, "invalid connection string for the POSTGRES source")
	}
	for k, v := range sessionParams { //lint:maprange order does not matter: a map of parameters
		cfg.RuntimeParams[k] = v
	}
	if replication {
		cfg.RuntimeParams["replication"] = "database"
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > connectTimeout {
		cfg.ConnectTimeout = connectTimeout
	}
	return cfg, nil
}

// connect opens a plain (replication false) or walsender connection.
func connect(ctx context.Context, connString string, replication bool) (*pgconn.PgConn, error) {
	cfg, err := connConfig(connString, replication)
	if err != nil {
		return nil, err
	}
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, connectError(err, cfg)
	}
	return conn, nil
}

// connectError names why the upstream could not be reached.
func connectError(err error, cfg *pgconn.Config) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "28"):
			return errcode.Wrap(errcode.ConnectorAuthenticationFailed, err, "the upstream PostgreSQL at %s:%d refused user %q", cfg.Host, cfg.Port, cfg.User)
		case pgErr.Code == "3D000":
			return errcode.Wrap(errcode.ConnectorUnreachable, err, "the upstream database %q does not exist", cfg.Database)
		}
	}
	return errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot connect to the upstream PostgreSQL at %s:%d", cfg.Host, cfg.Port)
}

// Discover checks that the upstream can serve change data capture of the
// publication into a new replication slot (wal_level, the publication, a
// primary key and a supported type for every published column, no slot of
// that name yet) and returns its tables, sorted by (schema, name). Every
// refusal names the table and column at fault.
func Discover(ctx context.Context, connString, publication, slot string) ([]Table, error) {
	cfg, err := connConfig(connString, false)
	if err != nil {
		return nil, err
	}
	pcfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, errcode.Wrap(errcode.SQLInvalidParameterValue, err, "invalid connection string for the POSTGRES source")
	}
	pcfg.Config = *cfg
	conn, err := pgx.ConnectConfig(ctx, pcfg)
	if err != nil {
		return nil, connectError(err, cfg)
	}
	defer conn.Close(context.Background())
	var walLevel string
	if err := conn.QueryRow(ctx, "SHOW wal_level").Scan(&walLevel); err != nil {
		return nil, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read wal_level upstream")
	}
	if walLevel != "logical" {
		return nil, errcode.New(errcode.ConnectorWalLevel, "the upstream server runs with wal_level = %s; change data capture needs wal_level = logical", walLevel)
	}
	var exists bool
	// NB: a source drops and re-creates its slot when it (re)starts its
	// snapshot, so it must never adopt a slot that someone else uses.
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)", slot).Scan(&exists); err != nil {
		return nil, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read the upstream replication slots")
	}
	if exists {
		return nil, errcode.New(errcode.ConnectorReplicationRefused, "replication slot %q already exists upstream", slot).
			WithDetail("a new source creates its own slot; name another with slot = '...', or drop the old one upstream with pg_drop_replication_slot if nothing uses it")
	}
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)", publication).Scan(&exists); err != nil {
		return nil, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read the upstream publications")
	}
	if !exists {
		return nil, errcode.New(errcode.ConnectorPublicationMissing, "publication %q does not exist upstream", publication)
	}
	// Column lists (attnames) exist from PostgreSQL 15 on; before, a
	// publication publishes every column.
	var version int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		return nil, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read the upstream's version")
	}
	attnames := "NULL::text[]"
	if version >= 150000 {
		attnames = "attnames"
	}
	rows, err := conn.Query(ctx, `SELECT schemaname, tablename, `+attnames+` FROM pg_publication_tables WHERE pubname = $1 ORDER BY schemaname, tablename`, publication)
	if err != nil {
		return nil, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot list the tables of publication %q", publication)
	}
	type published struct {
		schema, name string
		attnames     []string
	}
	var pubs []published
	for rows.Next() {
		var p published
		if err := rows.Scan(&p.schema, &p.name, &p.attnames); err != nil {
			rows.Close()
			return nil, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot list the tables of publication %q", publication)
		}
		pubs = append(pubs, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot list the tables of publication %q", publication)
	}
	if len(pubs) == 0 {
		return nil, errcode.New(errcode.ConnectorPublicationMissing, "publication %q has no tables", publication)
	}
	var out []Table
	for _, p := range pubs {
		t, err := discoverTable(ctx, conn, p.schema, p.name, p.attnames)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func discoverTable(ctx context.Context, conn *pgx.Conn, schema, name string, published []string) (Table, error) {
	qualified := pgx.Identifier{schema, name}.Sanitize()
	var replIdent string
	if err := conn.QueryRow(ctx, "SELECT relreplident::text FROM pg_class WHERE oid = $1::regclass", qualified).Scan(&replIdent); err != nil {
		return Table{}, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read upstream table %s.%s", schema, name)
	}
	rows, err := conn.Query(ctx, `
		SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
		       coalesce((SELECT k.n FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) WHERE k.attnum = a.attnum), 0)::int
		FROM pg_attribute a
		LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
		WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
		ORDER BY a.attnum`, qualified)
	if err != nil {
		return Table{}, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read the columns of upstream table %s.%s", schema, name)
	}
	defer rows.Close()
	inPublication := map[string]bool{}
	for _, a := range published {
		inPublication[a] = true
	}
	t := Table{Schema: schema, Name: name}
	var keyAt []int // key position (1-based) of each column, 0 if none
	for rows.Next() {
		var col, typeSQL string
		var notNull bool
		var keyPos int
		if err := rows.Scan(&col, &typeSQL, &notNull, &keyPos); err != nil {
			return Table{}, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read the columns of upstream table %s.%s", schema, name)
		}
		if len(published) > 0 && !inPublication[col] {
			if keyPos > 0 {
				return Table{}, errcode.New(errcode.ConnectorNoPrimaryKey, "publication of upstream table %s.%s leaves out primary key column %q", schema, name, col)
			}
			continue // not in the publication's column list
		}
		typ, err := mappedType(schema, name, col, typeSQL)
		if err != nil {
			return Table{}, err
		}
		t.Columns = append(t.Columns, catalog.Column{Name: col, Type: typ, NotNull: notNull || keyPos > 0})
		keyAt = append(keyAt, keyPos)
	}
	if err := rows.Err(); err != nil {
		return Table{}, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read the columns of upstream table %s.%s", schema, name)
	}
	for pos := 1; ; pos++ {
		found := false
		for i, k := range keyAt {
			if k == pos {
				t.PrimaryKey = append(t.PrimaryKey, i)
				found = true
			}
		}
		if !found {
			break
		}
	}
	if len(t.PrimaryKey) == 0 {
		return Table{}, errcode.New(errcode.ConnectorNoPrimaryKey, "upstream table %s.%s has no primary key", schema, name)
	}
	if replIdent != "d" && replIdent != "f" {
		return Table{}, errcode.New(errcode.ConnectorNoPrimaryKey, "upstream table %s.%s has REPLICA IDENTITY %s; the source needs DEFAULT (its primary key) or FULL", schema, name,
			map[string]string{"n": "NOTHING", "i": "USING INDEX"}[replIdent])
	}
	return t, nil
}

// mappedType is the RockStream type of an upstream column, or
// RS-1007 naming the column and its type when there is none.
func mappedType(schema, table, column, typeSQL string) (types.Type, error) {
	unsupported := errcode.New(errcode.ConnectorUnsupportedType, "column %q of upstream table %s.%s has type %s, which the POSTGRES source does not support", column, schema, table, typeSQL).
		WithDetail("supported: smallint, integer, bigint, numeric, real, double precision, boolean, text, varchar, char, bytea, date, timestamp, timestamptz, uuid, json, jsonb")
	typ, err := ddl.ResolveColumnType(column, typeSQL)
	if err != nil {
		return types.Type{}, unsupported
	}
	if _, ok := kindOIDs[typ.Kind]; !ok {
		return types.Type{}, unsupported
	}
	return typ, nil
}

// kindOIDs are the upstream type OIDs of each supported kind (pg_type.oid):
// a column whose type OID changes kind is an incompatible schema change.
//
//lint:immutable a constant table.
var kindOIDs = map[types.Kind]uint32{
	types.KindBool: 16, types.KindInt2: 21, types.KindInt4: 23, types.KindInt8: 20,
	types.KindFloat4: 700, types.KindFloat8: 701, types.KindNumeric: 1700,
	types.KindText: 25, types.KindVarchar: 1043, types.KindChar: 1042, types.KindBytea: 17,
	types.KindDate: 1082, types.KindTimestamp: 1114, types.KindTimestampTZ: 1184,
	types.KindUUID: 2950, types.KindJSON: 114, types.KindJSONB: 3802,
}

// String describes a table for logs.
func (t Table) String() string { return fmt.Sprintf("%s.%s", t.Schema, t.Name) }
