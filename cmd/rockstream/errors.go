package main

import "fmt"

// usageError is a command-line mistake.
func usageError(format string, args ...any) error {
	return fmt.Errorf("usage: "+format, args...)
}
