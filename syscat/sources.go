package syscat

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// sourceRows are rockstream_catalog.sources: every source with its kind
// and definition, and for change-data-capture sources (and the tables
// they mirror) the state, slot, positions and lag in bytes of WAL; for
// KAFKA sources (and their dead-letter relations) the state, lag in
// records and the count of records that failed to decode.
func sourceRows(env *Env) []types.Row {
	byID := make(map[catalog.ID]*catalog.Relation, len(env.Relations))
	for _, r := range env.Relations {
		byID[r.ID] = r
	}
	var out []types.Row
	for _, r := range env.Relations {
		if r.Kind != catalog.KindSource {
			continue
		}
		kind, definition, statusOf := sourceKind(r), redactPasswords(r.SQL), r.Name
		if up := r.Upstream; up != nil {
			kind = "postgres table"
			parent := "?"
			src, ok := byID[up.Source]
			if ok {
				parent = src.Name
			}
			definition = fmt.Sprintf("mirror of %s.%s (source %s)", up.Schema, up.Table, parent)
			if ok && sourceKind(src) == "kafka" {
				kind, definition = "kafka errors", fmt.Sprintf("records of source %s that failed to decode", parent)
			}
			statusOf = parent
		}
		row := types.Row{r.Name, kind, definition, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
		if st, ok := env.Sources[statusOf]; ok && st.Kafka {
			row[3], row[8], row[9] = st.State, int64(st.Rows), int64(st.Errors)
			if st.Error != "" {
				row[10] = st.Error
			}
			row[11], row[12] = int64(st.LagRecords), int64(st.BadRecords)
		} else if ok && (kind == "postgres" || r.Upstream != nil) {
			row[3], row[4] = st.State, st.Slot
			if st.UpstreamLSN != 0 {
				row[5] = formatLSN(st.UpstreamLSN)
			}
			if st.CommittedLSN != 0 {
				row[6] = formatLSN(st.CommittedLSN)
			}
			if st.UpstreamLSN >= st.CommittedLSN && st.CommittedLSN != 0 {
				row[7] = int64(st.UpstreamLSN - st.CommittedLSN)
			}
			row[8], row[9] = int64(st.Rows), int64(st.Errors)
			if st.Error != "" {
				row[10] = st.Error
			}
		} else if kind != "postgres" && kind != "kafka" && r.Upstream == nil {
			row[3] = "RUNNING"
		}
		out = append(out, row)
	}
	return out
}

// sourceKind names what a source reads from its definition.
func sourceKind(r *catalog.Relation) string {
	sql := strings.ToLower(r.SQL)
	switch {
	case strings.Contains(sql, "from postgres"):
		return "postgres"
	case strings.Contains(sql, "from nexmark"):
		return "nexmark"
	case strings.Contains(sql, "from kafka"):
		return "kafka"
	}
	return "generate rows"
}

// passwordPatterns find passwords in connection strings: key=value
// (password=secret) and URLs (postgres://user:secret@host).
var passwordPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|[^\s']+)`),
	regexp.MustCompile(`(://[^:/@\s']+:)([^@\s']+)(@)`),
}

// redactPasswords hides the passwords of connection strings in a source's
// definition: the catalog is readable by every role.
func redactPasswords(sql string) string {
	sql = passwordPatterns[0].ReplaceAllString(sql, "${1}********")
	return passwordPatterns[1].ReplaceAllString(sql, "${1}********${3}")
}

// formatLSN prints an LSN as PostgreSQL does (pg_lsn: high/low in hex).
func formatLSN(lsn uint64) string { return fmt.Sprintf("%X/%X", lsn>>32, uint32(lsn)) }
