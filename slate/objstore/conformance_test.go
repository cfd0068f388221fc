package objstore_test

import (
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
	"github.com/rockstream/rockstream/slate/objstore/objstoretest"
)

func TestConformanceMemory(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store { return objstore.NewMemory() }, objstoretest.Capabilities{})
}

func TestConformancePrefixedMemory(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store { return objstore.Prefixed(objstore.NewMemory(), "db/1") }, objstoretest.Capabilities{})
}
