package main

import (
	"fmt"
	"strconv"
	"strings"
)

// usageError is a command-line mistake.
func usageError(format string, args ...any) error {
	return fmt.Errorf("usage: "+format, args...)
}

// parseBytes reads a size like "512MiB", "2GiB", "1GB" or a plain byte count.
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size (e.g. 512MiB)", s)
	}
	return int64(n * float64(mult)), nil
}
