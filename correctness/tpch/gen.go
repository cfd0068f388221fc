// Package tpch holds the 22 TPC-H queries and a small deterministic
// generator of the eight TPC-H tables, for the test that creates every
// query as a materialized view and compares it with PostgreSQL.
//
// The generator follows the value domains of the TPC-H specification
// (section 4.2.3: the fixed nation and region rows, the part name colours,
// types, containers and brands, the partsupp supplier formula, order dates
// from 1992-01-01 to 1998-08-02, ship, commit and receipt dates derived
// from them, return flags and line statuses from the 1995-06-17 current
// date, customers whose key is a multiple of 3 placing no orders) closely
// enough that every query has rows at a scale factor of a few thousandths.
// Comments are drawn from a short vocabulary instead of the specification's
// grammar, with the phrases the queries look for (special requests,
// Customer Complaints) mixed in.
package tpch

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// DDL creates the eight tables with their primary keys (the
// specification's types; foreign keys are left out, RockStream refuses
// them).
var DDL = []string{
	`CREATE TABLE region (r_regionkey integer PRIMARY KEY, r_name char(25) NOT NULL, r_comment varchar(152))`,
	`CREATE TABLE nation (n_nationkey integer PRIMARY KEY, n_name char(25) NOT NULL, n_regionkey integer NOT NULL, n_comment varchar(152))`,
	`CREATE TABLE part (p_partkey integer PRIMARY KEY, p_name varchar(55) NOT NULL, p_mfgr char(25) NOT NULL, p_brand char(10) NOT NULL, p_type varchar(25) NOT NULL, p_size integer NOT NULL, p_container char(10) NOT NULL, p_retailprice decimal(15,2) NOT NULL, p_comment varchar(23) NOT NULL)`,
	`CREATE TABLE supplier (s_suppkey integer PRIMARY KEY, s_name char(25) NOT NULL, s_address varchar(40) NOT NULL, s_nationkey integer NOT NULL, s_phone char(15) NOT NULL, s_acctbal decimal(15,2) NOT NULL, s_comment varchar(101) NOT NULL)`,
	`CREATE TABLE partsupp (ps_partkey integer NOT NULL, ps_suppkey integer NOT NULL, ps_availqty integer NOT NULL, ps_supplycost decimal(15,2) NOT NULL, ps_comment varchar(199) NOT NULL, PRIMARY KEY (ps_partkey, ps_suppkey))`,
	`CREATE TABLE customer (c_custkey integer PRIMARY KEY, c_name varchar(25) NOT NULL, c_address varchar(40) NOT NULL, c_nationkey integer NOT NULL, c_phone char(15) NOT NULL, c_acctbal decimal(15,2) NOT NULL, c_mktsegment char(10) NOT NULL, c_comment varchar(117) NOT NULL)`,
	`CREATE TABLE orders (o_orderkey integer PRIMARY KEY, o_custkey integer NOT NULL, o_orderstatus char(1) NOT NULL, o_totalprice decimal(15,2) NOT NULL, o_orderdate date NOT NULL, o_orderpriority char(15) NOT NULL, o_clerk char(15) NOT NULL, o_shippriority integer NOT NULL, o_comment varchar(79) NOT NULL)`,
	`CREATE TABLE lineitem (l_orderkey integer NOT NULL, l_partkey integer NOT NULL, l_suppkey integer NOT NULL, l_linenumber integer NOT NULL, l_quantity decimal(15,2) NOT NULL, l_extendedprice decimal(15,2) NOT NULL, l_discount decimal(15,2) NOT NULL, l_tax decimal(15,2) NOT NULL, l_returnflag char(1) NOT NULL, l_linestatus char(1) NOT NULL, l_shipdate date NOT NULL, l_commitdate date NOT NULL, l_receiptdate date NOT NULL, l_shipinstruct char(25) NOT NULL, l_shipmode char(10) NOT NULL, l_comment varchar(44) NOT NULL, PRIMARY KEY (l_orderkey, l_linenumber))`,
}

// Tables lists the tables in load order.
var Tables = []string{"region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"}

var regions = []string{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}

var nations = []struct {
	name   string
	region int
}{
	{"ALGERIA", 0}, {"ARGENTINA", 1}, {"BRAZIL", 1}, {"CANADA", 1}, {"EGYPT", 4},
	{"ETHIOPIA", 0}, {"FRANCE", 3}, {"GERMANY", 3}, {"INDIA", 2}, {"INDONESIA", 2},
	{"IRAN", 4}, {"IRAQ", 4}, {"JAPAN", 2}, {"JORDAN", 4}, {"KENYA", 0},
	{"MOROCCO", 0}, {"MOZAMBIQUE", 0}, {"PERU", 1}, {"CHINA", 2}, {"ROMANIA", 3},
	{"SAUDI ARABIA", 4}, {"VIETNAM", 2}, {"RUSSIA", 3}, {"UNITED KINGDOM", 3}, {"UNITED STATES", 1},
}

