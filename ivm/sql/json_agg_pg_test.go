package sql_test

import (
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// jsonAggViews are json_agg, jsonb_agg, json_object_agg and
// jsonb_object_agg queries maintained incrementally (ORDER BY inside the
// call with a unique order wherever PostgreSQL's order would otherwise be
// the plan's).
//
//lint:immutable a constant table of test queries.
var jsonAggViews = []string{
	"SELECT c, json_agg(b ORDER BY a), jsonb_agg(b ORDER BY a DESC), count(*) FROM t GROUP BY c",
	"SELECT json_agg(c ORDER BY a) FILTER (WHERE b > 0), jsonb_agg(a * 1.50 ORDER BY a), json_agg(ARRAY[a, b] ORDER BY a) FROM t",
	"SELECT b, json_object_agg(a, c ORDER BY a), jsonb_object_agg(a, c) FROM t GROUP BY b",
	"SELECT jsonb_object_agg(coalesce(c, '-'), b ORDER BY a), json_object_agg(c || a, b > 1 ORDER BY a DESC) FILTER (WHERE c IS NOT NULL) FROM t",
	"SELECT b, json_agg(DISTINCT c ORDER BY c), jsonb_agg(DISTINCT b), json_agg(timestamptz '2024-01-01 00:00+00' + a * interval '1 day' ORDER BY a) FROM t GROUP BY b",
	"SELECT t.c, jsonb_agg(jsonb_build_object('k', u.k, 'v', u.v) ORDER BY u.k), json_agg(u.g ORDER BY u.k) FROM t JOIN u ON u.v = t.b GROUP BY t.c",
	"SELECT c, json_agg(to_jsonb(b) ORDER BY a), jsonb_agg(json_build_array(a, c) ORDER BY a) FROM t GROUP BY c HAVING json_agg(a)::text <> '[0]'",
}

// TestJSONAggViewsAgainstPostgres maintains each query as a view over
// random inserts, updates and deletes and runs it ad hoc, comparing both
// with PostgreSQL 15 after every change batch.
func TestJSONAggViewsAgainstPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	for i, q := range jsonAggViews {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for seed := int64(0); seed < 4; seed++ {
				checkSupported(t, conn, coverageRow{construct: "json aggregate", status: "supported", example: q}, 2000+10*int64(i)+seed)
			}
		})
	}
}
