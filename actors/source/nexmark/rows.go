package nexmark

import (
	"time"

	"github.com/rockstream/rockstream/ivm/types"
)

// TableKind maps a Nexmark table name to the event kind it holds.
func TableKind(table string) (Kind, bool) {
	switch table {
	case "person":
		return KindPerson, true
	case "auction":
		return KindAuction, true
	case "bid":
		return KindBid, true
	}
	return 0, false
}

// epoch2000 is PostgreSQL's timestamp epoch in Unix microseconds.
const epoch2000 = 946_684_800_000_000

// timestamp is t as a timestamp(3) datum (truncated to milliseconds, as
// the benchmark's COPY text is).
func timestamp(t time.Time) types.Timestamp {
	return types.Timestamp(t.Truncate(time.Millisecond).UnixMicro() - epoch2000)
}

// Row is the event as a row of its table, in the column order of the
// NEXMARK source (and bench/nexmark's CREATE TABLEs).
func (e Event) Row() types.Row {
	switch e.Kind {
	case KindPerson:
		p := e.Person
		return types.Row{p.ID, p.Name, p.Email, p.CreditCard, p.City, p.State, timestamp(p.DateTime), p.Extra}
	case KindAuction:
		a := e.Auction
		return types.Row{a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve, timestamp(a.DateTime), timestamp(a.Expires), a.Seller, a.Category, a.Extra}
	}
	b := e.Bid
	return types.Row{b.Auction, b.Bidder, b.Price, b.Channel, b.URL, timestamp(b.DateTime), b.Extra}
}
