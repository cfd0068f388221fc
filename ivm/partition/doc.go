// Package partition is the partition function (spec §7.1): which virtual
// bucket a key belongs to, and which shard owns a bucket.
//
// Partitioning is two-level, so shards can be added without rehashing
// keys and a bucket can move between shards as a unit:
//
//	bucket = Hash(memcomparable partition key) mod Buckets   (fixed forever)
//	shard  = Map.Owner(bucket)                              (versioned map)
//
// The map is computed by rendezvous (highest-random-weight) hashing of each
// bucket over the live shards (Rendezvous), so adding a shard to N moves
// about 1/(N+1) of the buckets and no bucket moves between two old shards.
// The control plane stores the map (with its version) in the control DB
// and every shard and router reads it from there: the map, not the
// rendezvous function, is the truth once stored.
//
// Walkthrough:
//
//	m := partition.NewMap(1, []partition.ShardID{0})   // bootstrap: one shard
//	b := partition.BucketOf(pkKey)                     // keyenc-encoded key
//	owner := m.Owner(b)                                // ShardID 0
//	next := m.WithShards([]partition.ShardID{0, 1})    // version 2, ~half the buckets move
//
// NB: Hash and Rendezvous are storage formats. Buckets are written into
// every shard key (actors/shard), so changing either function would
// scatter stored rows over the wrong buckets; golden-value tests freeze
// both.
package partition
