package ddl

import (
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
)

// NexmarkSource is the generator of CREATE SOURCE name FROM NEXMARK (...):
// the rows of one Nexmark table (person, auction or bid) from the
// deterministic event stream of (Seed, Mode). Three sources with the same
// options carry one consistent stream. RatePerSecond (CreateSource) counts
// events of the whole stream, so the three tables advance together.
//
//	CREATE SOURCE bid FROM NEXMARK (events = 1000000, rate = 100000, seed = 1)
//	CREATE SOURCE b2 FROM NEXMARK (table = 'bid', time = 'flink')
type NexmarkSource struct {
	Table string
	// Events stops the stream after that many events (0: unbounded).
	Events int64
	Seed   uint64
	// FlinkTime spaces events 0.1 µs apart instead of 10 ms (Feldera).
	FlinkTime bool
}

// nexmarkTables are the tables' columns, as bench/nexmark's CREATE TABLEs.
//
//lint:immutable a constant table.
var nexmarkTables = map[string][][2]string{
	"person": {{"id", "bigint"}, {"name", "varchar"}, {"email_address", "varchar"}, {"credit_card", "varchar"},
		{"city", "varchar"}, {"state", "varchar"}, {"date_time", "timestamp(3)"}, {"extra", "varchar"}},
	"auction": {{"id", "bigint"}, {"item_name", "varchar"}, {"description", "varchar"}, {"initial_bid", "bigint"},
		{"reserve", "bigint"}, {"date_time", "timestamp(3)"}, {"expires", "timestamp(3)"}, {"seller", "bigint"},
		{"category", "bigint"}, {"extra", "varchar"}},
	"bid": {{"auction", "bigint"}, {"bidder", "bigint"}, {"price", "bigint"}, {"channel", "varchar"},
		{"url", "varchar"}, {"date_time", "timestamp(3)"}, {"extra", "varchar"}},
}

// nexmarkRateDefault is the event rate without a rate option (events/s).
const nexmarkRateDefault = 10_000

func nexmarkSource(cs *parse.CreateSource, out *CreateSource) error {
	ns := &NexmarkSource{Table: out.Name[strings.LastIndex(out.Name, ".")+1:]}
	bad := func(format string, args ...any) error {
		return errcode.New(errcode.SQLInvalidParameterValue, format, args...)
	}
	integer := func(o parse.SourceOption) (int64, error) {
		n, err := strconv.ParseInt(o.Value.Text, 10, 64)
		if err != nil || o.Value.IsString || n < 0 {
			return 0, bad("NEXMARK option %s must be a non-negative integer, got %s", o.Key, o.Value.Text)
		}
		return n, nil
	}
	seen := map[string]bool{}
	var watermark string
	for _, o := range cs.Nexmark {
		if seen[o.Key] {
			return bad("NEXMARK option %s given twice", o.Key)
		}
		seen[o.Key] = true
		var err error
		switch o.Key {
		case "table":
			ns.Table = strings.ToLower(o.Value.Text)
		case "watermark":
			watermark = o.Value.Text
		case "events":
			ns.Events, err = integer(o)
		case "rate":
			out.RatePerSecond, err = integer(o)
		case "seed":
			var n int64
			n, err = integer(o)
			ns.Seed = uint64(n)
		case "time":
			switch strings.ToLower(o.Value.Text) {
			case "feldera":
			case "flink":
				ns.FlinkTime = true
			default:
				return bad("NEXMARK option time must be 'feldera' or 'flink', got %s", o.Value.Text)
			}
		default:
			return bad("unknown NEXMARK option %s (have table, events, rate, seed, time, watermark)", o.Key)
		}
		if err != nil {
			return err
		}
	}
	if !seen["rate"] {
		out.RatePerSecond = nexmarkRateDefault
	}
	if out.RatePerSecond == 0 {
		return bad("NEXMARK option rate must be positive")
	}
	cols, ok := nexmarkTables[ns.Table]
	if !ok {
		return bad("NEXMARK source %s: table must be person, auction or bid (name the source after one, or give table = '...')", out.Name)
	}
	for _, c := range cols {
		t, err := sourceColumnType(c[0], c[1])
		if err != nil {
			return err
		}
		out.Columns = append(out.Columns, SourceColumn{Column: catalog.Column{Name: c[0], Type: t}})
	}
	if seen["watermark"] {
		cols := make([]catalog.Column, len(out.Columns))
		for i, c := range out.Columns {
			cols[i] = c.Column
		}
		var err error
		if out.Watermark, err = watermarkOption(watermark, cols); err != nil {
			return err
		}
	}
	out.Nexmark = ns
	return nil
}
