#!/usr/bin/env bash
# flamediff-loop.sh runs a benchmark of a base and a head build in batches
# until Flamediff's sequential test decides (docs/CLI.md, "Run until
# decided"): after every batch it asks `flamediff query --max-runs`, which
# answers PASS, FAIL, CONTINUE (with how many runs to add) or INCONCLUSIVE
# at the maximum, with error rates that hold over every look.
#
#   flamediff-loop.sh --base-cmd CMD --head-cmd CMD --out DIR [flags] [-- extra flamediff query flags]
#
# CMD is run by bash once per run, with FLAMEDIFF_PROFILE set to the file
# it must write (one profile of that run: pprof, folded, perf script...)
# and FLAMEDIFF_RUN to the run's number; base and head runs alternate, so
# that a machine getting slower or faster weighs on both sides.
#
# Flags: --batch N and --max-runs N (the loop's own defaults: 5 and 30),
# --min-base-share X (its old name --min-change works too), --alpha X and
# --beta X (flamediff query's defaults when not given), --ext EXT (the
# profile files' extension, pb.gz), --flamediff PATH (flamediff), and to
# store the runs in ClickHouse instead of comparing the files: --dsn DSN
# --app APP --base-build B --head-build H.
#
# Each look is one `flamediff query` call, one computation, that writes
# DIR/verdict.json, DIR/comment.md (a pull request comment),
# DIR/report.html and DIR/result (PASS, FAIL, INCONCLUSIVE) from the one
# verdict its gate reads; the last look's stay. Exits 0 (PASS), 3 (FAIL),
# 5 (INCONCLUSIVE), or 1 and 2 when something is broken.
set -euo pipefail

# The loop's own defaults; what a look tests with is flamediff query's
# unless a flag says otherwise.
batch=5 max_runs=30 ext=pb.gz flamediff=flamediff
base_cmd= head_cmd= out= dsn= app= base_build= head_build=
look=() extra=()
while [ $# -gt 0 ]; do
	case "$1" in
	--base-cmd) base_cmd=$2 ;;
	--head-cmd) head_cmd=$2 ;;
	--out) out=$2 ;;
	--batch) batch=$2 ;;
	--max-runs) max_runs=$2 ;;
	--min-base-share) look+=(--min-base-share "$2") ;;
	--min-change) look+=(--min-base-share "$2") ;;
	--alpha) look+=(--alpha "$2") ;;
	--beta) look+=(--beta "$2") ;;
	--ext) ext=$2 ;;
	--flamediff) flamediff=$2 ;;
	--dsn) dsn=$2 ;;
	--app) app=$2 ;;
	--base-build) base_build=$2 ;;
	--head-build) head_build=$2 ;;
	--) shift; extra=("$@"); break ;;
	*) echo "flamediff-loop: unknown flag $1" >&2; exit 2 ;;
	esac
	shift 2
done
if [ -z "$base_cmd" ] || [ -z "$head_cmd" ] || [ -z "$out" ]; then
	echo "flamediff-loop: --base-cmd, --head-cmd and --out are required" >&2
	exit 2
fi
if [ -n "$dsn" ] && { [ -z "$app" ] || [ -z "$base_build" ] || [ -z "$head_build" ]; }; then
	echo "flamediff-loop: --dsn needs --app, --base-build and --head-build" >&2
	exit 2
fi
mkdir -p "$out/base" "$out/head"

# run_side runs one run of a side and, with --dsn, stores it.
run_side() {
	local side=$1 cmd=$2 run=$3 build=$4
	local file
	file="$out/$side/run-$(printf %04d "$run").$ext"
	FLAMEDIFF_PROFILE=$file FLAMEDIFF_RUN=$run bash -c "$cmd"
	if [ -n "$dsn" ]; then
		"$flamediff" ingest --dsn "$dsn" --app "$app" --build "$build" --run "$run" "$file" >/dev/null
	fi
}

# source_args name the runs compared: the files, or the stored builds.
source_args() {
	if [ -n "$dsn" ]; then
		printf '%s\n' --dsn "$dsn" --model \
			"{\"queryType\":\"diff\",\"app\":\"$app\",\"head\":{\"builds\":[\"$head_build\"]},\"base\":{\"builds\":[\"$base_build\"]}}"
	else
		printf '%s\n' --type diff --head "$out"/head/*."$ext" --base "$out"/base/*."$ext"
	fi
}

runs=0 add=$batch
while :; do
	for ((i = 0; i < add; i++)); do
		runs=$((runs + 1))
		run_side base "$base_cmd" "$runs" "$base_build"
		run_side head "$head_cmd" "$runs" "$head_build"
	done
	mapfile -t src < <(source_args)
	code=0
	add=$("$flamediff" query "${src[@]}" --max-runs "$max_runs" --batch "$batch" "${look[@]}" \
		--write verdict="$out/verdict.json" --write markdown="$out/comment.md" --write report="$out/report.html" \
		--write result="$out/result" --output more "${extra[@]}") || code=$?
	echo "flamediff-loop: $runs runs a side: exit $code" >&2
	# CONTINUE (4) says how many runs a side would likely decide.
	[ "$code" -eq 4 ] || break
done
exit "$code"
