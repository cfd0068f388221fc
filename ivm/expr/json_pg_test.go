package expr

import (
	"context"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// jsonExprs are jsonb expressions compared with PostgreSQL 15 like
// pgExprs: text output, NULL, or the error's SQLSTATE.
var jsonExprs = []string{
	// -> and ->> by key and by index.
	`'{"a":1,"b":[1,2]}'::jsonb -> 'a'`, `'{"a":1,"b":[1,2]}'::jsonb -> 'b'`, `'{"a":1}'::jsonb -> 'z'`, `'{"a":1}'::jsonb ->> 'a'`,
	`'{"a":"x\ny"}'::jsonb ->> 'a'`, `'{"a":"x"}'::jsonb -> 'a'`, `'{"a":null}'::jsonb -> 'a'`, `'{"a":null}'::jsonb ->> 'a'`,
	`'{"a":{"b":1.50}}'::jsonb ->> 'a'`, `'{"a":1e2}'::jsonb -> 'a'`, `'[1,2,3]'::jsonb -> 0`, `'[1,2,3]'::jsonb -> -1`,
	`'[1,2,3]'::jsonb -> 3`, `'[1,2,3]'::jsonb -> -4`, `'[1,"x",3]'::jsonb ->> 1`, `'[1,2]'::jsonb -> 'a'`, `'{"a":1}'::jsonb -> 0`,
	`'"a"'::jsonb -> 'a'`, `'1'::jsonb -> 0`, `'1'::jsonb -> -1`, `'"x"'::jsonb ->> 0`, `'1'::jsonb -> 1`, `'null'::jsonb ->> 0`, `'{"a":1}'::jsonb -> NULL`, `NULL::jsonb -> 'a'`, `'{"":1}'::jsonb -> ''`,
	`'{"a":1}'::jsonb -> 'a'::varchar`, `'[0,1]'::jsonb -> 1::int2`,
	// ? key exists.
	`'{"a":1}'::jsonb ? 'a'`, `'{"a":1}'::jsonb ? 'b'`, `'["a","b"]'::jsonb ? 'b'`, `'[1]'::jsonb ? '1'`, `'"a"'::jsonb ? 'a'`,
	`'{"b":{"a":1}}'::jsonb ? 'a'`, `'{"a":1}'::jsonb ? NULL`,
	// #> and #>> paths.
	`'{"a":{"b":[1,{"c":"x"}]}}'::jsonb #> '{a,b,1,c}'`, `'{"a":{"b":[1,{"c":"x"}]}}'::jsonb #>> '{a,b,1,c}'`, `'{"a":[1,2]}'::jsonb #> '{a,-1}'`,
	`'{"a":[1,2]}'::jsonb #> '{a,x}'`, `'{"a":[1,2]}'::jsonb #> '{a," 1"}'`, `'{"a":[1,2]}'::jsonb #> '{a,+0}'`, `'{"a":[1,2]}'::jsonb #> '{a,5}'`,
	`'{"a":1}'::jsonb #> '{}'`, `'"a"'::jsonb #>> '{}'`, `'"a"'::jsonb #> '{}'`, `'1'::jsonb #> '{0}'`, `'{"a":1}'::jsonb #> '{a,b}'`,
	`'{"a":1}'::jsonb #> '{NULL}'`, `'{"a":null}'::jsonb #>> '{a}'`, `'[[1,2]]'::jsonb #>> '{0}'`, `'{"a":1}'::jsonb #> NULL`,
	`'[1,2]'::jsonb #> '{99999999999}'`, `'[1,2]'::jsonb #> '{-3}'`,
	// ?| and ?&.
	`'{"a":1,"b":2}'::jsonb ?| '{b,z}'`, `'{"a":1}'::jsonb ?| '{y,z}'`, `'{"a":1,"b":2}'::jsonb ?& '{a,b}'`, `'{"a":1}'::jsonb ?& '{a,z}'`,
	`'{"a":1}'::jsonb ?& '{}'`, `'{"a":1}'::jsonb ?| '{}'`, `'{"a":1}'::jsonb ?& '{a,NULL}'`,
	// @> and <@.
	`'{"a":1,"b":[1,2,{"c":3}]}'::jsonb @> '{"b":[{"c":3}]}'`, `'{"a":1}'::jsonb @> '{"a":1.0}'`, `'{"a":1}'::jsonb @> '{}'`,
	`'[1,2,3]'::jsonb @> '[3,1,1]'`, `'[1,2,3]'::jsonb @> '3'`, `'3'::jsonb @> '[3]'`, `'3'::jsonb @> '3'`, `'[1,[2,3]]'::jsonb @> '[[3]]'`,
	`'[1,[2,3]]'::jsonb @> '[3]'`, `'{"a":[1,2]}'::jsonb @> '{"a":1}'`, `'{"a":{"b":1}}'::jsonb @> '{"a":{}}'`, `'[{"a":1}]'::jsonb @> '{"a":1}'`,
	`'{"a":1}'::jsonb <@ '{"a":1,"b":2}'`, `'[]'::jsonb @> '[]'`, `'{}'::jsonb @> '[]'`, `'"a"'::jsonb @> '"a"'`, `'null'::jsonb <@ '[null]'`,
	// Equality and order.
	`'1.0'::jsonb = '1.00'::jsonb`, `'[]'::jsonb < 'null'::jsonb`, `'{"a":1}'::jsonb > '[1,2,3]'::jsonb`, `'"b"'::jsonb > '"ab"'::jsonb`,
	`'{"b":1}'::jsonb > '{"a":2}'::jsonb`, `'[1]'::jsonb > '1'::jsonb`, `'true'::jsonb > '1'::jsonb`,
}

func TestJSONExprsMatchPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	env := &Env{TimeZone: time.UTC}
	for _, sql := range jsonExprs {
		want, wantNull, wantState, wantErr := pgtest.QueryText(ctx, conn, "SELECT "+sql)
		got, gotNull, gotState, err := evalSQL(sql, env)
		switch {
		case wantErr != nil && err == nil:
			t.Errorf("SELECT %s: PostgreSQL fails (%v), we return %q (null=%v)", sql, wantErr, got, gotNull)
		case wantErr == nil && err != nil:
			t.Errorf("SELECT %s: PostgreSQL returns %q, we fail: %v", sql, want, err)
		case wantErr != nil && gotState != wantState:
			t.Errorf("SELECT %s: PostgreSQL SQLSTATE %s (%v), we %s (%v)", sql, wantState, wantErr, gotState, err)
		case wantErr == nil && (got != want || gotNull != wantNull):
			t.Errorf("SELECT %s: PostgreSQL %q (null=%v), we %q (null=%v)", sql, want, wantNull, got, gotNull)
		}
		if e, err := bindSQL(sql); err == nil {
			if wantType, _, _, err := pgtest.QueryText(ctx, conn, "SELECT pg_typeof("+sql+")"); err == nil && wantType != e.Type().SQLName() {
				t.Errorf("pg_typeof(%s): PostgreSQL %s, we %s", sql, wantType, e.Type().SQLName())
			}
		}
	}
}
