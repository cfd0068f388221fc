package benchutil

import "math"

func mathLog10(v float64) float64 { return math.Log10(v) }
