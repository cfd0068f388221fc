package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// The oracle tests run the same SQL directly against PostgreSQL 15 and
// through the gateway (whose protocol-test engine forwards to the same
// PostgreSQL, receiving values in binary and re-encoding them itself), and
// compare what the client sees byte for byte. Differences are bugs in the
// gateway's text or binary encoders or decoders.

// oracleQueries cover every type the gateway encodes, with edge values.
//
//lint:immutable test table.
var oracleQueries = []string{
	`select 1::int2 as a, (-32768)::int2, 2::int4, (-2147483648)::int4, 3::int8, (-9223372036854775808)::int8, true, false, null::int`,
	`select 1.5::float8, 0.1::float8, 1e20::float8, 1e15::float8, 1e14::float8, 123456789.123::float8, 1e-5::float8, 0.0001::float8, 'nan'::float8, 'inf'::float8, '-inf'::float8, '-0'::float8, 1.7976931348623157e308::float8, 5e-324::float8`,
	`select 1.1::float4, 1e6::float4, 100000::float4, 3.4e38::float4, 1.17549435e-38::float4, 0.1::float4, 123456.7::float4, 'nan'::float4`,
	`select 0::numeric, 1.50::numeric(10,2), -123.456::numeric, 1e20::numeric, 0.000001::numeric, 'nan'::numeric, 12345678901234567890.123456789::numeric, 10000::numeric, 0.0001::numeric, -0.5::numeric, 1.000::numeric, 'infinity'::numeric, '-infinity'::numeric, 9999.9999::numeric`,
	`select 'hello'::text, ''::text, E'a\tb\nc'::text, 'ünïcode ✓'::text, 'x'::varchar(5), 'ab'::char(4), 'abc'::name`,
	`select '\x00ff10'::bytea, ''::bytea, 'abc'::bytea`,
	`select '2024-02-29'::date, '0001-01-01'::date, '0044-03-15 BC'::date, 'infinity'::date, '-infinity'::date, '1999-12-31'::date, '2000-01-01'::date, '1970-01-01'::date, '9999-12-31'::date, '1900-03-01'::date`,
	`select '2024-01-02 03:04:05.123456'::timestamp, '1999-12-31 23:59:59.5'::timestamp, '0044-03-15 12:00 BC'::timestamp, 'infinity'::timestamp, '1900-01-01'::timestamp, '2000-01-01 00:00:00.000001'::timestamp`,
	`select '2024-07-01 12:00:00+00'::timestamptz, '2024-01-01 12:00:00.5+00'::timestamptz, '1850-01-01 00:00:00+00'::timestamptz, '-infinity'::timestamptz`,
	`set timezone = 'America/New_York'; select '2024-07-01 12:00:00+00'::timestamptz, '2024-01-01 12:00:00.5+00'::timestamptz, '1850-01-01 00:00:00+00'::timestamptz, '2024-03-10 02:30:00'::timestamptz; reset timezone`,
	`set time zone 'Asia/Kathmandu'; select '2024-07-01 12:00:00+00'::timestamptz, now() is not null; set time zone 'UTC'`,
	`select '1 year 2 months 3 days 04:05:06.789'::interval, '-1 year -2 mons'::interval, '1 day -01:00:00'::interval, '-1 days +02:00:00'::interval, '00:00:00'::interval, '-00:00:01'::interval, '100 hours'::interval, '1 mon -1 day'::interval, '14 months'::interval, '0.5 seconds'::interval`,
	`select 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, '12:34:56.789'::time, '00:00'::time, '{"a": 1, "b": [true, null]}'::jsonb, '{"x":1}'::json, 1::oid, 4294967295::oid`,
	`select '{"a":1}'::jsonb ->> 'a', '{"a":[1,2]}'::jsonb -> 'a' -> -1, jsonb_build_object('b', 1.50, 'a', 1e2), '{"a":1}'::jsonb @> '{"a":1.0}', to_jsonb('x'::text) || '[1]'`,
	`select array[1,2,null]::int[], array['a','b c','',null,'NULL','"q"','back\slash', '{x}']::text[], '{}'::int[], array[1.5,2]::numeric[], array['2024-01-01'::date], array[true,false], array[1::int8, -5], array[0.5::float8], array['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid], array['\x01'::bytea]`,
	`select generate_series(1, 5) as n, 'row' || generate_series(1, 5) as label`,
	`select 1 as one; select 2 as two; select 'three'`,
	`values (1, 'a'), (2, 'b')`,
	`select 1 where false`,
	`select relname, relnamespace, 1 as one from pg_catalog.pg_class where relname = 'pg_class'`,
	// SQL-level prepared statements: tags and row descriptions as PostgreSQL's.
	`prepare o1(int, text) as select $1 + 1 as x, $2 as t; execute o1(41, 'a'); execute o1('1', null); deallocate o1`,
	`prepare o2 as values (1), (2); execute o2; deallocate prepare o2; prepare o3 as select 3; deallocate all`,
	`begin; savepoint a; select 1; release savepoint a; savepoint b; rollback to savepoint b; commit`,
}

