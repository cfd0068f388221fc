package engine

import (
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/syscat"
)

// preparedStatementRows turns the gateway's list of the connection's
// named statements into pg_prepared_statements rows. RockStream binds a
// statement once and runs that plan every time, so every execution counts
// as a generic plan (PostgreSQL tries custom plans first for statements
// with parameters; its counters differ there).
func preparedStatementRows(list func() []gateway.PreparedStatementInfo) []syscat.PreparedStatement {
	if list == nil {
		return nil
	}
	infos := list()
	out := make([]syscat.PreparedStatement, len(infos))
	for i, p := range infos {
		out[i] = syscat.PreparedStatement{Name: p.Name, Statement: p.Statement, PrepareTime: int64(types.TimestampTZOf(p.PrepareTime)),
			ParamTypes: p.ParamTypes, FromSQL: p.FromSQL, GenericPlans: p.Executions}
	}
	return out
}

// regArrayValues sends regtype[] result values (pg_prepared_statements'
// parameter_types) as type names in text and oids in binary, as
// PostgreSQL's regtypeout does for each element.
func regArrayValues(cols []plan.Column, rows []types.Row) {
	for c, col := range cols {
		if col.Type.Kind != types.KindArray || col.Type.Elem == nil || col.Type.Elem.Kind != types.KindRegType {
			continue
		}
		for _, r := range rows {
			a, ok := r[c].(types.Array)
			if !ok {
				continue
			}
			vals := make([]types.Datum, len(a.Values))
			for i, v := range a.Values {
				oid, isOID := v.(int64)
				if !isOID {
					vals[i] = v
					continue
				}
				name := "???"
				if t, known := types.FromOID(uint32(oid)); known {
					name = t.SQLName()
				}
				vals[i] = gateway.RegValue{OID: oid, Name: name}
			}
			r[c] = types.Array{Elem: a.Elem, Values: vals}
		}
	}
}
