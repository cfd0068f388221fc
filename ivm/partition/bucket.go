package partition

import "encoding/binary"

// Buckets is the number of virtual buckets (spec §7.1: B = 16 ×
// max_expected_shards, default 4096). It is fixed for the lifetime of a
// store: every stored key carries its bucket.
const Buckets = 4096

// BucketBytes is the width of a bucket in a key (big-endian, so a
// bucket's keys are one contiguous range).
const BucketBytes = 2

// Bucket is a virtual bucket, 0 <= Bucket < Buckets.
type Bucket uint16

// BucketOf is the bucket of a partition key: the memcomparable (ivm/keyenc)
// encoding of the key's columns, so SQL-equal keys land in one bucket.
func BucketOf(key []byte) Bucket {
	return Bucket(Hash(key) % Buckets)
}

// AppendBucket appends b's key bytes to dst.
func AppendBucket(dst []byte, b Bucket) []byte {
	return binary.BigEndian.AppendUint16(dst, uint16(b))
}

// PutBucket writes b's key bytes into dst[:BucketBytes].
func PutBucket(dst []byte, b Bucket) {
	binary.BigEndian.PutUint16(dst, uint16(b))
}

// ReadBucket reads the bucket at the start of src (ok false if src is too
// short or holds no valid bucket).
func ReadBucket(src []byte) (Bucket, bool) {
	if len(src) < BucketBytes {
		return 0, false
	}
	b := binary.BigEndian.Uint16(src)
	return Bucket(b), b < Buckets
}