func TestTextOracle(t *testing.T) {
	ctx := context.Background()
	direct, viaGateway := connectBoth(t)
	for _, q := range oracleQueries {
		want, err := direct.Exec(ctx, q).ReadAll()
		if err != nil {
			t.Fatalf("postgres: %s: %v", q, err)
		}
		got, err := viaGateway.Exec(ctx, q).ReadAll()
		if err != nil {
			t.Fatalf("gateway: %s: %v", q, err)
		}
		if d := diffResults(want, got); d != "" {
			t.Errorf("%s\n%s", q, d)
		}
	}
}

func TestBinaryOracle(t *testing.T) {
	ctx := context.Background()
	direct, viaGateway := connectBoth(t)
	for _, q := range oracleQueries {
		if strings.Contains(q, ";") || strings.HasPrefix(q, "values") {
			continue // one statement per extended-protocol execution
		}
		want := direct.ExecParams(ctx, q, nil, nil, nil, []int16{1}).Read()
		if want.Err != nil {
			t.Fatalf("postgres: %s: %v", q, want.Err)
		}
		got := viaGateway.ExecParams(ctx, q, nil, nil, nil, []int16{1}).Read()
		if got.Err != nil {
			t.Fatalf("gateway: %s: %v", q, got.Err)
		}
		if d := diffResults([]*pgconn.Result{want}, []*pgconn.Result{got}); d != "" {
			t.Errorf("%s\n%s", q, d)
		}
	}
}

// diffResults compares column names, type OIDs, formats, values and tags.
func diffResults(want, got []*pgconn.Result) string {
	var b strings.Builder
	if len(want) != len(got) {
		return fmt.Sprintf("%d results from postgres, %d from the gateway", len(want), len(got))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.CommandTag.String() != g.CommandTag.String() {
			fmt.Fprintf(&b, "result %d: tag %q, gateway %q\n", i, w.CommandTag, g.CommandTag)
		}
		if len(w.FieldDescriptions) != len(g.FieldDescriptions) {
			fmt.Fprintf(&b, "result %d: %d columns, gateway %d\n", i, len(w.FieldDescriptions), len(g.FieldDescriptions))
			continue
		}
		for j := range w.FieldDescriptions {
			wf, gf := w.FieldDescriptions[j], g.FieldDescriptions[j]
			if wf.TableOID != gf.TableOID || wf.TableAttributeNumber != gf.TableAttributeNumber {
				fmt.Fprintf(&b, "result %d column %d: origin %d.%d, gateway %d.%d\n", i, j, wf.TableOID, wf.TableAttributeNumber, gf.TableOID, gf.TableAttributeNumber)
			}
			if wf.Name != gf.Name || wf.DataTypeOID != gf.DataTypeOID || wf.Format != gf.Format || wf.TypeModifier != gf.TypeModifier {
				fmt.Fprintf(&b, "result %d column %d: %s/%d/f%d/mod%d, gateway %s/%d/f%d/mod%d\n", i, j,
					wf.Name, wf.DataTypeOID, wf.Format, wf.TypeModifier, gf.Name, gf.DataTypeOID, gf.Format, gf.TypeModifier)
			}
		}
		if len(w.Rows) != len(g.Rows) {
			fmt.Fprintf(&b, "result %d: %d rows, gateway %d\n", i, len(w.Rows), len(g.Rows))
			continue
		}
		for r := range w.Rows {
			for j := range w.Rows[r] {
				wv, gv := w.Rows[r][j], g.Rows[r][j]
				if (wv == nil) != (gv == nil) || !bytes.Equal(wv, gv) {
					name := ""
					if j < len(w.FieldDescriptions) {
						name = w.FieldDescriptions[j].Name
					}
					fmt.Fprintf(&b, "result %d row %d column %d (%s): %q, gateway %q\n", i, r, j, name, wv, gv)
				}
			}
		}
	}
	return b.String()
}

