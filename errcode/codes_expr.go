package errcode

// RS-2060–2069: scalar evaluation (ivm/types, ivm/expr). These codes carry a
// default SQLSTATE; each error overrides it with PostgreSQL's exact SQLSTATE
// (22012 division_by_zero, 22003 numeric_value_out_of_range, ...) via
// WithSQLState, so clients see what PostgreSQL would send.
var (
	// EvaluationError is any data exception raised while evaluating an
	// expression over a row: overflow, division by zero, invalid cast, ...
	EvaluationError = Register("RS-2060", "sql.evaluation_error", "22000",
		"Fix or filter the input rows that make the expression fail (the message names the value), or guard the expression (e.g. NULLIF(x, 0) for a divisor, a CASE for a range check).")
	// InvalidTextInput is a text value that does not parse as its target type.
	InvalidTextInput = Register("RS-2061", "sql.invalid_text_input", "22P02",
		"Write the value in a form PostgreSQL accepts for the target type (e.g. '2024-01-31' for a date, 'true'/'false' for a boolean) or cast it explicitly from a suitable type.")
	// UndefinedFunction is a function or operator that does not exist for the
	// given argument types.
	UndefinedFunction = Register("RS-2062", "sql.undefined_function", "42883",
		"Check the function or operator name and the argument types; add explicit casts so the arguments match a supported signature.")
	// CannotCoerce is a cast between two types that has no conversion.
	CannotCoerce = Register("RS-2063", "sql.cannot_coerce", "42846",
		"Cast through text or a compatible type, or change the column type.")
	// DatatypeMismatch is an expression whose arguments have no common type.
	DatatypeMismatch = Register("RS-2064", "sql.datatype_mismatch", "42804",
		"Add explicit casts so that all branches (CASE, COALESCE, UNION, IN lists) have compatible types.")
	// ValueTooLarge is a value a user's input asks to build beyond
	// PostgreSQL's limits: 1 GB per value, 134217727 array elements.
	ValueTooLarge = Register("RS-2065", "sql.value_too_large", "54000",
		"Build a smaller value: a single text, bytea or array value is limited to 1 GB (arrays to 134217727 elements), as in PostgreSQL. Check the length argument (lpad, rpad, repeat) or aggregate fewer rows per group.")
)
