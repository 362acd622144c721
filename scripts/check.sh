#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Test driver behind `make check`: unit tests (every build/tests/test_* cmocka
# binary, TAP output, on the host, no root; scripts/lint.sh and
# scripts/lint-docs.sh and scripts/lint-deps.sh as three more; then
# every fuzz target over its seed corpus once) then the e2e suite
# (tests/e2e/run.sh, inside the test bed: scripts/bed/run.sh). Ends with one
# line "N passed, N failed[, N skipped]"; exits 1 on any failure.
#   scripts/check.sh [--unit-only|--e2e-only|--fuzz-only]
# Under CI=true a test bed that cannot come up, or no clang with libFuzzer
# for the fuzz targets, counts as a failure.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
UNIT_TIMEOUT=${UNIT_TIMEOUT:-300}
FUZZ_CC=${FUZZ_CC:-clang}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-60}
PASSED=0 FAILED=0 SKIPPED=0

# Count one unit binary's TAP results against its plan ("1..N"): a binary
# that stops (or exits 0) after fewer results than it planned fails, and
# under CI=true a skipped test is a failure. Show its output when it fails.
run_unit_binary() {
	local bin=$1 name out rc=0 ok nok skp plan why=''
	name=$(basename "$bin")
	out=$(CMOCKA_MESSAGE_OUTPUT=TAP timeout -k 5 "$UNIT_TIMEOUT" "$bin" 2>&1 </dev/null) || rc=$?
	# cmocka 1.1 reports a skipped test as "not ok N # SKIP name".
	skp=$(grep -ciE '^(not )?ok [0-9]+ *# *skip' <<<"$out" || true)
	ok=$(grep -E '^ok ' <<<"$out" | grep -cviE '# *skip' || true)
	nok=$(grep -E '^not ok ' <<<"$out" | grep -cviE '# *skip' || true)
	# One plan per cmocka group: add them up.
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' <<<"$out" |
		awk '{ n += $1 } END { if (NR) print n }')
	if [[ -z $plan ]]; then
		why="no TAP plan"
	elif ((ok + nok + skp != plan)); then
		why="planned $plan, reported $((ok + nok + skp))"
	elif ((rc != 0 && nok == 0)); then
		why="exit $rc with no failed test"
	elif ((skp > 0)) && [[ ${CI:-} == true ]]; then
		why="$skp skipped under CI=true"
	fi
	# What is missing from the plan, or skipped in CI, counts as failed.
	if [[ -n $why ]] && ((nok == 0)); then
		nok=1
	fi
	PASSED=$((PASSED + ok)) FAILED=$((FAILED + nok)) SKIPPED=$((SKIPPED + skp))
	if ((nok > 0)); then
		echo "FAIL $name ($ok ok, $nok not ok, exit $rc${why:+, $why})"
		sed 's/^/    | /' <<<"$out" | tail -n 60
	else
		echo "PASS $name ($ok ok$( ((skp == 0)) || echo ", $skp skipped"))"
	fi
}

# Run every executable build/tests/test_*, then the tree-shape check.
run_unit() {
	local bin found=0
	echo "== unit tests"
	for bin in "$ROOT"/build/tests/test_*; do
		[[ -f $bin && -x $bin ]] || continue
		found=1
		run_unit_binary "$bin"
	done
	((found)) || echo "(no unit test binaries in build/tests)"
	run_lint
	run_lint lint-docs
	run_lint lint-deps
}

# scripts/lint.sh (file and function lengths, clang-format), or the one
# named (lint-docs: the docs name what the code has), as one test: PASS
# lint, or FAIL lint with its offenders, counted like a unit binary.
run_lint() {
	local name=${1:-lint} out rc=0
	out=$("$ROOT/scripts/$name.sh" 2>&1 </dev/null) || rc=$?
	if ((rc == 0)); then
		echo "PASS $name"
		PASSED=$((PASSED + 1))
	else
		echo "FAIL $name ($(grep -c . <<<"$out") findings, exit $rc)"
		sed 's/^/    | /' <<<"$out" | tail -n 60
		FAILED=$((FAILED + 1))
	fi
}

