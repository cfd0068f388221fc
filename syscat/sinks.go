package syscat

import "github.com/rockstream/rockstream/ivm/types"

// sinkRows are rockstream_catalog.sinks: every sink with its view,
// topic, format and definition, its state, the last epoch it committed to
// the topic, and what this process delivered.
func sinkRows(env *Env) []types.Row {
	out := make([]types.Row, 0, len(env.Sinks))
	for _, s := range env.Sinks {
		row := types.Row{s.Name, s.Kind, s.View, s.Topic, s.Format, redactPasswords(s.Definition), nil, nil,
			int64(s.Records), int64(s.Transactions), int64(s.Errors), nil}
		if s.State != "" {
			row[6] = s.State
		}
		if s.DeliveredEpoch != 0 {
			row[7] = int64(s.DeliveredEpoch)
		}
		if s.Error != "" {
			row[11] = s.Error
		}
		out = append(out, row)
	}
	return out
}
