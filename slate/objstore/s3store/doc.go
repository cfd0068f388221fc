// Package s3store is the objstore.Store backend on an S3-compatible service
// (AWS S3, MinIO, LocalStack, gofakes3): conditional writes use If-None-Match
// and If-Match, which the service evaluates atomically.
//
// It is an edge, not part of the deterministic core: it links the AWS SDK,
// net/http and crypto/tls, so only the binary's wiring (engine's storage
// opening, cmd/rockstream) and tests import it. Actors and slate see only the
// objstore.Store interface.
//
// Walkthrough:
//
//	cfg, err := s3store.ParseURL("s3://bucket/prefix?endpoint=http://127.0.0.1:9000&path_style=true")
//	store, err := s3store.New(ctx, cfg)
//	v, err := store.PutIfMatch(ctx, "db/manifest/2", data, previous)
package s3store
