// Package clients is the client-matrix acceptance test of issue 6 against
// the real RockStream engine (engine.Serve in-process): psql 15's
// meta-commands over the system catalogs (package syscat), the Go drivers,
// SQLAlchemy's inspector and pgjdbc's DatabaseMetaData. The package has no
// non-test code.
package clients
