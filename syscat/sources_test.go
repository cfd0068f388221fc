package syscat

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestSourceRows: rockstream_catalog.sources shows a POSTGRES source and
// its mirrors with the source's state, positions (as pg_lsn prints them)
// and lag, a generator as RUNNING, and never a connection's password.
func TestSourceRows(t *testing.T) {
	src := &catalog.Relation{ID: catalog.ID{Object: catalog.ObjectID{15: 1}}, Kind: catalog.KindSource, Name: "pg",
		SQL: `CREATE SOURCE pg FROM POSTGRES (connection = 'postgres://u:s3cret@h/db', publication = 'p')`}
	kv := &catalog.Relation{ID: catalog.ID{Object: catalog.ObjectID{15: 2}}, Kind: catalog.KindSource, Name: "pg2",
		SQL: `CREATE SOURCE pg2 FROM POSTGRES (connection = 'host=h password=s3cret dbname=db', publication = 'p')`}
	mirror := &catalog.Relation{ID: catalog.ID{Object: catalog.ObjectID{15: 3}}, Kind: catalog.KindSource, Name: "orders",
		Upstream: &catalog.Upstream{Source: src.ID, Schema: "public", Table: "orders"}}
	gen := &catalog.Relation{ID: catalog.ID{Object: catalog.ObjectID{15: 4}}, Kind: catalog.KindSource, Name: "clicks",
		SQL: `CREATE SOURCE clicks FROM GENERATE ROWS (id BIGINT GENERATED)`}
	env := &Env{Relations: []*catalog.Relation{src, kv, mirror, gen}, Sources: map[string]SourceStatus{
		"pg": {State: "BLOCKED", Slot: "rockstream_1", UpstreamLSN: 0x1_0000_0200, CommittedLSN: 0x1_0000_0100, Rows: 7, Errors: 1, Error: "RS-1002: column \"b\" was dropped"},
	}}
	var got []string
	for _, row := range sourceRows(env) {
		got = append(got, zset.FormatRow(row))
	}
	want := []string{
		`("pg","postgres","CREATE SOURCE pg FROM POSTGRES (connection = 'postgres://u:********@h/db', publication = 'p')","BLOCKED","rockstream_1","1/200","1/100",256,7,1,"RS-1002: column \"b\" was dropped",NULL,NULL)`,
		`("pg2","postgres","CREATE SOURCE pg2 FROM POSTGRES (connection = 'host=h password=******** dbname=db', publication = 'p')",NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL)`,
		`("orders","postgres table","mirror of public.orders (source pg)","BLOCKED","rockstream_1","1/200","1/100",256,7,1,"RS-1002: column \"b\" was dropped",NULL,NULL)`,
		`("clicks","generate rows","CREATE SOURCE clicks FROM GENERATE ROWS (id BIGINT GENERATED)","RUNNING",NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rockstream_catalog.sources rows\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
