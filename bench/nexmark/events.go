package nexmark

import gen "github.com/rockstream/rockstream/actors/source/nexmark"

// The generator lives in actors/source/nexmark (the NEXMARK source uses it
// too); these names keep the benchmark's API.
type (
	Generator = gen.Generator
	Event     = gen.Event
	Kind      = gen.Kind
	TimeMode  = gen.TimeMode
	Person    = gen.Person
	Auction   = gen.Auction
	Bid       = gen.Bid
)

// Event kinds and time modes (see actors/source/nexmark).
const (
	KindPerson  = gen.KindPerson
	KindAuction = gen.KindAuction
	KindBid     = gen.KindBid
	FelderaTime = gen.FelderaTime
	FlinkTime   = gen.FlinkTime
)

// KindOf returns event n's kind.
func KindOf(n int64) Kind { return gen.KindOf(n) }
