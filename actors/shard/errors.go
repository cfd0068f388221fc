package shard

import "github.com/rockstream/rockstream/errcode"

func corrupt(format string, args ...any) error {
	return errcode.New(errcode.ShardStateCorrupt, format, args...)
}
