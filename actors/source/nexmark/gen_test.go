package nexmark

import "testing"

// TestEventRules checks the generator's id, category, price and hot-key
// rules on the first 5,000 events.
func TestEventRules(t *testing.T) {
	g := Generator{Seed: 7}
	// Ids: people and auctions are dense from 1000; bids reference
	// existing-ish ids (auction id lead 10); hot auction takes ~half.
	hot := 0
	for n := int64(0); n < 5000; n++ {
		e := g.Event(n)
		switch e.Kind {
		case KindPerson:
			if want := n/50 + 1000; e.Person.ID != want {
				t.Fatalf("person %d id %d want %d", n, e.Person.ID, want)
			}
		case KindAuction:
			if e.Auction.Category < 10 || e.Auction.Category > 14 || e.Auction.Reserve <= e.Auction.InitialBid {
				t.Fatalf("auction %+v", e.Auction)
			}
		case KindBid:
			if e.Bid.Price < 100 || e.Bid.Price > 100_000_000 {
				t.Fatalf("price %d", e.Bid.Price)
			}
			if e.Bid.Auction > lastBase0AuctionID(n)+firstAuctionID+auctionIDLead {
				t.Fatalf("bid %d on future auction %d", n, e.Bid.Auction)
			}
			if e.Bid.Auction == (lastBase0AuctionID(n)/100)*100+1000 {
				hot++
			}
		}
	}
	if hot < 4600*4/10 || hot > 4600*7/10 {
		t.Fatalf("hot-auction bids %d of 4600, want about half", hot)
	}
}
