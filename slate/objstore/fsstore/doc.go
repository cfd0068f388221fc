// Package fsstore is the objstore.Store backend on a local POSIX filesystem:
// one file per object, atomic conditional writes across processes sharing the
// directory (link(2), rename(2) and flock(2) on a fixed set of lock
// stripes), and a bounded footprint beside the objects (hygiene.go).
//
// It is an edge, not part of the deterministic core: it does real I/O, so
// only the binary's wiring (engine's storage opening, cmd/rockstream) and
// tests import it. Actors and slate see only the objstore.Store interface.
//
// Walkthrough:
//
//	store, err := fsstore.New("/var/lib/rockstream") // creates .tmp and .locks
//	v, err := store.PutIfAbsent(ctx, "db/manifest/1", data)
//	obj, err := store.Get(ctx, "db/manifest/1") // obj.Version == v
package fsstore
