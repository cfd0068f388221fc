// Package source holds RockStream's built-in source connectors. The NEXMARK
// source (CREATE SOURCE bid FROM NEXMARK (events = …, rate = …, seed = …))
// runs the same actor over actors/source/nexmark's event stream: its offset
// counts events, and it commits the rows of its own table. The row
// generator (spec §13.5.0) produces synthetic rows at a fixed rate with
// deterministic values: row i of a source is a pure function of (source
// id, i), and the shard stores the source's offset in the same batch as its
// rows, so a restarted generator continues exactly where the last durable
// commit ended — no gaps, no duplicates.
//
//	Started ──GetSourceOffset──► shard
//	   ◄── SourceOffset{n} ──┘
//	tick (every TickEvery) ──► rows n+1..due ──Commit{rows, Offset}──► shard
//	   ◄── Committed ──┘ (one commit in flight at most: backpressure)
package source

import (
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/actors/source/nexmark"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// Config configures a generator actor.
type Config struct {
	// CatalogVersion is a catalog version holding the source: its commits
	// name it (the shard fetches that catalog if it is behind).
	CatalogVersion uint64
	Source         catalog.ID
	Spec           *ddl.CreateSource
	// TickEvery is the generation cadence. Simulation range: 1ms..1s.
	TickEvery time.Duration
	// RowsPerCommitMax bounds one commit (STYLE.md 10): a generator that
	// fell behind catches up over several commits instead of one huge one.
	RowsPerCommitMax int
	// Router addresses the shard the source commits to.
	Router shard.Router
}

const (
	tickEveryDefault        = 100 * time.Millisecond
	rowsPerCommitMaxDefault = 10_000
)

// ActorID is the generator actor's id for a source.
func ActorID(source catalog.ID) runtime.ActorID {
	return runtime.ActorID(fmt.Sprintf("source/%s", source))
}

type tick struct{}

// Generator is the row generator actor.
type Generator struct {
	cfg Config
	// offset is the number of rows durably committed.
	offset uint64
	// started is when generation (re)started, and base the offset then:
	// rows due = base + elapsed × rate.
	started  time.Time
	base     uint64
	inFlight bool
	// pending is the offset the in-flight commit will establish.
	pending uint64
	ready   bool
	// ticking: the tick chain runs (started once).
	ticking bool
	columns []generatorColumn
	failed  error
	// nexmark is set for a FROM NEXMARK source.
	nexmark *nexmarkTable
	// behind: the last commit was cut by RowsPerCommitMax.
	behind bool
	// request numbers the generator's requests to the shard: a reply to
	// an earlier one is stale and ignored. sentAt is when the in-flight
	// commit was sent.
	request uint64
	sentAt  time.Time
}

// commitReplyTimeout: a commit unanswered for this long was lost (a full
// mailbox drops messages) or is very slow: the generator reads its offset
// again and goes on from there. The shard refuses a commit that does not
// continue its stored offset (SourceOffset.From), so a late one never
// writes rows twice.
const commitReplyTimeout = 10 * time.Second

// nexmarkTable generates one Nexmark table's rows from the event stream.
type nexmarkTable struct {
	gen    nexmark.Generator
	kind   nexmark.Kind
	events int64 // 0: unbounded
}

// New returns a generator factory.
func New(cfg Config) runtime.Factory {
	if cfg.TickEvery <= 0 {
		cfg.TickEvery = tickEveryDefault
	}
	if cfg.RowsPerCommitMax <= 0 {
		cfg.RowsPerCommitMax = rowsPerCommitMaxDefault
	}
	return func() runtime.Actor { return &Generator{cfg: cfg} }
}

// Receive implements runtime.Actor.
func (g *Generator) Receive(ctx runtime.Context, msg runtime.Message) {
	switch m := msg.(type) {
	case runtime.Started:
		if nx := g.cfg.Spec.Nexmark; nx != nil {
			kind, ok := nexmark.TableKind(nx.Table)
			if !ok {
				g.failed = errcode.New(errcode.InternalError, "NEXMARK source of unknown table %q", nx.Table)
				ctx.Logger().Error("generator cannot start", "err", g.failed)
				return
			}
			g.nexmark = &nexmarkTable{gen: nexmark.Generator{Seed: nx.Seed}, kind: kind, events: nx.Events}
			if nx.FlinkTime {
				g.nexmark.gen.Mode = nexmark.FlinkTime
			}
			g.askOffset(ctx)
			return
		}
		cols, err := compileColumns(g.cfg.Spec)
		if err != nil {
			g.failed = err
			ctx.Logger().Error("generator cannot start", "err", err)
			return
		}
		g.columns = cols
		g.askOffset(ctx)
	case runtime.Stopping:
	case runtime.Response:
		if m.ID != g.request {
			return // the answer to a request given up on
		}
		g.receive(ctx, m.Msg)
	case error:
		// The runtime's answer to a request it could not deliver.
		g.receive(ctx, m)
	case tick:
		switch {
		case !g.ready:
			// The offset request failed or was lost (e.g. the shard was
			// still opening): ask again.
			g.askOffset(ctx)
		case g.inFlight && ctx.Now().Sub(g.sentAt) >= commitReplyTimeout:
			ctx.Logger().Warn("generator commit unanswered; reading the source offset again", "offset", g.offset, "waited", ctx.Now().Sub(g.sentAt))
			g.inFlight, g.ready = false, false
			g.askOffset(ctx)
		default:
			g.generate(ctx)
		}
		ctx.After(g.cfg.TickEvery, tick{})
	default:
		panic(fmt.Sprintf("source: unexpected message %T", msg))
	}
}

// askOffset asks the shard for the source's stored offset.
func (g *Generator) askOffset(ctx runtime.Context) {
	g.request++
	ctx.Send(g.shard(), runtime.Request{ID: g.request, Msg: shard.GetSourceOffset{Source: g.cfg.Source}})
}

// receive handles the shard's answer to the current request.
func (g *Generator) receive(ctx runtime.Context, msg runtime.Message) {
	switch m := msg.(type) {
	case shard.SourceOffset:
		if g.ready {
			return
		}
		g.offset, g.ready = m.Offset, true
		if g.started.IsZero() {
			g.base, g.started = m.Offset, ctx.Now()
		}
		g.startTicking(ctx)
	case shard.Committed:
		g.inFlight = false
		g.offset = g.pending
		// Capped by RowsPerCommitMax: continue at once rather than at
		// the next tick.
		if g.behind {
			g.generate(ctx)
		}
	case error:
		// A failed commit (e.g. the shard is recovering) or offset
		// request: read the offset again on the next tick and go on
		// from it (the same rows, if the commit did not land).
		wasReady := g.ready
		g.inFlight, g.ready = false, false
		ctx.Logger().Warn("generator request failed; retrying", "err", m, "committing", wasReady)
		// NB: a failed offset request must be retried too, or the
		// generator never starts (found by sim/system, seed 18).
		g.startTicking(ctx)
	default:
		panic(fmt.Sprintf("source: unexpected reply %T", msg))
	}
}

// startTicking starts the one tick chain (idempotent).
func (g *Generator) startTicking(ctx runtime.Context) {
	if !g.ticking {
		g.ticking = true
		ctx.After(g.cfg.TickEvery, tick{})
	}
}

func (g *Generator) generate(ctx runtime.Context) {
	if !g.ready || g.inFlight || g.cfg.Spec.RatePerSecond <= 0 {
		return
	}
	elapsed := ctx.Now().Sub(g.started)
	due := g.base + uint64(elapsed.Seconds()*float64(g.cfg.Spec.RatePerSecond))
	if g.nexmark != nil && g.nexmark.events > 0 {
		due = min(due, uint64(g.nexmark.events))
	}
	if due <= g.offset {
		return
	}
	n := min(due-g.offset, uint64(g.cfg.RowsPerCommitMax))
	g.behind = due-g.offset > n
	writes := make([]shard.RowWrite, 0, n)
	for i := g.offset + 1; i <= g.offset+n; i++ {
		if g.nexmark != nil {
			// Offsets count events of the whole stream; this source keeps
			// the rows of its table (event i-1, numbered from 0).
			if nexmark.KindOf(int64(i-1)) == g.nexmark.kind {
				writes = append(writes, shard.RowWrite{Table: g.cfg.Source, Row: g.nexmark.gen.Event(int64(i - 1)).Row()})
			}
			continue
		}
		row, err := g.row(i)
		if err != nil {
			ctx.Logger().Error("generator row failed", "row", i, "err", err)
			return
		}
		writes = append(writes, shard.RowWrite{Table: g.cfg.Source, Row: row})
	}
	g.inFlight = true
	// NB: the offset advances only when the shard acknowledges; until then
	// a crash or a failed commit regenerates the same rows (values depend
	// on the index only).
	g.pending = g.offset + n
	g.request++
	g.sentAt = ctx.Now()
	ctx.Send(g.shard(), runtime.Request{ID: g.request, Msg: shard.Commit{CatalogVersion: g.cfg.CatalogVersion, Writes: writes,
		Offset: &shard.SourceOffset{Source: g.cfg.Source, Offset: g.pending, From: g.offset, FromSet: true}}})
}

// shard is the actor the source's rows and offset commit to, together in
// one batch: the table shard (a source spread over several shards would
// need an offset per shard).
func (g *Generator) shard() runtime.ActorID { return g.cfg.Router.TableActor() }

// Row returns row i (1-based) of the source: a pure function of (source, i).
func (g *Generator) row(i uint64) (types.Row, error) {
	row := make(types.Row, len(g.columns))
	for c, col := range g.columns {
		v, err := col.value(mix(objectSeed(g.cfg.Source), i, uint64(c)), i)
		if err != nil {
			return nil, err
		}
		row[c] = v
	}
	return row, nil
}

// generatorColumn produces one column's values.
type generatorColumn struct {
	t    types.Type
	kind parse.GeneratorKind
	// lo, hi bound UNIFORM over integers scaled by 10^scale.
	lo, hi int64
	scale  int32
	flo    float64
	fhi    float64
	picks  []types.Datum
}

func compileColumns(spec *ddl.CreateSource) ([]generatorColumn, error) {
	out := make([]generatorColumn, len(spec.Columns))
	for i, sc := range spec.Columns {
		gc := generatorColumn{t: sc.Column.Type, kind: sc.Generator}
		switch sc.Generator {
		case parse.GenSequence:
			if !gc.t.Kind.IsInteger() {
				return nil, errcode.New(errcode.InvalidTableDefinition, "GENERATED column %q must be an integer type", sc.Column.Name)
			}
		case parse.GenUniform:
			if len(sc.Args) != 2 {
				return nil, errcode.New(errcode.InvalidTableDefinition, "UNIFORM for column %q needs two bounds", sc.Column.Name)
			}
			switch {
			case gc.t.Kind.IsInteger() || gc.t.Kind == types.KindNumeric:
				if gc.t.Kind == types.KindNumeric && gc.t.Typmod >= 4 {
					gc.scale = (gc.t.Typmod - 4) & 0xffff
				}
				lo, err := scaled(sc.Args[0].Text, gc.scale)
				if err != nil {
					return nil, err
				}
				hi, err := scaled(sc.Args[1].Text, gc.scale)
				if err != nil {
					return nil, err
				}
				if hi < lo {
					return nil, errcode.New(errcode.InvalidTableDefinition, "UNIFORM bounds of column %q are reversed", sc.Column.Name)
				}
				gc.lo, gc.hi = lo, hi
			case gc.t.Kind == types.KindFloat4 || gc.t.Kind == types.KindFloat8:
				var err error
				if _, err = fmt.Sscan(sc.Args[0].Text, &gc.flo); err == nil {
					_, err = fmt.Sscan(sc.Args[1].Text, &gc.fhi)
				}
				if err != nil {
					return nil, errcode.New(errcode.InvalidTableDefinition, "UNIFORM bounds of column %q are not numbers", sc.Column.Name)
				}
			default:
				return nil, errcode.New(errcode.InvalidTableDefinition, "UNIFORM is for numeric columns; %q is %s", sc.Column.Name, gc.t)
			}
		case parse.GenPick:
			if len(sc.Args) == 0 {
				return nil, errcode.New(errcode.InvalidTableDefinition, "PICK for column %q needs values", sc.Column.Name)
			}
			for _, a := range sc.Args {
				d, err := types.Parse(gc.t, a.Text, time.UTC)
				if err != nil {
					return nil, err
				}
				gc.picks = append(gc.picks, d)
			}
		default:
			return nil, errcode.New(errcode.InvalidTableDefinition, "column %q has no generator", sc.Column.Name)
		}
		out[i] = gc
	}
	return out, nil
}

// scaled parses a decimal literal as an integer times 10^scale.
func scaled(text string, scale int32) (int64, error) {
	d, _, err := apd.NewFromString(text)
	if err != nil {
		return 0, errcode.New(errcode.InvalidTableDefinition, "bound %q is not a number", text)
	}
	var r apd.Decimal
	if _, err := apd.BaseContext.WithPrecision(40).Quantize(&r, d, -scale); err != nil {
		return 0, errcode.New(errcode.InvalidTableDefinition, "bound %q does not fit", text)
	}
	// The value as an integer count of 10^-scale units: the coefficient.
	if !r.Coeff.IsInt64() {
		return 0, errcode.New(errcode.InvalidTableDefinition, "bound %q does not fit", text)
	}
	v := r.Coeff.Int64()
	if r.Negative {
		v = -v
	}
	return v, nil
}

func (c generatorColumn) value(h, index uint64) (types.Datum, error) {
	switch c.kind {
	case parse.GenSequence:
		return int64(index), nil
	case parse.GenPick:
		return c.picks[h%uint64(len(c.picks))], nil
	}
	switch {
	case c.t.Kind.IsInteger():
		return c.lo + int64(h%uint64(c.hi-c.lo+1)), nil
	case c.t.Kind == types.KindNumeric:
		v := c.lo + int64(h%uint64(c.hi-c.lo+1))
		return apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(big.NewInt(v)), -c.scale), nil
	default:
		u := float64(h>>11) / float64(1<<53)
		f := c.flo + u*(c.fhi-c.flo)
		if c.t.Kind == types.KindFloat4 {
			f = float64(float32(f))
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			f = c.flo
		}
		return f, nil
	}
}

// mix is splitmix64 over the inputs: a fixed, well-spread hash so that
// row values are reproducible across runs and restarts.
func mix(parts ...uint64) uint64 {
	var x uint64 = 0x9E3779B97F4A7C15
	for _, p := range parts {
		x ^= p + 0x9E3779B97F4A7C15 + (x << 6) + (x >> 2)
		z := x
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		x = z ^ (z >> 31)
	}
	return x
}

func objectSeed(id catalog.ID) uint64 {
	var n uint64
	for _, b := range id.Object[8:] {
		n = n<<8 | uint64(b)
	}
	return n
}
