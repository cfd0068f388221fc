package nexmark

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGeneratorDeterministicAndProportions(t *testing.T) {
	g := Generator{Seed: 7}
	var a, b Batch
	g.Append(&a, 0, 5000)
	// Batching must not change the stream.
	for i := int64(0); i < 5000; i += 333 {
		g.Append(&b, i, min(i+333, 5000))
	}
	if !bytes.Equal(a.Bid, b.Bid) || !bytes.Equal(a.Person, b.Person) || !bytes.Equal(a.Auction, b.Auction) {
		t.Fatal("stream depends on batching")
	}
	if a.People != 100 || a.Auctions != 300 || a.Bids != 4600 {
		t.Fatalf("mix %d:%d:%d, want 100:300:4600", a.People, a.Auctions, a.Bids)
	}
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

func TestQueriesParseable(t *testing.T) {
	for _, q := range QueryNames() {
		s, err := QuerySQL(q)
		if err != nil || !strings.HasPrefix(s, "CREATE MATERIALIZED VIEW "+q+" AS") {
			t.Fatalf("%s: %q %v", q, s, err)
		}
		if _, ok := Blocked[q]; ok {
			t.Fatalf("%s both has SQL and is listed blocked", q)
		}
	}
}

// TestRunSmoke runs every query file end to end on a tiny stream: the
// command's whole code path (server, DDL, COPY, probes, CSV, SVG).
func TestRunSmoke(t *testing.T) {
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Events: 3000, Batch: 1000, Probes: 3, Queries: QueryNames(), Out: out, StorageDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(QueryNames()) {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.EventsPerSec <= 0 || r.InputBytes <= 0 {
			t.Fatalf("%+v", r)
		}
	}
	for _, f := range []string{"nexmark.csv", "nexmark.svg"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
