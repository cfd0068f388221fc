// Package version is the server's version identity: what `server_version`,
// `server_version_num` and `SELECT version()` report. It is a leaf (no
// imports) so that the deterministic core (the control actor answers
// version() through the catalog functions) and the pgwire gateway can share
// one definition without the core linking the gateway.
//
// Walkthrough:
//
//	version.Server    // "15.0 (RockStream 0.1)", ParameterStatus server_version
//	version.ServerNum // "150000", server_version_num
//	version.Full      // SELECT version()
package version

// Server is what `server_version` reports. The leading "15.0" is deliberate:
// libpq, pgjdbc, asyncpg and pgx parse the leading number as the PostgreSQL
// major version and pick their catalog queries by it, and PostgreSQL 15 is the
// dialect RockStream speaks. The parenthesised part follows PostgreSQL's own
// "15.18 (Debian 15.18-0+deb12u1)" shape.
const Server = "15.0 (RockStream 0.1)"

// ServerNum is `server_version_num`, consistent with Server.
const ServerNum = "150000"

// Full is what `SELECT version()` returns.
const Full = "PostgreSQL " + Server + " on x86_64-pc-linux-gnu, compiled by Go, 64-bit"
