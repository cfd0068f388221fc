package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/slate/objstore"
)

// TestLookupJoinReadsOnlyJoiningRows: a join of an order read by key with
// its customer reads one customer from the store, not all 2,000 (a lookup
// join), through the primary key, an index, a chain of joins, and UPDATE …
// FROM; a join whose driving side is not read by key reads whole.
func TestLookupJoinReadsOnlyJoiningRows(t *testing.T) {
	e := openQuiet(t, Config{Store: objstore.NewMemory()})
	defer e.Close(context.Background())
	s := newRangeSession(t, e)
	s.run(`CREATE TABLE customers (id int PRIMARY KEY, region int, name text)`)
	s.run(`CREATE TABLE orders (id int PRIMARY KEY, customer_id int, amount int)`)
	s.run(`CREATE TABLE regions (id int PRIMARY KEY, name text)`)
	var sb strings.Builder
	sb.WriteString("INSERT INTO customers VALUES ")
	for i := 1; i <= 2000; i++ {
		if i > 1 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, %d, 'c%d')", i, i%10, i)
	}
	s.run(sb.String())
	s.run(`INSERT INTO orders SELECT id, id % 1000 + 1, id FROM customers WHERE id <= 100`)
	s.run(`INSERT INTO regions SELECT id, 'r' || id FROM customers WHERE id <= 10`)
	s.run(`CREATE INDEX orders_customer ON orders (customer_id)`)
	for _, tc := range []struct {
		sql  string
		want string
		read uint64
	}{
		// The order is a point read (counted apart), its customer 1 row;
		// orders read in ranges are counted.
		{`SELECT c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = 42`, `("c43")`, 1},
		{`SELECT c.name FROM orders o LEFT JOIN customers c ON c.id = o.customer_id WHERE o.id IN (42, 43, 9999)`, `("c43"); ("c44")`, 2 + 2},
		{`SELECT count(*) FROM orders o WHERE o.id BETWEEN 1 AND 5 AND EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer_id AND c.region = 3)`, "(1)", 5 + 5},
		// The customer by key, its orders through the index.
		{`SELECT o.amount FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.id = 8`, "(7)", 1},
		// A chain: the order, its customer, the customer's region.
		{`SELECT r.name FROM orders o JOIN customers c ON c.id = o.customer_id JOIN regions r ON r.id = c.region WHERE o.id = 42`, `("r3")`, 2},
		// No key on the driving side: both read whole.
		{`SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.amount = 42`, "(1)", 2100},
	} {
		before := readRows(t, e)
		if got := strings.Join(s.run(tc.sql), "; "); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.sql, got, tc.want)
		}
		if n := readRows(t, e) - before; n != tc.read {
			t.Errorf("%s read %d rows from the store, want %d", tc.sql, n, tc.read)
		}
	}
	explain := strings.Join(s.runOrdered(`EXPLAIN SELECT c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = 42`), "\n")
	if !strings.Contains(explain, `("Index Scan using customers_pkey on customers c")`+"\n"+`("  Index Cond: (id = o.customer_id)")`) {
		t.Errorf("EXPLAIN does not show the lookup:\n%s", explain)
	}
	explain = strings.Join(s.runOrdered(`EXPLAIN SELECT c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.amount = 42`), "\n")
	if strings.Contains(explain, "Index Scan") {
		t.Errorf("EXPLAIN shows a lookup of a join read whole:\n%s", explain)
	}
	before := readRows(t, e)
	s.run(`UPDATE customers c SET name = 'x' FROM orders o WHERE c.id = o.customer_id AND o.id = 50`)
	s.run(`DELETE FROM orders o USING customers c WHERE o.customer_id = c.id AND c.id = 52`)
	if n := readRows(t, e) - before; n > 4 {
		t.Errorf("UPDATE … FROM and DELETE … USING by lookup read %d rows from the store, want at most 4", n)
	}
	if got := strings.Join(s.run(`SELECT c.name, o.id FROM customers c LEFT JOIN orders o ON o.customer_id = c.id WHERE c.id IN (51, 52)`), "; "); got != `("c52",NULL); ("x",50)` {
		t.Errorf("after UPDATE … FROM and DELETE … USING: %s", got)
	}
	// The transaction's own writes show in a lookup.
	if err := s.gs.Begin(context.Background(), gateway.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	s.inTxn = true
	s.run(`INSERT INTO customers VALUES (5000, 1, 'new')`)
	s.run(`UPDATE orders SET customer_id = 5000 WHERE id = 1`)
	s.run(`INSERT INTO orders VALUES (5001, 5000, 9)`)
	if got := strings.Join(s.run(`SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id IN (1, 5001)`), "; "); got != `(1,"new"); (5001,"new")` {
		t.Errorf("lookup join in a transaction: %s", got)
	}
	if got := strings.Join(s.run(`SELECT o.id FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.id = 5000`), "; "); got != "(1); (5001)" {
		t.Errorf("index lookup join in a transaction: %s", got)
	}
	if err := s.gs.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestLookupJoinsMatchPostgres runs random joins whose driving side is
// read by key (points, IN lists, ranges, an index) against tables joined
// on their primary key, a composite key's leading column, a plain index
// with duplicates and a unique one, with NULL and dangling join keys,
// inner, LEFT, RIGHT, semi (either side) and anti joins and chains of three, and UPDATE
// … FROM / DELETE … USING, comparing with PostgreSQL 15.
func TestLookupJoinsMatchPostgres(t *testing.T) {
	_, pg := pgtest.Database(t)
	ctx := context.Background()
	e := openQuiet(t, Config{Store: objstore.NewMemory()})
	defer e.Close(ctx)
	s := newRangeSession(t, e)
	rng := rand.New(rand.NewPCG(3, 5))
	both := func(sql string) {
		t.Helper()
		s.run(sql)
		if _, err := pg.Exec(ctx, sql); err != nil {
			t.Fatalf("postgres: %s: %v", sql, err)
		}
	}
	for _, tb := range []string{"items", "orders", "customers"} {
		if _, err := pg.Exec(ctx, "DROP TABLE IF EXISTS "+tb); err != nil {
			t.Fatal(err)
		}
	}
	both(`CREATE TABLE customers (id int PRIMARY KEY, region int, name text, v int)`)
	both(`CREATE TABLE orders (id int PRIMARY KEY, cid int, region int, name text, amt int)`)
	both(`CREATE TABLE items (oid int, line int, qty int, PRIMARY KEY (oid, line))`)
	nullOr := func(p int, v string) string {
		if rng.IntN(p) == 0 {
			return "NULL"
		}
		return v
	}
	var vals []string
	for i := 1; i <= 200; i++ {
		name := nullOr(6, fmt.Sprintf("'n%d'", i))
		vals = append(vals, fmt.Sprintf("(%d, %s, %s, %d)", i, nullOr(8, fmt.Sprint(rng.IntN(12))), name, rng.IntN(100)))
	}
	both(`INSERT INTO customers VALUES ` + strings.Join(vals, ", "))
	vals = vals[:0]
	for i := 1; i <= 300; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %s, %s, %s, %d)", i, nullOr(8, fmt.Sprint(rng.IntN(230))), nullOr(8, fmt.Sprint(rng.IntN(12))),
			nullOr(4, fmt.Sprintf("'n%d'", rng.IntN(230))), rng.IntN(1000)))
	}
	both(`INSERT INTO orders VALUES ` + strings.Join(vals, ", "))
	vals = vals[:0]
	for i := 1; i <= 500; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d, %d)", rng.IntN(320), i, rng.IntN(10)))
	}
	both(`INSERT INTO items VALUES ` + strings.Join(vals, ", "))
	both(`CREATE INDEX orders_cid ON orders (cid)`)
	both(`CREATE INDEX customers_region ON customers (region, v)`)
	both(`CREATE UNIQUE INDEX customers_name ON customers (name)`)
	// Driving predicates on the table aliased x.
	drive := func(x string, hi int) string {
		r := func() int { return rng.IntN(hi+20) - 10 }
		switch rng.IntN(6) {
		case 0:
			return fmt.Sprintf("%s.id IN (%d, %d, %d, NULL)", x, r(), r(), r())
		case 1:
			lo := r()
			return fmt.Sprintf("%s.id BETWEEN %d AND %d", x, lo, lo+rng.IntN(30))
		case 2:
			return fmt.Sprintf("%s.id > %d", x, hi-rng.IntN(40))
		}
		return fmt.Sprintf("%s.id = %d", x, r())
	}
	templates := []func() string{
		func() string {
			return "SELECT o.id * 1000 + coalesce(c.v, 999) FROM orders o JOIN customers c ON c.id = o.cid WHERE " + drive("o", 300)
		},
		func() string {
			return "SELECT o.id * 1000 + coalesce(c.v, 999) FROM orders o LEFT JOIN customers c ON c.id = o.cid WHERE " + drive("o", 300)
		},
		func() string {
			return "SELECT c.id * 1000 + coalesce(o.id, 999) FROM customers c LEFT JOIN orders o ON o.cid = c.id WHERE " + drive("c", 200)
		},
		func() string {
			return "SELECT coalesce(o.id, -1) * 1000 + c.v FROM orders o RIGHT JOIN customers c ON o.cid = c.id AND o.amt > 300 WHERE " + drive("c", 200)
		},
		func() string {
			return "SELECT o.id * 1000 + c.id FROM orders o JOIN customers c ON c.region = o.region WHERE " + drive("o", 300)
		},
		func() string {
			return "SELECT o.id * 1000 + c.id FROM orders o JOIN customers c ON c.region = o.region AND c.v = o.amt % 100 WHERE " + drive("o", 300)
		},
		func() string {
			return "SELECT o.id * 1000 + coalesce(c.id, 999) FROM orders o LEFT JOIN customers c ON c.name = o.name WHERE " + drive("o", 300)
		},
		func() string {
			return "SELECT o.id * 1000 + i.line FROM orders o JOIN items i ON i.oid = o.id AND i.qty > 2 WHERE " + drive("o", 300)
		},
		func() string {
			return "SELECT o.id * 1000 + c.id FROM orders o JOIN customers c ON c.id = o.cid JOIN items i ON i.oid = o.id WHERE " + drive("o", 300)
		},
		func() string {
			return "SELECT i.line * 1000 + coalesce(c.v, 999) FROM items i JOIN orders o ON o.id = i.oid LEFT JOIN customers c ON c.id = o.cid WHERE i.oid = " + fmt.Sprint(rng.IntN(320))
		},
		func() string {
			return "SELECT o.id FROM orders o WHERE " + drive("o", 300) + " AND EXISTS (SELECT 1 FROM customers c WHERE c.id = o.cid AND c.v > 50)"
		},
		func() string {
			return "SELECT o.id FROM orders o WHERE " + drive("o", 300) + " AND NOT EXISTS (SELECT 1 FROM customers c WHERE c.id = o.cid AND c.v > 50)"
		},
		func() string {
			return "SELECT o.id FROM orders o WHERE " + drive("o", 300) + " AND o.cid NOT IN (SELECT id FROM customers WHERE v > 90)"
		},
		func() string {
			return "SELECT count(*) FROM customers c JOIN orders o ON o.cid = c.id WHERE " + drive("c", 200)
		},
		func() string {
			return "SELECT c.id * 1000 + c.v FROM customers c WHERE c.id IN (SELECT cid FROM orders o WHERE " + drive("o", 300) + ")"
		},
		func() string {
			return "SELECT c.id * 1000 + c.v FROM customers c WHERE c.region IN (SELECT region FROM orders o WHERE " + drive("o", 300) + ")"
		},
	}
	for q := range 400 {
		sql := templates[q%len(templates)]()
		got := s.run(sql)
		if want := pgRows(t, pg, sql); !slices.Equal(got, want) {
			t.Fatalf("%s:\n got %v\nwant %v", sql, got, want)
		}
		if q%10 != 9 {
			continue
		}
		switch rng.IntN(3) {
		case 0:
			both(fmt.Sprintf("UPDATE customers c SET v = c.v + 1 FROM orders o WHERE c.id = o.cid AND %s", drive("o", 300)))
		case 1:
			both(fmt.Sprintf("UPDATE orders o SET amt = o.amt + c.v FROM customers c WHERE o.cid = c.id AND %s", drive("c", 200)))
		default:
			both(fmt.Sprintf("DELETE FROM items i USING orders o WHERE i.oid = o.id AND %s", drive("o", 300)))
		}
		for _, check := range []string{
			"SELECT id * 1000 + v FROM customers",
			"SELECT id * 1000000 + amt FROM orders",
			"SELECT oid * 1000 + line FROM items",
		} {
			if got, want := s.run(check), pgRows(t, pg, check); !slices.Equal(got, want) {
				t.Fatalf("after query %d: %s:\n got %v\nwant %v", q, check, got, want)
			}
		}
	}
}
