#!/usr/bin/env bash
# Runs `compare` several times, one process after another, keeps every
# report, and prints each target's range over the runs and how many runs
# met it: the form each machine's page under `docs/benchmarks/` records
# its results in.
# One process draws one layout of the machine's caches, so a target is
# judged over several.
#
#   benches/compare_runs.sh                # five runs
#   benches/compare_runs.sh 10             # ten runs
#   benches/compare_runs.sh 3 --quick      # arguments after the count go to compare
#
# Reports go to target/compare-runs/run<i>.md (COMPARE_RUNS_DIR moves them).
# COMPARE_RUNS_SUMMARY_ONLY=1 runs nothing and summarises the N reports
# already there again.
# A run whose correctness checks fail stops the script with its status,
# after printing that run's report.
set -euo pipefail

# One compound command to the end, so bash reads the whole script before
# running any of it: editing the file during a run of many minutes cannot
# change what that run does.
{
cd "$(dirname "$0")/.."

runs=${1:-5}
shift || true
if ! [[ $runs =~ ^[1-9][0-9]*$ ]]; then
    echo "compare_runs: the run count must be a positive integer, not '$runs'" >&2
    exit 2
fi
dir=${COMPARE_RUNS_DIR:-${CARGO_TARGET_DIR:-target}/compare-runs}

if [[ ${COMPARE_RUNS_SUMMARY_ONLY:-} == 1 ]]; then
    runs_to_make=0
else
    runs_to_make=$runs
    cargo build --release --example compare
    mkdir -p "$dir"
    rm -f "$dir"/run*.md
fi
for i in $(seq 1 "$runs_to_make"); do
    echo "compare run $i of $runs" >&2
    status=0
    cargo run --quiet --release --example compare -- "$@" >"$dir/run$i.md" || status=$?
    if [[ $status -ne 0 ]]; then
        cat "$dir/run$i.md"
        echo "compare_runs: run $i failed with status $status; its report is above" >&2
        exit "$status"
    fi
done

# The targets table's rows from one report, or a failure when it has none.
target_rows() {
    awk '/^## Targets/ {on = 1; next}
         on && /^\|/ {table = 1; if (!/^\|---/ && !/^\| target /) {print; rows++}; next}
         table {exit}
         END {if (!rows) {print "compare_runs: no targets table in " FILENAME > "/dev/stderr"; exit 1}}' "$1"
}
rows=$(for i in $(seq 1 "$runs"); do target_rows "$dir/run$i.md" || exit 1; done)

# Prints each target's range, median and runs met from target rows on
# stdin. Each row holds target, measured, goal and met. Rows are matched
# across reports by their text, in the order they first appear.
summarise() {
    echo "| target | goal | lowest | median | highest | met |"
    echo "|---|---:|---:|---:|---:|:-:|"
    awk -F' \\| ' '
    {
        what = substr($1, 3)
        value = $2; sub(/x$/, "", value); value += 0
        goal = $3
        met = $4; sub(/ \|$/, "", met)
        if (!(what in seen)) { seen[what] = 1; order[++n] = what; low[what] = value; high[what] = value }
        if (value < low[what]) low[what] = value
        if (value > high[what]) high[what] = value
        goals[what] = goal
        runs[what]++
        values[what, runs[what]] = value
        if (met == "yes") yes[what]++
        if (met == "for comparison") compared[what] = 1
    }
    # The median of the k values recorded for w (insertion sort: k is small).
    function median(w, k,    i, j, v, sorted) {
        for (i = 1; i <= k; i++) {
            v = values[w, i]
            for (j = i - 1; j >= 1 && sorted[j] > v; j--) sorted[j + 1] = sorted[j]
            sorted[j + 1] = v
        }
        return k % 2 ? sorted[(k + 1) / 2] : (sorted[k / 2] + sorted[k / 2 + 1]) / 2
    }
    END {
        for (i = 1; i <= n; i++) {
            w = order[i]
            verdict = compared[w] ? "for comparison" : sprintf("%d/%d", yes[w] + 0, runs[w])
            unit = goals[w] ~ /x$/ ? "x" : ""
            printf "| %s | %s | %.2f%s | %.2f%s | %.2f%s | %s |\n", w, goals[w],
                low[w], unit, median(w, runs[w]), unit, high[w], unit, verdict
        }
    }'
}

head -n 3 "$dir/run1.md" | grep '^machine:' || true
echo
echo "$rows" | summarise

# The two-thread targets again, split by the machine's mode in each run:
# whether a second thread added decisions for the keyed floor (the line
# below each run). The modes switch over seconds, and a target can hold in
# one and not the other, so the pages under `docs/benchmarks/` report them
# apart. Each row is renamed for its run's mode, the mode where a second
# core adds decisions first.
by_mode=$(for i in $(seq 1 "$runs"); do
    # A quick run's line says its mode was not read: it joins no mode.
    factor=$(grep -v 'not read' "$dir/run$i.md" |
        sed -n 's/^two threads, 10k keys: the floor made \([0-9.]*\)x.*/\1/p')
    [[ -n $factor ]] || continue
    mode=$(awk -v f="$factor" 'BEGIN {print (f >= 1 ? "where a second core adds decisions" : "where a second core takes them away")}')
    target_rows "$dir/run$i.md" | sed -n "s/^| \(2 threads[^|]*\) |/$mode\t| \1, in the mode $mode |/p"
done | sort -s -t$'\t' -k1,1 | cut -f2-)
if [[ -n $by_mode ]]; then
    echo
    echo "$by_mode" | summarise
fi

echo
for i in $(seq 1 "$runs"); do
    echo "run $i: $(grep '^whole run:' "$dir/run$i.md" | sed 's/^whole run: //')"
    # What a second thread did for the keyed floor: the machine's mode for
    # shared data in that run (absent when the sweep skipped one thread).
    grep '^two threads, 10k keys: the floor made' "$dir/run$i.md" | sed "s/^/run $i: /" || true
done
exit
}
