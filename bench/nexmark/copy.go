package nexmark

import (
	"strconv"
	"strings"
	"time"
)

// Tables is the DDL of the three Nexmark tables (Feldera's table.sql
// columns). They are insert-only: Nexmark streams only append.
var Tables = []string{ //lint:immutable DDL text
	`CREATE TABLE person (id bigint, name varchar, email_address varchar, credit_card varchar, city varchar, state varchar, date_time timestamp(3), extra varchar) WITH (insert_only = true)`,
	`CREATE TABLE auction (id bigint, item_name varchar, description varchar, initial_bid bigint, reserve bigint, date_time timestamp(3), expires timestamp(3), seller bigint, category bigint, extra varchar) WITH (insert_only = true)`,
	`CREATE TABLE bid (auction bigint, bidder bigint, price bigint, channel varchar, url varchar, date_time timestamp(3), extra varchar) WITH (insert_only = true)`,
}

// SideInput is q13's bounded side input, created and filled before a
// view that reads it: side_input(key, value) with one row per key
// 0..9 999, its value the key as text (as RisingWave's Nexmark q13).
var SideInput = []string{ //lint:immutable DDL text
	`CREATE TABLE side_input (key bigint PRIMARY KEY, value varchar)`,
	`INSERT INTO side_input SELECT v, v::varchar FROM generate_series(0, 9999) AS s(v)`,
}

// ProcTimeColumn is q12's processing-time attribute, a bid column only
// for a view that reads it (TablesFor): p_time, filled by its default
// with the time of the transaction that inserts the row (as RisingWave's
// `p_time timestamptz AS PROCTIME()` table column: ingestion time). COPY
// names bid's other columns (CopySQL), so p_time takes its default.
const ProcTimeColumn = ", p_time timestamptz DEFAULT now()"

// TablesFor is Tables for a view: bid has p_time when the view reads it.
func TablesFor(view string) []string {
	if !strings.Contains(view, "p_time") {
		return Tables
	}
	out := append([]string(nil), Tables...)
	for i, s := range out {
		if strings.HasPrefix(s, "CREATE TABLE bid (") {
			out[i] = strings.Replace(s, ", extra varchar)", ", extra varchar"+ProcTimeColumn+")", 1)
		}
	}
	return out
}

// SetupFor is the DDL a view needs besides the Nexmark tables: the side
// input for a view that reads it.
func SetupFor(view string) []string {
	if strings.Contains(view, "side_input") {
		return SideInput
	}
	return nil
}

// CopySQL is the COPY statement loading table's generated columns (bid's
// are named, so a p_time column takes its default).
func CopySQL(table string) string {
	if table == "bid" {
		return "COPY bid (auction, bidder, price, channel, url, date_time, extra) FROM STDIN"
	}
	return "COPY " + table + " FROM STDIN"
}

const tsLayout = "2006-01-02 15:04:05.000"

// Batch holds COPY text (tab-separated) for the three tables.
type Batch struct {
	Person, Auction, Bid   []byte
	People, Auctions, Bids int
}

// Reset empties the batch, keeping its buffers.
func (b *Batch) Reset() {
	b.Person, b.Auction, b.Bid = b.Person[:0], b.Auction[:0], b.Bid[:0]
	b.People, b.Auctions, b.Bids = 0, 0, 0
}

// Bytes is the batch's logical input size.
func (b *Batch) Bytes() int { return len(b.Person) + len(b.Auction) + len(b.Bid) }

func appendTS(dst []byte, t time.Time) []byte { return t.UTC().AppendFormat(dst, tsLayout) }

// Append generates events [from, to) of g into b. Generated strings
// contain no tab, newline or backslash, so they need no COPY escaping.
func (b *Batch) Append(g Generator, from, to int64) {
	for n := from; n < to; n++ {
		e := g.Event(n)
		switch e.Kind {
		case KindPerson:
			p := e.Person
			d := strconv.AppendInt(b.Person, p.ID, 10)
			d = append(append(append(d, '\t'), p.Name...), '\t')
			d = append(append(d, p.Email...), '\t')
			d = append(append(d, p.CreditCard...), '\t')
			d = append(append(d, p.City...), '\t')
			d = append(append(d, p.State...), '\t')
			d = append(appendTS(d, p.DateTime), '\t')
			b.Person = append(append(d, p.Extra...), '\n')
			b.People++
		case KindAuction:
			a := e.Auction
			d := strconv.AppendInt(b.Auction, a.ID, 10)
			d = append(append(append(d, '\t'), a.ItemName...), '\t')
			d = append(append(d, a.Description...), '\t')
			d = append(strconv.AppendInt(d, a.InitialBid, 10), '\t')
			d = append(strconv.AppendInt(d, a.Reserve, 10), '\t')
			d = append(appendTS(d, a.DateTime), '\t')
			d = append(appendTS(d, a.Expires), '\t')
			d = append(strconv.AppendInt(d, a.Seller, 10), '\t')
			d = append(strconv.AppendInt(d, a.Category, 10), '\t')
			b.Auction = append(append(d, a.Extra...), '\n')
			b.Auctions++
		default:
			x := e.Bid
			d := strconv.AppendInt(b.Bid, x.Auction, 10)
			d = append(strconv.AppendInt(append(d, '\t'), x.Bidder, 10), '\t')
			d = append(strconv.AppendInt(d, x.Price, 10), '\t')
			d = append(append(d, x.Channel...), '\t')
			d = append(append(d, x.URL...), '\t')
			d = append(appendTS(d, x.DateTime), '\t')
			b.Bid = append(append(d, x.Extra...), '\n')
			b.Bids++
		}
	}
}
