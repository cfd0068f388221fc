// Package access chooses how a bound plan reads each table it scans: by
// primary keys (point reads), in primary-key ranges, in the key ranges of
// one of the table's secondary indexes, at the rows that join rows of a
// table read so (a lookup join), or whole. The compiler's front door
// (ivm/sql.PlanReads) calls it for every ad-hoc query and every UPDATE or
// DELETE; the engine then fetches just those keys, ranges or index entries
// from the shards and runs the plan unchanged over what was read.
//
// Walkthrough: Plan lists the plan's scans with the predicate of the
// nearest Filter above each (scans.go), pins a primary key from equalities
// on every key column (points.go), or else bounds the leading primary-key
// columns, then those of the best index (ranges.go); then a table joined
// on its primary key or an index's leading columns to a table read in
// part is looked up at the join values of the rows read (lookups.go: the
// engine reads it after them). Parameters and other row-free values are
// evaluated with the statement's expr.Env, so the choice is made per
// execution.
//
// What is read may hold more rows than the plan keeps (its Filter still
// runs over them), never fewer: only comparisons in the key column's own
// type are used, only for types whose key encoding (ivm/keyenc) sorts as
// their comparison operators do, and a value that is NULL or fails to
// evaluate narrows nothing (the error surfaces in the real run).
package access
