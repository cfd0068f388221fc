package errcode

// Range is one owner area's reserved block of codes (spec §14.14).
type Range struct {
	Low, High int
	Owner     string
}

// Ranges lists every owner's reserved block. A new code outside its owner's
// range fails TestRegistry.
var Ranges = []Range{
	{1000, 1499, "connector / source / sink ingestion"},
	{1500, 1999, "schema / DDL validation"},
	{2000, 2099, "gateway / SQL / session / freshness"},
	{2100, 2199, "index / planner"},
	{2200, 2299, "direct-write transactions"},
	{2300, 2399, "history / AS OF / retention"},
	{2400, 2499, "reserved (gateway expansion)"},
	{3000, 3499, "shard / runtime / placement"},
	{3500, 3999, "merge laws / arrangements"},
	{4000, 4099, "control plane / quotas"},
	{4100, 4499, "cold tier"},
	{5000, 5499, "storage format / version"},
	{5500, 5999, "resource budgets / autotune"},
	{6000, 6499, "schema evolution"},
	{9000, 9999, "internal / fallback"},
}