var colors = strings.Fields(`almond antique aquamarine azure beige bisque black blanched blue blush brown
burlywood burnished chartreuse chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim
dodger drab firebrick floral forest frosted gainsboro ghost goldenrod green grey honeydew hot indian
ivory khaki lace lavender lawn lemon light lime linen magenta maroon medium metallic midnight mint
misty moccasin navajo navy olive orange orchid pale papaya peach peru pink plum powder puff purple
red rose rosy royal saddle salmon sandy seashell sienna sky slate smoke snow spring steel tan thistle
tomato turquoise violet wheat white yellow`)

var (
	typeS1     = []string{"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"}
	typeS2     = []string{"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"}
	typeS3     = []string{"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"}
	containerA = []string{"SM", "LG", "MED", "JUMBO", "WRAP"}
	containerB = []string{"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"}
	segments   = []string{"AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"}
	priorities = []string{"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"}
	instructs  = []string{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"}
	modes      = []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
	words      = strings.Fields(`furiously carefully blithely quickly slyly final ironic pending regular express
bold even silent unusual special requests deposits packages accounts theodolites foxes pinto beans
instructions dependencies excuses platelets asymptotes courts dolphins ideas sleep wake haggle nag
use boost detect integrate cajole among above along across about after`)
)

var (
	startDate   = time.Date(1992, 1, 1, 0, 0, 0, 0, time.UTC)
	currentDate = time.Date(1995, 6, 17, 0, 0, 0, 0, time.UTC)
	endDate     = time.Date(1998, 12, 31, 0, 0, 0, 0, time.UTC)
)

// Gen generates rows; every value it returns is an SQL literal list
// "(v1, v2, ...)" both systems accept.
type Gen struct {
	r                                  *rand.Rand
	SF                                 float64
	Parts, Suppliers, Customers, Order int
	nextOrder                          int
	retail                             []int64 // cents, by partkey
}

// New returns a generator for scale factor sf seeded with seed.
func New(sf float64, seed uint64) *Gen {
	g := &Gen{r: rand.New(rand.NewPCG(seed, 0x7c9)), SF: sf}
	g.Parts = max(1, int(200000*sf))
	g.Suppliers = max(25, int(10000*sf))
	g.Customers = max(3, int(150000*sf))
	g.Order = max(1, int(1500000*sf))
	g.retail = make([]int64, g.Parts+1)
	for p := 1; p <= g.Parts; p++ {
		g.retail[p] = int64(90000 + (p/10)%20001 + 100*(p%1000))
	}
	return g
}

func (g *Gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

func (g *Gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *Gen) text(minLen, maxLen int) string {
	n := g.between(minLen, maxLen)
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.pick(words))
	}
	s := b.String()
	if len(s) > maxLen {
		s = strings.TrimRight(s[:maxLen], " ")
	}
	return s
}

func (g *Gen) vstring(minLen, maxLen int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,. "
	n := g.between(minLen, maxLen) - 1
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return strings.TrimSpace(string(b)) + "x"
}

func (g *Gen) phone(nation int) string {
	return fmt.Sprintf("%02d-%03d-%03d-%04d", nation+10, g.between(100, 999), g.between(100, 999), g.between(1000, 9999))
}

