# Developer recipes. `just` is optional: every recipe is a plain command you
# can copy. Install it with `npm install -g rust-just`.

# Everything CI runs (vet, gofmt, lint, all tests, bounded simulation seeds).
test:
    bash .ci/run

# Simulation: `just sim` runs fresh seeds; `just sim seed=123` replays one.
sim seeds="200" seed="":
    if [ -n "{{seed}}" ]; then go test ./sim/... -count=1 -run . -seed={{seed}} -v; else go test ./sim/... -count=1 -seeds={{seeds}}; fi

# Continuous simulation: fresh seeds until stopped; failures land in seeds/.
soak:
    go run ./soak

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
