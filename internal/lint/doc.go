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
//     `//lint:maprange <why iteration order cannot leak>`.
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
// with a `// want <rule>` comment; testdata/fixture/clean holds none. The
// tests check the linter reports exactly those.
package lint
