# Developer recipes. `just` is optional: every recipe is a plain command you
# can copy. Install it with `npm install -g rust-just`.

# Everything CI runs (vet, gofmt, lint, all tests, bounded simulation seeds).
test:
    bash .ci/run

# Simulation with fresh random seeds: `just sim` or `just sim 1000`.
sim seeds="200":
    go test ./sim/... -count=1 -seeds={{seeds}}

# Replay one simulation seed, printing SEED=, the configuration and the trace hash: `just replay 123`.
replay seed:
    go test ./sim/... -count=1 -seed={{seed}} -v

# Whole-system soak: fresh seeds for a bounded time (`just soak 10m`) or count
# (`just soak 0 10000`); failures are shrunk and saved with their operation logs
# in seeds/testdata (replayed by `go test ./seeds`, so by CI); prints seeds/hour
# and the coverage of fault entries and buggify sites.
soak duration="10m" runs="0":
    go run ./soak -duration={{duration}} -runs={{runs}}

# The determinism lint (STYLE.md rules 1-3).
lint:
    go test -count=1 ./internal/lint

# Benchmarks (testing.B only; never timing assertions in tests).
bench pkg="./...":
    go test -run '^$' -bench . -benchmem {{pkg}}

# Correctness (f7): the full differential campaign (2000 random cases) and
# every query of every sqllogictest corpus file in both modes (hours).
correctness-full:
    ROCKSTREAM_CORRECTNESS_FULL=1 go test -count=1 -timeout 12h -v ./correctness/... -slt.report=/tmp/slt-report.tsv

# Nexmark (f9): per-query events/s, commit→visible p50/p99, RSS, state and storage bytes; CSV+SVG in bench-out/.
bench-nexmark events="1000000" queries="q0,q1,q2":
    go run ./cmd/rockstream bench nexmark --events={{events}} --queries={{queries}} --out=bench-out

# IVM vs recompute (f9): RockStream view maintenance vs PostgreSQL 15 REFRESH and a hand upsert; CSV+SVG in bench-out/.
bench-ivm rows="1000000":
    go run ./cmd/rockstream bench ivm --rows={{rows}} --out=bench-out
