// Package control is the control-plane actor of one RockStream process: it
// owns the control DB (spec §5.2) and the catalog in it.
//
// The catalog is a sequence of immutable Snapshots. Every DDL statement
// validates against the current snapshot, writes the changed catalog keys to
// the control DB durably, then publishes the next snapshot (version + 1).
// Readers (sessions compiling SQL, the shard reconciling its circuits) hold a
// snapshot for as long as they like: it never changes under them.
//
// Snapshots cross actors as values (snapshotvalue.go): messages name a
// catalog by its version, GetSnapshot answers its contents as a
// SnapshotValue (or SnapshotUnchanged when the caller already holds it),
// and the reader rebuilds a Snapshot once per version.
//
//	session ──Ask(CreateRelation)──► control ──durable write──► control DB
//	        ◄──DDLResult{Version v+1}┘
//	session ──Ask(GetSnapshot{Known: v})──► control ──► SnapshotValue v+1
//	session ──Ask(shard.SyncCatalog{v+1})──► shard (installs/backfills views)
//	shard (a message names version > its own) ──GetSnapshot──► control
//
// A view's record keeps the relations its SQL names directly (its
// dependencies: DROP refuses to break them without CASCADE, and CREATE OR
// REPLACE VIEW refuses a cycle; dependencies.go), and a materialized
// view's record keeps what its plan was compiled from (catalog.Pinned).
//
// Keys (spec §5.2; namespace-scoped from day one):
//
//	0x01 0x01 ns(16) object(16)   a table, source, sequence or index → relation record
//	0x01 0x02 ns(16) object(16)   a view or materialized view → relation record
//	0x01 0x00 ns(16)              the namespace's next object id (uint64 BE)
//	0x03 'B'                      the bucket map: owner shard of each virtual
//	                              bucket, with its version (topology.go)
//	0x0A 0x01 ns(16)              namespace definition (the default one is implicit)
package control
