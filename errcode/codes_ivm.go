package errcode

// RS-3500–3999: merge laws / arrangements (the IVM engine, ivm/).
var (
	// ViewEvaluationError is a materialized view in the error state: a live
	// input row makes one of its expressions fail (Materialize's rule:
	// errors are data). SQLState is overridden with the failing
	// expression's SQLSTATE (e.g. 22012 division_by_zero).
	ViewEvaluationError = Register("RS-3501", "view.evaluation_error", "22000",
		"A row in the view's inputs makes one of its expressions fail; the detail names the offending row. Delete or fix that row (the view recovers as soon as the row is retracted), or change the view's SQL to guard the expression (e.g. NULLIF for division by zero).")
	// RecursionNotConverging is a WITH RECURSIVE fixpoint whose iteration
	// did not settle within its bound in one epoch: typically UNION ALL
	// over a cycle, which never terminates (PostgreSQL loops forever).
	RecursionNotConverging = Register("RS-3503", "view.recursion_not_converging", "54000",
		"The recursive query keeps producing rows: with UNION ALL over data that has a cycle it never ends. Use UNION (set semantics) so repeated rows stop the recursion, add a depth column with a bound in the recursive term's WHERE clause, or remove the cycle from the data.")
	// ArrangementCorrupt is operator state that cannot be decoded.
	ArrangementCorrupt = Register("RS-3502", "arrangement.corrupt_state", "XX001",
		"Operator state in storage could not be decoded. Collect a support bundle and rebuild the affected view (DROP and CREATE it again).")
)