// TestExecuteParametersOracle: EXECUTE is a utility statement, so in the
// extended protocol it takes no parameters ($n in its arguments fails when
// it runs, also in the simple protocol), as in PostgreSQL.
func TestExecuteParametersOracle(t *testing.T) {
	ctx := context.Background()
	direct, viaGateway := connectBoth(t)
	for _, c := range []*pgconn.PgConn{direct, viaGateway} {
		if _, err := c.Exec(ctx, `prepare xp(int, text) as select $1 * 2 as d, $2 || '!' as s`).ReadAll(); err != nil {
			t.Fatal(err)
		}
	}
	for _, sql := range []string{`execute xp($1, $2)`, `execute xp(5, 'x')`} {
		wantDesc, err := direct.Prepare(ctx, "", sql, nil)
		if err != nil {
			t.Fatalf("postgres: %s: %v", sql, err)
		}
		gotDesc, err := viaGateway.Prepare(ctx, "", sql, nil)
		if err != nil {
			t.Fatalf("gateway: %s: %v", sql, err)
		}
		if fmt.Sprint(wantDesc.ParamOIDs) != fmt.Sprint(gotDesc.ParamOIDs) || len(wantDesc.Fields) != len(gotDesc.Fields) {
			t.Errorf("%s: parameters %v and %d columns, gateway %v and %d", sql, wantDesc.ParamOIDs, len(wantDesc.Fields), gotDesc.ParamOIDs, len(gotDesc.Fields))
		}
	}
	want := direct.ExecParams(ctx, `execute xp(5, 'x')`, nil, nil, nil, nil).Read()
	got := viaGateway.ExecParams(ctx, `execute xp(5, 'x')`, nil, nil, nil, nil).Read()
	if d := diffResults([]*pgconn.Result{want}, []*pgconn.Result{got}); d != "" || want.Err != nil || got.Err != nil {
		t.Errorf("extended execute xp(5, 'x'): %v %v\n%s", want.Err, got.Err, d)
	}
	for _, sql := range []string{`execute xp($1, 'a')`} {
		_, wantErr := direct.Exec(ctx, sql).ReadAll()
		_, gotErr := viaGateway.Exec(ctx, sql).ReadAll()
		if pgCode(wantErr) != pgCode(gotErr) {
			t.Errorf("%s: postgres %v, gateway %v", sql, wantErr, gotErr)
		}
	}
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return fmt.Sprint(err)
}

// connectBoth connects to PostgreSQL directly and through the gateway; both
// connections close when the test ends.
func connectBoth(t *testing.T) (direct, viaGateway *pgconn.PgConn) {
	t.Helper()
	ctx := context.Background()
	direct, err := pgconn.Connect(ctx, testPG.connString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close(ctx) })
	viaGateway, err = pgconn.Connect(ctx, gatewayConnString(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { viaGateway.Close(ctx) })
	return direct, viaGateway
}

