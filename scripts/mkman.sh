#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The man pages' generated regions, from the code's tables: between
#   .\" BEGIN GENERATED REGION (make man; do not edit)
#   .\" END GENERATED REGION
# stands what `build/tools/docnames REGION` prints (tests/tools/docnames.c:
# config keys from src/config_keys.c, counters from include/peer.h, the
# .metrics families from src/fs_metrics.c's own HELP texts).
#   scripts/mkman.sh           rewrite the regions (make man)
#   scripts/mkman.sh --check   exit 1, with a diff, where a page differs
#                              from what the tables make (lint-docs)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
TOOL=$ROOT/build/tools/docnames
# Each page and the regions it must have.
PAGES=(
	"man/ibfs.conf.5 gkeys nkeys"
	"man/ibfs-status.7 fields counters metrics"
)

# The page with each region made anew, on stdout.
splice() {
	awk -v tool="$TOOL" '
	/^\.\\" BEGIN GENERATED / {
		print
		region = $4
		cmd = tool " " region
		while ((cmd | getline line) > 0)
			print line
		if (close(cmd)) {
			print "mkman: " cmd " failed" > "/dev/stderr"
			exit 1
		}
		skip = 1
		next
	}
	/^\.\\" END GENERATED / { skip = 0 }
	!skip { print }
	' "$1"
}

main() {
	local check=0 bad=0 entry page region tmp
	[[ ${1:-} == --check ]] && check=1
	[[ -x $TOOL ]] || { echo "mkman: build/tools/docnames missing: run make"; return 1; }
	cd "$ROOT"
	tmp=$(mktemp)
	trap 'rm -f "$tmp"' RETURN
	for entry in "${PAGES[@]}"; do
		read -r page regions <<<"$entry"
		for region in $regions; do
			if ! grep -qF ".\\\" BEGIN GENERATED $region " "$page" ||
				! grep -qxF ".\\\" END GENERATED $region" "$page"; then
				echo "$page: no generated region $region"
				bad=1
			fi
		done
		splice "$page" >"$tmp"
		if ((check)); then
			if ! diff -u "$page" "$tmp" | head -40; then
				echo "$page: differs from what the tables make (above); run make man"
				bad=1
			fi
		elif ! cmp -s "$page" "$tmp"; then
			cp "$tmp" "$page"
			echo "mkman: $page rewritten"
		fi
	done
	return "$bad"
}

main "$@"
