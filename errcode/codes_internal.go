package errcode

// RS-9000–9999: internal / fallback.
var (
	InternalError = Register("RS-9000", "internal.unexpected", "XX000",
		"This is a bug in RockStream. Retry the statement; if it persists, report it with the server log around this time.")
)