func money(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

func day(t time.Time) string { return "'" + t.Format("2006-01-02") + "'" }

// Region returns the five region rows.
func (g *Gen) Region() []string {
	var out []string
	for i, r := range regions {
		out = append(out, fmt.Sprintf("(%d, '%s', '%s')", i, r, g.text(31, 115)))
	}
	return out
}

// Nation returns the 25 nation rows.
func (g *Gen) Nation() []string {
	var out []string
	for i, n := range nations {
		out = append(out, fmt.Sprintf("(%d, '%s', %d, '%s')", i, n.name, n.region, g.text(31, 114)))
	}
	return out
}

// Part returns the part rows.
func (g *Gen) Part() []string {
	var out []string
	for p := 1; p <= g.Parts; p++ {
		perm := g.r.Perm(len(colors))
		name := make([]string, 5)
		for i := range name {
			name[i] = colors[perm[i]]
		}
		m := g.between(1, 5)
		out = append(out, fmt.Sprintf("(%d, '%s', 'Manufacturer#%d', 'Brand#%d%d', '%s %s %s', %d, '%s %s', %s, '%s')",
			p, strings.Join(name, " "), m, m, g.between(1, 5),
			g.pick(typeS1), g.pick(typeS2), g.pick(typeS3), g.between(1, 50),
			g.pick(containerA), g.pick(containerB), money(g.retail[p]), g.text(5, 22)))
	}
	return out
}

// Supplier returns the supplier rows; about one in ten has a comment with
// "Customer ... Complaints", as many "Customer ... Recommends".
func (g *Gen) Supplier() []string {
	var out []string
	for s := 1; s <= g.Suppliers; s++ {
		n := g.r.IntN(len(nations))
		comment := g.text(25, 60)
		switch g.r.IntN(10) {
		case 0:
			comment = g.text(5, 20) + " Customer " + g.text(3, 10) + " Complaints " + g.text(3, 20)
		case 1:
			comment = g.text(5, 20) + " Customer " + g.text(3, 10) + " Recommends " + g.text(3, 20)
		}
		out = append(out, fmt.Sprintf("(%d, 'Supplier#%09d', '%s', %d, '%s', %s, '%s')",
			s, s, g.vstring(10, 40), n, g.phone(n), money(int64(g.between(-99999, 999999))), comment))
	}
	return out
}

// PartSupplier is the i-th (0..3) supplier of a part: the
// specification's formula, moved on to the next supplier where it would
// repeat one of the part's (which only happens at tiny scale factors).
func (g *Gen) PartSupplier(part, i int) int {
	s := g.Suppliers
	var seen [4]int
	for j := 0; j <= i; j++ {
		k := (part+(j*((s/4)+(part-1)/s)))%s + 1
		for dup := true; dup; {
			dup = false
			for _, x := range seen[:j] {
				if x == k {
					k, dup = k%s+1, true
				}
			}
		}
		seen[j] = k
	}
	return seen[i]
}

// PartSupp returns four partsupp rows a part.
func (g *Gen) PartSupp() []string {
	var out []string
	for p := 1; p <= g.Parts; p++ {
		for i := 0; i < 4; i++ {
			out = append(out, fmt.Sprintf("(%d, %d, %d, %s, '%s')",
				p, g.PartSupplier(p, i), g.between(1, 9999), money(int64(g.between(100, 100000))), g.text(49, 198)))
		}
	}
	return out
}

// Customer returns the customer rows.
func (g *Gen) Customer() []string {
	var out []string
	for c := 1; c <= g.Customers; c++ {
		n := g.r.IntN(len(nations))
		out = append(out, fmt.Sprintf("(%d, 'Customer#%09d', '%s', %d, '%s', %s, '%s', '%s')",
			c, c, g.vstring(10, 40), n, g.phone(n), money(int64(g.between(-99999, 999999))), g.pick(segments), g.text(29, 116)))
	}
	return out
}

// OrdersAndLines returns n new orders (keys continuing after the last
// generated one) and their line items.
func (g *Gen) OrdersAndLines(n int) (orders, lines []string) {
	span := int(endDate.Sub(startDate).Hours()/24) - 151
	for k := 0; k < n; k++ {
		g.nextOrder++
		key := g.nextOrder
		cust := g.between(1, g.Customers)
		for cust%3 == 0 {
			cust = g.between(1, g.Customers)
		}
		date := startDate.AddDate(0, 0, g.r.IntN(span+1))
		var total int64 // in 1e-6 units: price(cents) * (1+tax) * (1-disc), both in hundredths
		nF, nO := 0, 0
		nl := g.between(1, 7)
		for ln := 1; ln <= nl; ln++ {
			part := g.between(1, g.Parts)
			supp := g.PartSupplier(part, g.r.IntN(4))
			qty := int64(g.between(1, 50))
			price := qty * g.retail[part]
			disc, tax := int64(g.between(0, 10)), int64(g.between(0, 8))
			ship := date.AddDate(0, 0, g.between(1, 121))
			commit := date.AddDate(0, 0, g.between(30, 90))
			receipt := ship.AddDate(0, 0, g.between(1, 30))
			flag := "N"
			if !receipt.After(currentDate) {
				flag = "RA"[g.r.IntN(2):][:1]
			}
			status := "F"
			if ship.After(currentDate) {
				status = "O"
				nO++
			} else {
				nF++
			}
			total += price * (100 + tax) * (100 - disc)
			lines = append(lines, fmt.Sprintf("(%d, %d, %d, %d, %d, %s, 0.%02d, 0.%02d, '%s', '%s', %s, %s, %s, '%s', '%s', '%s')",
				key, part, supp, ln, qty, money(price), disc, tax, flag, status,
				day(ship), day(commit), day(receipt), g.pick(instructs), g.pick(modes), g.text(10, 43)))
		}
		status := "P"
		switch {
		case nO == 0:
			status = "F"
		case nF == 0:
			status = "O"
		}
		comment := g.text(19, 78)
		if g.r.IntN(50) == 0 {
			comment = g.text(3, 20) + " special " + g.text(3, 20) + " requests " + g.text(3, 20)
		}
		orders = append(orders, fmt.Sprintf("(%d, %d, '%s', %s, %s, '%s', 'Clerk#%09d', 0, '%s')",
			key, cust, status, money(total/10000), day(date), g.pick(priorities), g.between(1, max(1, int(1000*g.SF))), comment))
	}
	return orders, lines
}

// Intn draws from [0, n) of the generator's stream (for the test's
// random changes).
func (g *Gen) Intn(n int) int { return g.r.IntN(n) }

// Between draws from [lo, hi].
func (g *Gen) Between(lo, hi int) int { return g.between(lo, hi) }

// Pick draws one of xs.
func (g *Gen) Pick(xs []string) string { return g.pick(xs) }

// Segments, Priorities and Modes are value domains the test's changes
// draw from.
var (
	Segments   = segments
	Priorities = priorities
	Modes      = modes
)

// LastOrder is the largest order key generated so far.
func (g *Gen) LastOrder() int { return g.nextOrder }
