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
	// ||, -, #-.
	`'{"a":1,"b":2}'::jsonb || '{"b":3,"c":4}'`, `'[1,2]'::jsonb || '[3]'`, `'[1]'::jsonb || '{"a":1}'`, `'{"a":1}'::jsonb || '[1]'`,
	`'1'::jsonb || '2'`, `'{"a":1}'::jsonb || '1'`, `'[]'::jsonb || '"x"'`, `'"x"'::jsonb || '[]'`, `'{}'::jsonb || '{}'`,
	`'{"a":1,"b":2}'::jsonb - 'a'`, `'["a","b","a",1]'::jsonb - 'a'`, `'"a"'::jsonb - 'a'`, `'{"a":1}'::jsonb - 'z'`,
	`'{"a":1,"b":2,"c":3}'::jsonb - '{a,c,NULL}'::text[]`, `'["a","b"]'::jsonb - '{b}'::text[]`, `'1'::jsonb - '{}'::text[]`,
	`'[1,2,3]'::jsonb - 1`, `'[1,2,3]'::jsonb - -1`, `'[1,2,3]'::jsonb - 5`, `'[1,2,3]'::jsonb - -5`, `'{"a":1}'::jsonb - 0`, `'1'::jsonb - 0`,
	`'{"a":{"b":[1,2,3]}}'::jsonb #- '{a,b,-1}'`, `'{"a":{"b":1}}'::jsonb #- '{a,z}'`, `'{"a":[1]}'::jsonb #- '{a,x}'`, `'{"a":1}'::jsonb #- '{}'`,
	`'1'::jsonb #- '{a}'`, `'{"a":1}'::jsonb #- '{a,b}'`, `'{"a":{"b":1}}'::jsonb #- '{a,NULL}'`, `'{"a":1}'::jsonb #- '{NULL}'`,
	// jsonb_set.
	`jsonb_set('{"a":{"b":1}}', '{a,b}', '2')`, `jsonb_set('{"a":{"b":1}}', '{a,c}', '"x"')`, `jsonb_set('{"a":{"b":1}}', '{a,c}', '"x"', false)`,
	`jsonb_set('{"a":1}', '{x,y}', '2')`, `jsonb_set('[1,2]', '{5}', '3')`, `jsonb_set('[1,2]', '{-5}', '0')`, `jsonb_set('[1,2]', '{-1}', '9')`,
	`jsonb_set('[1,2]', '{x}', '9')`, `jsonb_set('1', '{a}', '2')`, `jsonb_set('{"a":1}', '{}', '2')`, `jsonb_set('{"a":1}', '{a}', NULL)`,
	`jsonb_set('{"a":1}', '{NULL}', '2')`, `jsonb_set('{"b":1}', '{a}', '{"z":1.50}')`, `jsonb_set('{"a":[1]}', '{a,0,b}', '2')`,
	// Functions.
	`jsonb_typeof('{"a":1}')`, `jsonb_typeof('[]')`, `jsonb_typeof('"x"')`, `jsonb_typeof('1.5')`, `jsonb_typeof('true')`, `jsonb_typeof('null')`,
	`jsonb_typeof(NULL)`, `jsonb_array_length('[1,[2,3]]')`, `jsonb_array_length('1')`, `jsonb_array_length('{}')`,
	`jsonb_extract_path('{"a":{"b":[1,2]}}', 'a', 'b', '-1')`, `jsonb_extract_path_text('{"a":{"b":"x"}}', 'a', 'b')`,
	`jsonb_extract_path_text('{"a":1}', 'z')`, `jsonb_extract_path('{"a":1}')`, `jsonb_extract_path_text('{"a":1}', NULL)`,
	`jsonb_strip_nulls('{"a":null,"b":[null,{"c":null,"d":1}]}')`, `jsonb_strip_nulls('null')`,
	`to_jsonb(1.50)`, `to_jsonb(1e2)`, `to_jsonb('x'::text)`, `to_jsonb('a"b'::varchar)`, `to_jsonb(true)`, `to_jsonb('NaN'::float8)`,
	`to_jsonb(1.5::float4)`, `to_jsonb('Infinity'::numeric)`, `to_jsonb('{1,NULL}'::int4[])`, `to_jsonb('x'::char(3))`, `to_jsonb('1 day'::interval)`,
	`to_jsonb('2024-01-01 10:00:00.5'::timestamp)`, `to_jsonb('2024-01-01 10:00+00'::timestamptz)`, `to_jsonb('infinity'::timestamp)`,
	`to_jsonb('2024-01-31'::date)`, `to_jsonb('{"b":1,"a":2}'::jsonb)`, `to_jsonb(NULL::int)`, `to_jsonb(12::int2)`,
	`jsonb_build_object('b', 1, 'a', 'x', 'b', NULL)`, `jsonb_build_object()`, `jsonb_build_object('a')`, `jsonb_build_object(NULL, 1)`,
	`jsonb_build_object(1, true, 2.50, '{"x":1}'::jsonb)`, `jsonb_build_object('{1}'::int4[], 1)`, `jsonb_build_array(1, 'x', NULL, 1.50, '[1]'::jsonb)`,
	`jsonb_build_array()`, `jsonb_pretty('{"a":[1,{"b":null}],"c":{},"d":[]}')`, `jsonb_pretty('[]')`, `jsonb_pretty('"x"')`,
	// json builders.
	`json_build_object('b', 1, 'a', 'x', 'b', NULL, 'n', 1.50, 'j', '{"z":  1}'::json, 'arr', '{1,2}'::int4[])`, `json_build_object()`,
	`json_build_object('a')`, `json_build_object(NULL, 1)`, `json_build_array(1, 'x', NULL, '{1,NULL}'::int4[], '{"b":1,"a":2}'::jsonb)`,
	`json_build_array()`, `to_json(1.50)`, `to_json('a"b'::text)`, `to_json('{1,2}'::int4[])`, `to_json('{"a":1}'::jsonb)`, `to_json('NaN'::float8)`,
	`json_typeof('{"a":1}')`, `json_typeof(' [1] ')`, `json_typeof('"x"')`, `json_typeof('null')`, `json_typeof('1e2')`,
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
