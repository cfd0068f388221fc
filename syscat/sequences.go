package syscat

import (
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// sequenceRows is pg_sequence: one row per sequence.
func sequenceRows(env *Env) []types.Row {
	var out []types.Row
	for _, r := range env.Relations {
		if s := r.Sequence; r.Kind == catalog.KindSequence && s != nil {
			out = append(out, types.Row{RelationOID(r.ID), int64(s.Type.OID()), s.Start, s.Increment, s.Max, s.Min, s.Cache, s.Cycle})
		}
	}
	return out
}

// sequencesView is pg_sequences: last_value is NULL until the first
// nextval (is_called false), as in PostgreSQL.
func sequencesView(env *Env) []types.Row {
	var out []types.Row
	for _, r := range env.Relations {
		s := r.Sequence
		if r.Kind != catalog.KindSequence || s == nil {
			continue
		}
		var last types.Datum
		if env.SequenceValue != nil {
			if v, called, ok := env.SequenceValue(r.ID); ok && called {
				last = v
			}
		}
		out = append(out, types.Row{r.SchemaName(), r.Name, userName(env), s.Type.SQLName(), s.Start, s.Min, s.Max, s.Increment, s.Cycle, s.Cache, last})
	}
	return out
}

// isIdentity is information_schema.columns.is_identity.
func isIdentity(c catalog.Column) string {
	if c.Identity != "" {
		return "YES"
	}
	return "NO"
}

// identityGeneration is information_schema.columns.identity_generation.
func identityGeneration(c catalog.Column) types.Datum {
	switch c.Identity {
	case "a":
		return "ALWAYS"
	case "d":
		return "BY DEFAULT"
	}
	return nil
}
