// Package nexmark is the deterministic Nexmark event generator, shared by
// the NEXMARK source connector (actors/source) and the benchmark
// (bench/nexmark): a port of the standard generator (Feldera's defaults,
// which mirror Flink nexmark v0.2.0).
//
// Generator rules (see /work/shared/research/perf.md §2):
//   - event number n: n mod 50 picks the kind, person:auction:bid = 1:3:46;
//   - ids derive from the event number (first person/auction id 1000,
//     categories 10..14), with 1,000 active people and 100 in-flight
//     auctions, new person ids up to 10 ahead;
//   - hot keys: a bid goes to the hot auction with probability 1/2, the
//     bidder is hot with probability 3/4, an auction's seller is hot with
//     probability 3/4;
//   - price ceil(10^(U·6)·100) cents; reserve = initial bid + another price;
//   - 99% of bids use one of 4 hot channels, 1% use channel-N (N < 10,000),
//     whose URL carries channel_id 90% of the time;
//   - people live in one of 6 states and 10 cities;
//   - event time: Feldera mode is base + 10 ms·n, Flink mode is
//     base + n·interEventDelay with a 10M events/s first-event rate.
//
// Every event draws from its own PRNG seeded by (seed, event number), so the
// stream is identical whatever the batching.
package nexmark

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Generator constants (Feldera/Flink defaults).
const (
	proportionDenominator = 50
	personProportion      = 1
	auctionProportion     = 3
	firstPersonID         = 1000
	firstAuctionID        = 1000
	firstCategoryID       = 10
	numCategories         = 5
	numActivePeople       = 1000
	numInFlightAuctions   = 100
	personIDLead          = 10
	auctionIDLead         = 10
	hotAuctionRatio       = 2
	hotBiddersRatio       = 4
	hotSellersRatio       = 4
	hotRoundAuction       = 100
	hotRoundPerson        = 100
	channelsNumber        = 10_000
	avgPersonBytes        = 200
	avgAuctionBytes       = 500
	avgBidBytes           = 100
)

// TimeMode selects the event-time spacing.
type TimeMode int

const (
	// FelderaTime spaces events 10 ms apart (Feldera's generator).
	FelderaTime TimeMode = iota
	// FlinkTime derives spacing from a 10M events/s first-event rate with
	// one generator (Flink nexmark): 0.1 µs apart.
	FlinkTime
)

// BaseTime is the event time of event 0 (fixed: the stream is deterministic).
var BaseTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) //lint:immutable fixed epoch of the generated stream

var (
	usStates   = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}                                                                               //lint:immutable generator vocabulary
	usCities   = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"} //lint:immutable generator vocabulary
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}                   //lint:immutable generator vocabulary
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}                           //lint:immutable generator vocabulary
	hotChannel = []string{"Google", "Facebook", "Baidu", "Apple"}                                                                           //lint:immutable generator vocabulary
	hotURLs    = []string{                                                                                                                  //lint:immutable generator vocabulary
		"https://www.nexmark.com/googl/item.htm?query=1",
		"https://www.nexmark.com/faceb/item.htm?query=1",
		"https://www.nexmark.com/baidu/item.htm?query=1",
		"https://www.nexmark.com/apple/item.htm?query=1",
	}
)

// Kind is an event's kind.
type Kind int

const (
	KindPerson Kind = iota
	KindAuction
	KindBid
)

// Person is a person event.
type Person struct {
	ID         int64
	Name       string
	Email      string
	CreditCard string
	City       string
	State      string
	DateTime   time.Time
	Extra      string
}

// Auction is an auction event.
type Auction struct {
	ID          int64
	ItemName    string
	Description string
	InitialBid  int64
	Reserve     int64
	DateTime    time.Time
	Expires     time.Time
	Seller      int64
	Category    int64
	Extra       string
}

// Bid is a bid event.
type Bid struct {
	Auction  int64
	Bidder   int64
	Price    int64
	Channel  string
	URL      string
	DateTime time.Time
	Extra    string
}

// Event is one generated event; exactly one of the pointers is set.
type Event struct {
	Kind    Kind
	Person  *Person
	Auction *Auction
	Bid     *Bid
}

// Generator produces the deterministic Nexmark stream.
type Generator struct {
	Seed uint64
	Mode TimeMode
}

// rng is splitmix64: tiny, fast and seedable per event.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a uniform value in [0, n) (n > 0).
func (r *rng) intn(n int64) int64 { return int64(r.next() % uint64(n)) }

func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// KindOf returns the kind of event number n.
func KindOf(n int64) Kind {
	off := n % proportionDenominator
	switch {
	case off < personProportion:
		return KindPerson
	case off < personProportion+auctionProportion:
		return KindAuction
	default:
		return KindBid
	}
}

// Timestamp returns event n's event time.
func (g Generator) Timestamp(n int64) time.Time {
	if g.Mode == FlinkTime {
		return BaseTime.Add(time.Duration(n) * 100 * time.Nanosecond)
	}
	return BaseTime.Add(time.Duration(n) * 10 * time.Millisecond)
}

// interEventDelay is the event-time distance between consecutive events.
func (g Generator) interEventDelay() time.Duration {
	if g.Mode == FlinkTime {
		return 100 * time.Nanosecond
	}
	return 10 * time.Millisecond
}

func lastBase0PersonID(n int64) int64 {
	epoch, off := n/proportionDenominator, n%proportionDenominator
	if off >= personProportion {
		off = personProportion - 1
	}
	return epoch*personProportion + off
}

