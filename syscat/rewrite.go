package syscat

import "strings"

// Rewrite adapts the catalog queries psql 15 sends for its meta-commands to
// what RockStream's compiler supports, keeping their results: each rewrite
// below is exact for RockStream's catalogs (no policies, no extended
// statistics, no publications, no role memberships, no composite types, no
// non-default collations, no TOAST tables, at most one default per column).
// Other statements are returned unchanged. The rewrites key on psql 15's
// literal query text (src/bin/psql/describe.c), which is stable per release.
func Rewrite(sql string) string {
	if !strings.Contains(sql, "pg_catalog.") {
		return sql
	}
	trimmed := strings.TrimSpace(sql)
	for _, w := range wholeStatements {
		if strings.HasPrefix(trimmed, w.prefix) && strings.Contains(trimmed, w.contains) {
			return w.replacement
		}
	}
	for _, f := range fragments {
		if strings.Contains(sql, f.old) {
			sql = strings.ReplaceAll(sql, f.old, f.new)
		}
	}
	return sql
}

type wholeStatement struct{ prefix, contains, replacement string }

type fragment struct{ old, new string }

// wholeStatements read relations that are always empty in RockStream; the
// replacement returns no rows with the same column count.
//
//lint:immutable a constant table of rewrites.
var wholeStatements = []wholeStatement{
	// \d: row-level security policies (pg_policy is empty).
	{"SELECT pol.polname, pol.polpermissive,", "FROM pg_catalog.pg_policy pol",
		"SELECT NULL::pg_catalog.name AS polname, NULL::bool AS polpermissive, NULL::text AS roles, NULL::text AS qual, NULL::text AS withcheck, NULL::text AS cmd WHERE false"},
	// \d: extended statistics (pg_statistic_ext is empty).
	{"SELECT oid, stxrelid::pg_catalog.regclass,", "FROM pg_catalog.pg_statistic_ext",
		"SELECT NULL::oid AS oid, NULL::pg_catalog.regclass AS stxrelid, NULL::text AS nsp, NULL::pg_catalog.name AS stxname, NULL::text AS columns, NULL::bool AS ndist_enabled, NULL::bool AS deps_enabled, NULL::bool AS mcv_enabled, NULL::integer AS stxstattarget WHERE false"},
	// \d: publications (pg_publication is empty).
	{"SELECT pubname", "FROM pg_catalog.pg_publication p",
		"SELECT NULL::pg_catalog.name AS pubname, NULL::text AS qual, NULL::text AS attrs WHERE false"},
}

// fragments are replaced inside a statement.
//
//lint:immutable a constant table of rewrites.
var fragments = []fragment{
	// \d t: the column default as a LEFT JOIN (at most one pg_attrdef row
	// per column) instead of a correlated scalar subquery.
	{`  (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid, true)
   FROM pg_catalog.pg_attrdef d
   WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef),`, `  pg_catalog.pg_get_expr(d.adbin, d.adrelid, true),`},
	{`FROM pg_catalog.pg_attribute a
WHERE a.attrelid = '`, `FROM pg_catalog.pg_attribute a
  LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef
WHERE a.attrelid = '`},
	// \d t: a column's non-default collation (there are none).
	{`  (SELECT c.collname FROM pg_catalog.pg_collation c, pg_catalog.pg_type t
   WHERE c.oid = a.attcollation AND t.oid = a.atttypid AND a.attcollation <> t.typcollation) AS attcollation,`,
		`  NULL::pg_catalog.name AS attcollation,`},
	// \d+ t: reloptions plus the TOAST table's (there is none).
	{`pg_catalog.array_to_string(c.reloptions || array(select 'toast.' || x from pg_catalog.unnest(tc.reloptions) x), ', ')`,
		`pg_catalog.array_to_string(c.reloptions, ', ')`},
	// \du: role memberships (pg_auth_members is empty).
	{`  ARRAY(SELECT b.rolname
        FROM pg_catalog.pg_auth_members m
        JOIN pg_catalog.pg_roles b ON (m.roleid = b.oid)
        WHERE m.member = r.oid) as memberof`, `  '{}'::pg_catalog.name[] as memberof`},
	// \dT: composite types (typrelid is always 0).
	{`WHERE (t.typrelid = 0 OR (SELECT c.relkind = 'c' FROM pg_catalog.pg_class c WHERE c.oid = t.typrelid))`,
		`WHERE (t.typrelid = 0)`},
}
