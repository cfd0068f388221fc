package shard

import (
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

const (
	kindTableRows  byte = 'T'
	metaLastEpoch  byte = 'E'
	metaFrontier   byte = 'F'
	metaLog        byte = 'L'
	metaViewMarker byte = 'V'
	metaOffset     byte = 'O'
)

// offsetKey is where a source's position at partition is stored:
// partition 0 (every unpartitioned source) has the key of old, others
// append the partition big-endian.
func offsetKey(source catalog.ID, partition uint32) []byte {
	k := append([]byte{kv.PrefixShardMeta, metaOffset}, source.Object[:]...)
	if partition == 0 {
		return k
	}
	return binary.BigEndian.AppendUint32(k, partition)
}

// tableKeyHeadBytes is the length of a table row key before its primary
// key (or row id): namespace, kind, table id and bucket.
const tableKeyHeadBytes = 2 + 16 + partition.BucketBytes

// tablePrefix is the prefix of every row key of a table, across all its
// buckets: a scan of it reads the table bucket by bucket, each bucket in
// primary-key order.
func tablePrefix(table catalog.ID) []byte {
	k := make([]byte, 0, tableKeyHeadBytes+16)
	k = append(k, kv.PrefixOpState, kindTableRows)
	return append(k, table.Object[:]...)
}

// keyBucket is the bucket a table row key carries.
func keyBucket(key []byte) partition.Bucket {
	b, ok := partition.ReadBucket(key[2+16:])
	if !ok {
		panic(fmt.Sprintf("shard: table row key %x carries no bucket", key))
	}
	return b
}

// tableBucketPrefix is the prefix of a table's row keys in one bucket: the
// range a bucket's rows move by.
func tableBucketPrefix(table catalog.ID, b partition.Bucket) []byte {
	return partition.AppendBucket(tablePrefix(table), b)
}

func lastEpochKey() []byte { return []byte{kv.PrefixShardMeta, metaLastEpoch} }
func frontierKey() []byte  { return []byte{kv.PrefixShardMeta, metaFrontier} }

func logKey(epoch uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{kv.PrefixShardMeta, metaLog}, epoch)
}

func logPrefix() []byte { return []byte{kv.PrefixShardMeta, metaLog} }

func viewMarkerKey(view catalog.ID) []byte {
	return append([]byte{kv.PrefixShardMeta, metaViewMarker}, view.Object[:]...)
}

func getUint64(r kv.Reader, key []byte) (uint64, error) {
	v, ok, err := r.Get(key)
	if err != nil || !ok {
		return 0, err
	}
	if len(v) != 8 {
		return 0, corrupt("key %x holds %d bytes, want 8", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

func putUint64(w kv.Writer, key []byte, n uint64) error {
	return w.Put(key, binary.BigEndian.AppendUint64(nil, n))
}