# Count one fuzz target the toolchain cannot build as FAIL (CI) or SKIP.
fuzz_absent() {
	local name=$1 why=$2
	if [[ ${CI:-} == true ]]; then
		echo "FAIL fuzz_$name ($why)"
		FAILED=$((FAILED + 1))
	else
		echo "SKIP fuzz_$name ($why)"
		SKIPPED=$((SKIPPED + 1))
	fi
}

# Build every fuzz target and run each over its seed corpus once
# (-runs=0: the seeds, no fuzzing), so that none rots between `make fuzz`
# runs: it must still build, and no seed may crash it.
run_fuzz() {
	local src name bin why='' log out rc probe
	local -a names=()
	echo "== fuzz targets over their seeds"
	for src in "$ROOT"/tests/fuzz/fuzz_*.c; do
		[[ -f $src ]] || continue
		name=${src##*/fuzz_} names+=("${name%.c}")
	done
	((${#names[@]})) || { echo "(no fuzz targets in tests/fuzz)"; return 0; }
	# A toolchain without clang or its libFuzzer runtime builds none.
	probe=$(mktemp -d)
	if ! command -v "$FUZZ_CC" >/dev/null 2>&1; then
		why="no $FUZZ_CC on PATH (make deps installs clang)"
	elif ! printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
		'{ return d && n ? 0 : 0; }' |
		"$FUZZ_CC" -fsanitize=fuzzer,address,undefined -x c - \
			-o "$probe/probe" >/dev/null 2>&1; then
		why="$FUZZ_CC cannot link -fsanitize=fuzzer (make deps installs libclang-rt-14-dev)"
	fi
	rm -rf "$probe"
	if [[ -n $why ]]; then
		for name in "${names[@]}"; do
			fuzz_absent "$name" "$why"
		done
		return 0
	fi
	log=$(mktemp)
	# One parallel build; a target it could not build is not up to date.
	make -C "$ROOT" -s -k -j"$(nproc)" FUZZ_CC="$FUZZ_CC" fuzz-bins \
		>"$log" 2>&1 || true
	for name in "${names[@]}"; do
		bin=$ROOT/build/fuzz/fuzz_$name
		if ! make -C "$ROOT" -s -q FUZZ_CC="$FUZZ_CC" \
			"build/fuzz/fuzz_$name" >/dev/null 2>&1; then
			echo "FAIL fuzz_$name (does not build)"
			grep -F -A3 "fuzz_$name" "$log" | tail -n 20 | sed 's/^/    | /'
			FAILED=$((FAILED + 1))
			continue
		fi
		rc=0
		out=$(cd "$ROOT/build/fuzz" && timeout -k 5 "$FUZZ_TIMEOUT" \
			"$bin" -runs=0 -artifact_prefix="$ROOT/build/fuzz/" \
			"$ROOT/tests/fuzz/corpus/$name" 2>&1 </dev/null) || rc=$?
		if ((rc == 0)); then
			echo "PASS fuzz_$name ($(grep -c . < <(ls -A \
				"$ROOT/tests/fuzz/corpus/$name")) seeds)"
			PASSED=$((PASSED + 1))
		else
			echo "FAIL fuzz_$name (exit $rc over tests/fuzz/corpus/$name)"
			sed 's/^/    | /' <<<"$out" | tail -n 40
			FAILED=$((FAILED + 1))
		fi
	done
	rm -f "$log"
}

# Count as failed each test of list file $2 with no result line (prefix
# $3) in log $1: a bed that stopped, or printed nothing, and exited 0
# must not pass. Print a FAIL line for each, and one for results of
# tests not listed; the number of failures found in N_MISSING.
e2e_missing() {
	local log=$1 list=$2 pre=$3 t name n=0 results
	N_MISSING=0
	while IFS= read -r t; do
		name=${t##*/} name=${name%.sh}
		n=$((n + 1))
		grep -qE "^${pre}(PASS|FAIL|SKIP) $name( |\$)" "$log" && continue
		echo "FAIL $name (listed, but the run printed no result for it)"
		N_MISSING=$((N_MISSING + 1))
	done <"$list"
	results=$(grep -cE "^${pre}(PASS|FAIL|SKIP) " "$log" || true)
	if ((results != n - N_MISSING)); then
		echo "FAIL e2e (results for $results tests, $((n - N_MISSING)) of them listed)"
		N_MISSING=$((N_MISSING + 1))
	fi
}

# Run the e2e suite in the bed; count its PASS/FAIL/SKIP lines, and a
# test listed (run.sh --list) with none as failed. With "pair", run
# tests/e2e/pair on two VMs and count node 1's joint results; with
# "systemd", tests/e2e/systemd in one VM booted by systemd.
run_e2e() {
	local suite=${1:-} log list rc=0 p f s pre='' bed=()
	case $suite in
	pair)
		echo "== e2e tests on two VMs (in the test bed)"
		pre='\[node1\] ' bed=(--pair)
		;;
	systemd)
		echo "== e2e tests of the unit (in the bed booted by systemd)"
		bed=(--systemd)
		;;
	*) echo "== e2e tests (in the test bed)" ;;
	esac
	log=$(mktemp)
	list=$(mktemp)
	E2E_SUITE=$suite "$ROOT"/tests/e2e/run.sh --list >"$list"
	# The VM's hard timeout: every test at its own timeout, plus boot.
	BED_TIMEOUT=$(($(E2E_SUITE=$suite "$ROOT"/tests/e2e/run.sh --budget) + 180))
	(cd "$ROOT" && E2E_SUITE=$suite BED_TIMEOUT=$BED_TIMEOUT \
		scripts/bed/run.sh "${bed[@]}" tests/e2e/run.sh) | tee "$log" ||
		rc=${PIPESTATUS[0]}
	p=$(grep -cE "^${pre}PASS " "$log" || true)
	f=$(grep -cE "^${pre}FAIL " "$log" || true)
	s=$(grep -cE "^${pre}SKIP " "$log" || true)
	N_MISSING=0
	((rc == 125)) || e2e_missing "$log" "$list" "$pre"
	rm -f "$log" "$list"
	PASSED=$((PASSED + p)) FAILED=$((FAILED + f + N_MISSING)) SKIPPED=$((SKIPPED + s))
	if ((rc == 125)); then
		if [[ ${CI:-} == true ]]; then
			echo "FAIL e2e$suite (the test bed did not come up)"
			FAILED=$((FAILED + 1))
		else
			echo "SKIP e2e$suite (the test bed did not come up)"
			SKIPPED=$((SKIPPED + 1))
		fi
	elif ((rc != 0 && f + N_MISSING == 0)); then
		echo "FAIL e2e$suite (run ended with exit $rc)"
		FAILED=$((FAILED + 1))
	fi
}

main() {
	local unit=1 fuzz=1 e2e=1
	case ${1:-} in
	--unit-only) e2e=0 ;;
	--e2e-only) unit=0 fuzz=0 ;;
	--fuzz-only) unit=0 e2e=0 ;;
	"") ;;
	*) echo "usage: $0 [--unit-only|--e2e-only|--fuzz-only]" >&2; return 2 ;;
	esac
	((unit)) && run_unit
	((fuzz)) && run_fuzz
	if ((e2e)); then
		# One VM boot for the one-VM suite ("vm"), two for the pair
		# suite, then one booted by systemd for the unit's suite; a suite
		# E2E_FILTER leaves empty does not boot, nor one E2E_SUITES omits.
		local suite
		for suite in ${E2E_SUITES:-vm pair systemd}; do
			[[ $suite != vm ]] || suite=
			[[ -z $(E2E_SUITE=$suite "$ROOT"/tests/e2e/run.sh --list) ]] ||
				run_e2e $suite
		done
	fi
	local line="$PASSED passed, $FAILED failed"
	((SKIPPED > 0)) && line+=", $SKIPPED skipped"
	echo "$line"
	((FAILED == 0))
}

main "$@"
