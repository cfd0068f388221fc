package errcode

// SQL compiler codes (owner: ivm/sql). RS-2001 is the spec's number; the
// PostgreSQL-class semantic errors live in the planner block RS-2100–2199 so
// that clients see PostgreSQL's SQLSTATEs with a stable RS code beside them.
var (
	UnsupportedSQLConstruct = Register("RS-2001", "view.unsupported_sql_construct", "0A000",
		"Rewrite the view without the named construct (docs/sql.md lists what materialized views support), or run the query ad hoc instead of materializing it.")

	SQLSyntaxError = Register("RS-2101", "sql.syntax_error", "42601",
		"Fix the SQL near the reported position; RockStream accepts PostgreSQL 15 syntax plus the statements in docs/sql.md.")
	SQLUndefinedTable = Register("RS-2102", "sql.undefined_table", "42P01",
		"Check the relation name and that it exists in this namespace (\\d in psql lists relations; from any client: SELECT table_name FROM information_schema.tables).")
	SQLUndefinedColumn = Register("RS-2103", "sql.undefined_column", "42703",
		"Check the column name and its table qualifier; quoted identifiers are case sensitive.")
	SQLAmbiguousColumn = Register("RS-2104", "sql.ambiguous_column", "42702",
		"Qualify the column with its table name or alias.")
	// The expression engine's codes (codes_expr.go) serve the binder too.
	SQLDatatypeMismatch  = DatatypeMismatch
	SQLUndefinedFunction = UndefinedFunction
	SQLGroupingError     = Register("RS-2107", "sql.grouping_error", "42803",
		"Add the column to GROUP BY or use it inside an aggregate function.")
	SQLCardinalityViolation = Register("RS-2108", "sql.cardinality_violation", "21000",
		"Make the subquery return at most one row (add a filter, an aggregate or LIMIT 1).")
	SQLFeatureNotSupported = Register("RS-2109", "sql.feature_not_supported", "0A000",
		"Rewrite the statement without the named feature; docs/sql.md lists what is supported.")
	// SQLSemanticError covers the remaining PostgreSQL 42xxx analysis errors;
	// each use sets the precise SQLSTATE with WithSQLState.
	SQLSemanticError = Register("RS-2110", "sql.semantic_error", "42000",
		"Fix the statement as the message describes.")
	SQLIndeterminateDatatype = Register("RS-2111", "sql.indeterminate_datatype", "42P18",
		"Add an explicit cast to the parameter, e.g. $1::int.")
	SQLDuplicateColumn = Register("RS-2112", "sql.duplicate_column", "42701",
		"Give every column a distinct name.")
	SQLInvalidParameterValue = Register("RS-2113", "sql.invalid_parameter_value", "22023",
		"Check the option's value against docs/sql.md.")
	// SQLStatementTooComplex is a statement nested deeper than the parser's
	// depth guard allows (PostgreSQL's "stack depth limit exceeded").
	SQLStatementTooComplex = Register("RS-2114", "sql.statement_too_complex", "54001",
		"Simplify the statement: split very long chains of operators or UNIONs (thousands of terms) into several statements, a VALUES list or an IN list, or nest less deeply.")
	// UniqueIndexNotEnforced refuses CREATE UNIQUE INDEX on a relation
	// whose indexes are not kept as structures (a table without a primary
	// key, a materialized view, a source) unless it is on exactly the
	// primary key: the uniqueness would not be enforced.
	UniqueIndexNotEnforced = Register("RS-2115", "index.unique_not_enforced", "0A000",
		"Give the table a PRIMARY KEY (ALTER TABLE ... ADD PRIMARY KEY), then create the unique index, which is then enforced; or create a non-unique index.")
)
