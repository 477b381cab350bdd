#!/usr/bin/env bash
# Fuzzes every decoder of untrusted input (the cargo-fuzz targets in fuzz/: datagrams — the
# pTCP header among them (`ptcp`) —, scenario files, Mahimahi traces) and the TCP, RCP and pTCP
# engines driven by scripts of API calls (`tcp_engine`, `rcp_engine`, `ptcp_engine`) for a
# bounded time.
#
#   FUZZ_SECONDS=30 scripts/fuzz.sh            # every target, 30 s each (default)
#   FUZZ_SECONDS=600 scripts/fuzz.sh segment   # only the named targets
#
# Exits non-zero on the first crash; libFuzzer's reproducer is left in fuzz/artifacts/<target>/
# (replay it with `cargo +nightly fuzz run <target> <file>`). Corpora grow in fuzz/corpus/,
# which is not committed.
set -euo pipefail

FUZZ_SECONDS="${FUZZ_SECONDS:-30}"
if ! [[ "$FUZZ_SECONDS" =~ ^[0-9]+$ ]] || [[ "$FUZZ_SECONDS" -eq 0 ]]; then
    echo "fuzz.sh: FUZZ_SECONDS must be a positive integer, got '$FUZZ_SECONDS'" >&2
    exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root/fuzz"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

# cargo-fuzz needs nightly (sanitizer flags). Prefer a rustup nightly toolchain; otherwise let
# the stable compiler accept nightly flags.
if cargo +nightly --version >/dev/null 2>&1; then
    fuzz=(cargo +nightly fuzz)
else
    echo "fuzz.sh: no 'cargo +nightly'; using RUSTC_BOOTSTRAP=1 with the default toolchain" >&2
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
fi

if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    mapfile -t targets < <("${fuzz[@]}" list)
fi
if [[ ${#targets[@]} -eq 0 ]]; then
    echo "fuzz.sh: no fuzz targets found in fuzz/" >&2
    exit 1
fi

for target in "${targets[@]}"; do
    echo "=== fuzz.sh: $target for ${FUZZ_SECONDS}s" >&2
    if [[ "$target" == "scenario" ]]; then
        # Seed the scenario fuzzer with the repository's scenarios, so it mutates valid files.
        mkdir -p "corpus/scenario"
        for f in "$root"/scenarios/*/*.toml "$root"/experiments/*/*.toml; do
            [[ -f "$f" ]] && cp "$f" "corpus/scenario/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
        done
    fi
    if ! "${fuzz[@]}" run "$target" -- -max_total_time="$FUZZ_SECONDS"; then
        echo "" >&2
        echo "fuzz.sh: FAILURE: target '$target' crashed or failed to build." >&2
        echo "fuzz.sh: reproducer (if any) in $root/fuzz/artifacts/$target/" >&2
        exit 1
    fi
done
echo "=== fuzz.sh: all ${#targets[@]} targets ran ${FUZZ_SECONDS}s each without a crash" >&2