func lastBase0AuctionID(n int64) int64 {
	epoch, off := n/proportionDenominator, n%proportionDenominator
	switch {
	case off < personProportion:
		epoch--
		off = auctionProportion - 1
	case off >= personProportion+auctionProportion:
		off = auctionProportion - 1
	default:
		off -= personProportion
	}
	return epoch*auctionProportion + off
}

func nextBase0PersonID(n int64, r *rng) int64 {
	numPeople := lastBase0PersonID(n) + 1
	active := min(numPeople, numActivePeople)
	return numPeople - active + r.intn(active+personIDLead)
}

func nextBase0AuctionID(n int64, r *rng) int64 {
	maxA := lastBase0AuctionID(n)
	minA := max(maxA-numInFlightAuctions, 0)
	return minA + r.intn(maxA-minA+1+auctionIDLead)
}

// nextPrice is ceil(10^(U·6)·100): log-uniform 100 .. 10^8 cents.
func nextPrice(r *rng) int64 { return int64(math.Ceil(math.Pow(10, r.float()*6) * 100)) }

func nextString(r *rng, n int) string {
	// NB: a Builder hands its buffer to the string (one allocation, not a
	// buffer plus its copy); the draws are unchanged, so are the strings.
	var b strings.Builder
	b.Grow(n)
	for range n {
		if x := r.intn(13); x == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte(byte('a' + r.intn(26)))
		}
	}
	return b.String()
}

// nextExtra pads an event to the target average size (±20%).
func nextExtra(r *rng, current, avg int) string {
	if current > avg {
		return ""
	}
	want := avg - current
	delta := int(math.Round(float64(want) * 0.2))
	return nextString(r, want-delta+int(r.intn(int64(2*delta+1))))
}

// Event generates event number n.
func (g Generator) Event(n int64) Event {
	r := &rng{s: g.Seed*0x9e3779b97f4a7c15 ^ uint64(n)*0xd1342543de82ef95}
	r.next()
	ts := g.Timestamp(n)
	switch KindOf(n) {
	case KindPerson:
		id := lastBase0PersonID(n) + firstPersonID
		name := firstNames[r.intn(int64(len(firstNames)))] + " " + lastNames[r.intn(int64(len(lastNames)))]
		email := nextString(r, 7) + "@" + nextString(r, 5) + ".com"
		cc := strconv.Itoa(int(1000+r.intn(9000))) + " " + strconv.Itoa(int(1000+r.intn(9000))) + " " +
			strconv.Itoa(int(1000+r.intn(9000))) + " " + strconv.Itoa(int(1000+r.intn(9000)))
		p := &Person{ID: id, Name: name, Email: email, CreditCard: cc,
			City: usCities[r.intn(int64(len(usCities)))], State: usStates[r.intn(int64(len(usStates)))], DateTime: ts}
		p.Extra = nextExtra(r, 8+len(name)+len(email)+len(cc)+len(p.City)+len(p.State)+8, avgPersonBytes)
		return Event{Kind: KindPerson, Person: p}
	case KindAuction:
		id := lastBase0AuctionID(n) + firstAuctionID
		var seller int64
		if r.intn(hotSellersRatio) > 0 {
			seller = (lastBase0PersonID(n) / hotRoundPerson) * hotRoundPerson
		} else {
			seller = nextBase0PersonID(n, r)
		}
		seller += firstPersonID
		initial := nextPrice(r)
		// Auction length: 1 + U[0, 2·horizon), the horizon being the event
		// time of numInFlightAuctions·50/3 events.
		horizon := int64(g.interEventDelay()) * numInFlightAuctions * proportionDenominator / auctionProportion
		length := time.Duration(1 + r.intn(2*horizon))
		a := &Auction{ID: id, ItemName: nextString(r, 20), Description: nextString(r, 100),
			InitialBid: initial, Reserve: initial + nextPrice(r), DateTime: ts, Expires: ts.Add(length),
			Seller: seller, Category: firstCategoryID + r.intn(numCategories)}
		a.Extra = nextExtra(r, 8+len(a.ItemName)+len(a.Description)+8+8+8+8+8+8, avgAuctionBytes)
		return Event{Kind: KindAuction, Auction: a}
	default:
		var auction, bidder int64
		if r.intn(hotAuctionRatio) > 0 {
			auction = nextBase0AuctionID(n, r)
		} else {
			auction = (lastBase0AuctionID(n) / hotRoundAuction) * hotRoundAuction
		}
		auction += firstAuctionID
		if r.intn(hotBiddersRatio) > 0 {
			bidder = (lastBase0PersonID(n)/hotRoundPerson)*hotRoundPerson + 1
		} else {
			bidder = nextBase0PersonID(n, r)
		}
		bidder += firstPersonID
		b := &Bid{Auction: auction, Bidder: bidder, Price: nextPrice(r), DateTime: ts}
		if r.intn(100) > 0 {
			i := r.intn(int64(len(hotChannel)))
			b.Channel, b.URL = hotChannel[i], hotURLs[i]
		} else {
			ch := r.intn(channelsNumber)
			b.Channel = "channel-" + strconv.FormatInt(ch, 10)
			b.URL = "https://www.nexmark.com/" + nextString(r, 5) + "/" + nextString(r, 5) + "/" + nextString(r, 5) + "/item.htm?query=1"
			if r.intn(10) > 0 {
				b.URL += "&channel_id=" + strconv.FormatUint(uint64(reverseBits32(uint32(ch))), 10)
			}
		}
		b.Extra = nextExtra(r, 8+8+8+len(b.Channel)+len(b.URL)+8, avgBidBytes)
		return Event{Kind: KindBid, Bid: b}
	}
}

func reverseBits32(x uint32) uint32 {
	var y uint32
	for i := 0; i < 32; i++ {
		y = y<<1 | x&1
		x >>= 1
	}
	return y
}
