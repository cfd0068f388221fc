package syscat

import "github.com/rockstream/rockstream/ivm/types"

// sinkRows are rockstream_catalog.sinks: every sink with its view,
// topic, format and definition, its state, the last epoch it committed
// downstream, what this process delivered, its target (topic or table)
// and its lag in epochs.
func sinkRows(env *Env) []types.Row {
	out := make([]types.Row, 0, len(env.Sinks))
	for _, s := range env.Sinks {
		row := types.Row{s.Name, s.Kind, s.View, nil, s.Format, redactPasswords(s.Definition), nil, nil,
			int64(s.Records), int64(s.Transactions), int64(s.Errors), nil, nil, nil}
		if s.Topic != "" {
			row[3] = s.Topic
		}
		if s.Target != "" {
			row[12] = s.Target
		}
		if s.HasLag {
			row[13] = int64(s.Lag)
		}
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
