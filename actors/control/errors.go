package control

import "github.com/rockstream/rockstream/errcode"

// Error codes this package returns (declared in errcode/codes_control.go).
//
//lint:immutable aliases of registered codes; never assigned.
var (
	CatalogCorrupt = errcode.CatalogCorruptCode
	CatalogFormat  = errcode.CatalogFormatCode
)
