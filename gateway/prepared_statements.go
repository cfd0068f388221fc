package gateway

import (
	"sort"

	"github.com/rockstream/rockstream/ivm/types"
)

// executeRequest builds an ExecuteRequest carrying the session's settings
// and its prepared statements (for pg_prepared_statements).
func (c *conn) executeRequest(stmt *Statement, params []types.Datum) ExecuteRequest {
	return ExecuteRequest{Statement: stmt, Params: params, Settings: c.settings, PreparedStatements: c.preparedStatements, Notify: c.queueNotify}
}

// preparedStatements lists the named prepared statements, by name (the
// unnamed statement is not shown, as in PostgreSQL).
func (c *conn) preparedStatements() []PreparedStatementInfo {
	out := make([]PreparedStatementInfo, 0, len(c.stmts))
	for name, p := range c.stmts { //lint:maprange sorted below
		if name == "" {
			continue
		}
		out = append(out, PreparedStatementInfo{Name: name, Statement: p.text, PrepareTime: p.prepareTime,
			ParamTypes: append([]types.Type(nil), p.paramTypes...), FromSQL: p.fromSQL, Executions: p.executions})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
