#!/usr/bin/env bash
# Paired rounds of two builds: an earlier commit against the working tree
# (uncommitted changes included), or against another commit named by
# PAIR_BUILDS_NEW, one process at a time, taking turns.
# The form the levers table in docs/benchmarks/levers.md gives for "paired
# rounds": each round runs both builds once per case, in alternating
# order, and the summary gives the median of the rounds' ratios, so a
# drift in the machine's speed meets both builds alike.
#
#   benches/pair_builds.sh 16e4ff4                    # 20 rounds, `string` and `u64`
#   benches/pair_builds.sh 16e4ff4 40 string two-threads
#
# Cases: those of `examples/hit_loop.rs` (`string`, `u64`,
# `string-robust`, `u64-robust`, `floor`), timed as nanoseconds per hit,
# and `two-threads`, `examples/two_contenders.rs`'s tollgate decisions per
# second on two threads. A ratio is new over base: below 1 is faster for
# a time, above 1 is more for decisions.
#
# A commit is exported with `git archive` into target/pair-builds/<commit>/
# (PAIR_BUILDS_DIR moves it) and built there with its own target folder;
# the rounds go to rounds.txt in target/pair-builds/<base>/ (or
# <base>-<new>/).
# HITS sets hit_loop's hits per process (default 40,000,000).
set -euo pipefail

# One compound command to the end, so bash reads the whole script before
# running any of it (as in compare_runs.sh).
{
cd "$(dirname "$0")/.."

if [[ $# -lt 1 ]]; then
    echo "usage: benches/pair_builds.sh COMMIT [ROUNDS] [CASE...]" >&2
    exit 2
fi
commit=$(git rev-parse --short "$1^{commit}")
rounds=${2:-20}
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
    echo "pair_builds: the round count must be a positive integer, not '$rounds'" >&2
    exit 2
fi
shift $(( $# < 2 ? $# : 2 ))
cases=("$@")
if [[ ${#cases[@]} -eq 0 ]]; then
    cases=(string u64)
fi
for case in "${cases[@]}"; do
    case $case in
        string | u64 | string-robust | u64-robust | floor | two-threads) ;;
        *)
            echo "pair_builds: '$case' is not a case" >&2
            exit 2
            ;;
    esac
done
hits=${HITS:-40000000}

builds=${PAIR_BUILDS_DIR:-target/pair-builds}
# The examples both builds need, named once: the cargo flags come from it.
examples=(hit_loop two_contenders)
example_flags=()
for example in "${examples[@]}"; do
    example_flags+=(--example "$example")
done

# Exports `commit` into its own folder under $builds, once, and builds
# the examples there; prints the folder their binaries are in.
build_commit() {
    local tree=$builds/$1
    if [[ ! -f $tree/src/Cargo.toml ]]; then
        mkdir -p "$tree/src"
        git archive "$1" | tar -x -C "$tree/src"
    fi
    CARGO_TARGET_DIR="$tree/target" cargo build --release --manifest-path "$tree/src/Cargo.toml" \
        "${example_flags[@]}" >&2
    echo "$tree/target/release/examples"
}

base_bins=$(build_commit "$commit")
if [[ -n ${PAIR_BUILDS_NEW:-} ]]; then
    new_commit=$(git rev-parse --short "$PAIR_BUILDS_NEW^{commit}")
    new_bins=$(build_commit "$new_commit")
    new_name=$new_commit
    dir=$builds/$commit-$new_commit
else
    cargo build --release "${example_flags[@]}"
    new_bins=${CARGO_TARGET_DIR:-target}/release/examples
    new_name="the working tree"
    dir=$builds/$commit
fi
mkdir -p "$dir/bin"
for example in "${examples[@]}"; do
    cp "$base_bins/$example" "$dir/bin/$example-base"
    cp "$new_bins/$example" "$dir/bin/$example-new"
done

# One process of `build` on `case`: the number its line reports.
measure() {
    local build=$1 case=$2
    if [[ $case == two-threads ]]; then
        "$dir/bin/two_contenders-$build" | awk '{ for (i = 1; i < NF; i++) if ($i == "tollgate") print $(i + 1) }'
    else
        "$dir/bin/hit_loop-$build" "$case" "$hits" | awk '{ for (i = 2; i <= NF; i++) if ($i == "ns") print $(i - 1) }'
    fi
}

out=$dir/rounds.txt
: >"$out"
for round in $(seq 1 "$rounds"); do
    for case in "${cases[@]}"; do
        if (( round % 2 )); then
            base=$(measure base "$case")
            new=$(measure new "$case")
        else
            new=$(measure new "$case")
            base=$(measure base "$case")
        fi
        echo "$case $round $base $new" | tee -a "$out"
    done
done

echo
echo "new ($new_name) against base ($commit), $rounds paired rounds:"
for case in "${cases[@]}"; do
    awk -v name="$case" '$1 == name { print $4 / $3 }' "$out" | sort -g | awk -v name="$case" '
        { ratio[NR] = $1; if ($1 < 1) below++; if ($1 > 1) above++ }
        END {
            n = NR
            median = (n % 2) ? ratio[(n + 1) / 2] : (ratio[n / 2] + ratio[n / 2 + 1]) / 2
            what = (name == "two-threads") ? "decisions" : "time"
            printf "%s: median %s ratio %.3f (quartiles %.3f-%.3f); below 1 in %d of %d, above 1 in %d\n",
                name, what, median, ratio[int((n + 3) / 4)], ratio[int((3 * n + 3) / 4)], below, n, above
        }'
done
exit 0
}
