// Package faults is the fault model as a written contract: every fault the
// simulator (sim) or a buggify site can inject, what it does, what the system
// must still guarantee under it, its parameters and the range each seed draws
// them from; and, in OutOfScope, what we do not promise to survive.
//
// Walkthrough:
//
//	f := faults.MustLookup(faults.NetworkDrop)
//	p := f.Param("probability").Draw(rnd) // a fresh value per seed, in [Min, Max]
//	for _, f := range faults.Catalog() { fmt.Println(f.Name, f.Survives) }
//
// Adding a fault: add a constant and an entry to the catalog (with ranges),
// inject it in sim or at a buggify site that names it, and say in Survives
// what the invariant checkers rely on. TestCatalog keeps the table
// well-formed.
package faults
