// Package lint enforces the determinism rules (STYLE.md 1–3,
// ARCHITECTURE.md §3) as an ordinary `go test`.
//
// A simulation is only worth running if the same seed always produces the same
// run. In the deterministic packages (actors/ ivm/ slate/ sim/ faults/
// buggify/, see DeterministicDirs) the linter therefore rejects, in non-test
// files:
//
//   - `go` statements and `select` (background work is a timer message);
//   - time.Now, Since, Until, Sleep, After, AfterFunc, Tick, NewTimer,
//     NewTicker (time comes from ctx.Now, timers from ctx.After);
//   - package-level functions of math/rand and math/rand/v2 other than the
//     constructors of a seeded generator (rand.New, rand.NewPCG, ...);
//   - importing crypto/rand;
//   - package-level `var`s, unless every name is `_`, every initialiser is a
//     sentinel (errors.New, fmt.Errorf, errcode.Register), or the line
//     directly above the spec (or above its `var (` group) reads
//     `//lint:immutable <why it is never mutated>`;
//   - ranging over a map (or using maps.Keys/Values/All), unless the same line
//     or the line directly above reads
//     `//lint:maprange <why iteration order cannot leak>`;
//   - importing, directly or transitively, a package that reaches outside
//     the simulated world: net (sockets, DNS), net/http, crypto/tls, os/exec,
//     anything under github.com/aws/ (the AWS SDK and smithy-go), or one of
//     the edge packages in EdgeDirs. "net" is matched exactly: net/url and
//     net/netip only parse values and stay allowed, while every net/...
//     package that does network I/O imports net and is caught through it.
//     The finding sits on the import that starts the chain and prints the
//     chain (a -> b -> net), so the fix, an interface implemented at an edge,
//     is plain.
//
// EdgeDirs lists the packages under those directories that are edges by
// design (the filesystem and S3 object-store backends, the backend
// conformance suite), each with its reason: the linter skips them, and a
// deterministic package importing one is a forbidden import.
//
// An annotation without a reason is itself a finding. Map ranges are found
// with type information: Check runs `go list -export -deps` and type-checks
// each package against the compiler's export data, so no extra module is
// needed.
//
// Walkthrough:
//
//	go test ./internal/lint                      # lint the whole module
//	root, _ := lint.ModuleRoot(".")
//	findings, err := lint.Check(root, "./slate/...")
//	for _, f := range findings { fmt.Println(f) } // file:line:col: [rule] message
//
// testdata/fixture/planted holds one violation of every rule, each marked
// with a `// want <rule>` comment; testdata/fixture/imports/planted holds the
// forbidden imports, direct and transitive; testdata/fixture/clean holds
// none. The tests check the linter reports exactly those.
package lint
