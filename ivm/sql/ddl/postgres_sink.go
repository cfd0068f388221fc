package ddl

import (
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/parse"
)

// PostgresSink is the INTO POSTGRES part of CREATE SINK: a view's changes
// written to a table of a PostgreSQL database, each batch of closed
// epochs in one PostgreSQL transaction with the sink's progress row.
type PostgresSink struct {
	// Connection is a libpq connection string or URL of the database.
	Connection string
	// Table names the downstream table as SQL writes it (table,
	// schema.table, "Quoted"); the database resolves it.
	Table string
	// Mode is PostgresSinkUpsert or PostgresSinkAppend.
	Mode string
	// Key names the view's columns that identify a row (upsert only).
	Key []string
	// SinkID is the sink's row in the progress table: given, or drawn at
	// random by CREATE SINK and stored in the sink's definition, so that
	// two deployments writing into one database never share a row.
	SinkID string
}

// postgresSinkIDBytesMax bounds the sink_id option.
const postgresSinkIDBytesMax = 200

// Modes of a POSTGRES sink.
const (
	// PostgresSinkUpsert mirrors the view's rows into the table by key:
	// INSERT ... ON CONFLICT (key) DO UPDATE, DELETE for a key that left
	// the view.
	PostgresSinkUpsert = "upsert"
	// PostgresSinkAppend appends every change as a row: the view's
	// columns, the epoch and the diff (+n inserted, -n deleted copies).
	PostgresSinkAppend = "append"
)

// Columns the rows of an append sink carry after the view's.
const (
	PostgresSinkEpochColumn = "rockstream_epoch"
	PostgresSinkDiffColumn  = "rockstream_diff"
)

func postgresSink(opts []parse.SourceOption) (*PostgresSink, error) {
	unsupported := func(format string, args ...any) error {
		return errcode.New(errcode.ConnectorOptionUnsupported, format, args...)
	}
	ps := &PostgresSink{}
	seen := map[string]bool{}
	for _, o := range opts {
		if seen[o.Key] {
			return nil, unsupported("POSTGRES sink option %s given twice", o.Key)
		}
		seen[o.Key] = true
		if !o.Value.IsString {
			return nil, unsupported("POSTGRES sink option %s must be a string, got %s", o.Key, o.Value.Text)
		}
		switch o.Key {
		case "connection":
			ps.Connection = o.Value.Text
		case "table":
			ps.Table = strings.TrimSpace(o.Value.Text)
		case "mode":
			switch m := strings.ToLower(o.Value.Text); m {
			case PostgresSinkUpsert, PostgresSinkAppend:
				ps.Mode = m
			default:
				return nil, unsupported("POSTGRES sink option mode = '%s' is not supported; use 'upsert' or 'append'", o.Value.Text)
			}
		case "key":
			key, err := sinkKeyOption("POSTGRES", o.Value.Text)
			if err != nil {
				return nil, err
			}
			ps.Key = key
		case "sink_id":
			if o.Value.Text == "" || len(o.Value.Text) > postgresSinkIDBytesMax {
				return nil, unsupported("POSTGRES sink option sink_id must be 1 to %d bytes", postgresSinkIDBytesMax)
			}
			ps.SinkID = o.Value.Text
		default:
			return nil, unsupported("POSTGRES sink option %s is not supported (have connection, table, mode, key, sink_id)", o.Key)
		}
	}
	switch {
	case ps.Connection == "":
		return nil, unsupported("CREATE SINK ... INTO POSTGRES needs option connection = '<connection string>'")
	case ps.Table == "":
		return nil, unsupported("CREATE SINK ... INTO POSTGRES needs option table = '<[schema.]table>'")
	case ps.Mode == "":
		return nil, unsupported("CREATE SINK ... INTO POSTGRES needs option mode = 'upsert' or 'append'")
	case ps.Mode == PostgresSinkUpsert && len(ps.Key) == 0:
		return nil, unsupported("a POSTGRES sink with mode 'upsert' needs option key = '<the view's key columns>'")
	case ps.Mode == PostgresSinkAppend && len(ps.Key) != 0:
		return nil, unsupported("a POSTGRES sink with mode 'append' takes no key option: it appends every change")
	}
	return ps, nil
}