// TestDateStyleOracle prints dates, timestamps, intervals and arrays of
// them (text format) under every DateStyle and IntervalStyle, reads
// ambiguous literals and text parameters in the field order, and compares
// each result and the ParameterStatus PostgreSQL sends for the SET.
func TestDateStyleOracle(t *testing.T) {
	ctx := context.Background()
	direct, viaGateway := connectBoth(t)
	values := `select '2024-01-02'::date, '0044-03-15 BC'::date, 'infinity'::date, '2024-01-02 03:04:05.123456'::timestamp, ` +
		`'0044-03-15 12:00 BC'::timestamp, '-infinity'::timestamp, '2024-07-01 12:00:00.5+00'::timestamptz, '12:34:56.789'::time, ` +
		`array['2024-01-02'::date, 'infinity'], array['2024-01-02 03:04:05'::timestamp], '1 year 2 mons -3 days 04:05:06.5'::interval, ` +
		`'-1 days +02:00:00'::interval, '0'::interval, array['-1 mon'::interval], '-1 2:03:04'::interval`
	for _, zone := range []string{"UTC", "America/New_York", "America/Sao_Paulo", "Asia/Kathmandu"} {
		for _, dateStyle := range []string{"ISO, MDY", "ISO, DMY", "SQL, MDY", "SQL, DMY", "Postgres, MDY", "Postgres, DMY", "Postgres, YMD", "German", "YMD"} {
			for _, intervalStyle := range []string{"postgres", "postgres_verbose", "sql_standard", "iso_8601"} {
				set := fmt.Sprintf("set time zone '%s'; set datestyle = '%s'; set intervalstyle = %s", zone, dateStyle, intervalStyle)
				for _, q := range []string{set, values, `select '01/02/03'::date`, `select '1/2/2024 10:00'::timestamp`, `select '02.01.2024'::date`} {
					want, werr := direct.Exec(ctx, q).ReadAll()
					got, gerr := viaGateway.Exec(ctx, q).ReadAll()
					if werr != nil || gerr != nil {
						var wpe, gpe *pgconn.PgError
						if !errors.As(werr, &wpe) || !errors.As(gerr, &gpe) || wpe.Code != gpe.Code {
							t.Errorf("%s\n%s: postgres %v, gateway %v", set, q, werr, gerr)
						}
						continue
					}
					if d := diffResults(want, got); d != "" {
						t.Errorf("%s\n%s\n%s", set, q, d)
					}
				}
				for _, name := range []string{"DateStyle", "IntervalStyle", "TimeZone"} {
					if w, g := direct.ParameterStatus(name), viaGateway.ParameterStatus(name); w != g {
						t.Errorf("%s: ParameterStatus %s %q, gateway %q", set, name, w, g)
					}
				}
				// A text parameter is read in the session's field order.
				want := direct.ExecParams(ctx, "select $1::date, $2::interval", [][]byte{[]byte("01/02/03"), []byte("-1 2:03:04")}, nil, nil, nil).Read()
				got := viaGateway.ExecParams(ctx, "select $1::date, $2::interval", [][]byte{[]byte("01/02/03"), []byte("-1 2:03:04")}, nil, nil, nil).Read()
				if want.Err != nil || got.Err != nil {
					t.Fatalf("%s: text parameters: postgres %v, gateway %v", set, want.Err, got.Err)
				}
				if d := diffResults([]*pgconn.Result{want}, []*pgconn.Result{got}); d != "" {
					t.Errorf("%s: text parameters\n%s", set, d)
				}
			}
		}
	}
	// Refusals: the same SQLSTATE.
	for _, q := range []string{"set datestyle = 'foo'", "set datestyle = 'ISO, SQL'", "set intervalstyle = 'german'", "select '13/13/2024'::date"} {
		_, werr := direct.Exec(ctx, q).ReadAll()
		_, gerr := viaGateway.Exec(ctx, q).ReadAll()
		var wpe, gpe *pgconn.PgError
		if !errors.As(werr, &wpe) || !errors.As(gerr, &gpe) || wpe.Code != gpe.Code {
			t.Errorf("%s: postgres %v, gateway %v", q, werr, gerr)
		}
	}
}
