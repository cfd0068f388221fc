// Package kafka is the Kafka source (CREATE SOURCE s (columns) FROM KAFKA
// (brokers = '…', topic = '…', format = 'json' | 'csv' | 'text', key =
// '…')): it reads every partition of a topic and keeps its records in the
// source's relation, decoded into the declared columns: with a key, the
// newest record of each key (upsert; a record without a value deletes
// its key), without one every record (append). A record that does not
// decode becomes a row of the dead-letter relation s_errors (its error,
// partition, offset and raw bytes) and never stops the source.
//
// It runs at the edge of the process, on its own goroutine holding the
// broker connections (github.com/twmb/franz-go), and reaches the shard
// only through a Sink (package engine asks the shard actor). The
// deterministic packages never see it. It joins no consumer group and
// commits no offsets to Kafka: the shard holds them.
//
// Exactly-once: every commit to the shard carries, for each partition
// whose records it holds, the next offset to read (shard.SourceOffset
// with Partition) in the same durable batch as their rows and dead
// letters. A restarted source asks the shard for those offsets and starts
// each partition there, so a record is applied once whatever the crash.
//
//	         ┌────────── error (backoff) / new partitions ◄───────┐
//	         ▼                                                    │
//	Start ─► CONNECTING ─ partitions, offsets read ─► RUNNING ────┘
//	                                                  (poll, commit rows
//	                                                   + offsets, repeat)
//
// Records of transactions are read committed (aborted ones are skipped).
//
// The sink (CREATE SINK name FROM view INTO KAFKA (...), sink.go) runs the
// other way: it reads a materialized view's changes through the SUBSCRIBE
// path (a sink.Changes, which package engine implements with an edge actor;
// the session loop is package sink's Runner, shared with the POSTGRES sink) and
// writes each batch of closed epochs in one Kafka transaction, every
// record carrying the epoch in the EpochHeader header. The topic is the
// only record of progress:
//
//	Start ─► fence (InitProducerID: earlier producers of the sink are
//	         fenced, their open transaction aborted)
//	      ─► read the newest committed EpochHeader back from the tail
//	      ─► subscribe AS OF it (none: the view's snapshot first)
//	      ─► RUNNING: begin, produce, commit, repeat
//	         any error ─► RETRYING (backoff) ─► Start
//
// A crash before a commit is invisible to read_committed consumers and the
// epochs are written again; after it, the next start reads them back, so
// an epoch is delivered once.
package kafka
