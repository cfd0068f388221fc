package fsstore

import (
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
	"github.com/rockstream/rockstream/slate/objstore/objstoretest"
)

func TestConformanceFS(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, objstoretest.Capabilities{})
}
