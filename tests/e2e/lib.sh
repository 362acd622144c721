# SPDX-License-Identifier: BSD-2-Clause
# Helpers for e2e tests (source it; tests/e2e/run.sh runs each t_*.sh in the
# test bed with WORK set to a fresh temp dir): scripts/lib/ibfs.sh, which
# starts and stops the daemons (see it for what it provides), and what only
# tests need:
#   assert_eq WANT GOT [MSG] | assert_match REGEX GOT [MSG]
#   need_tool NAME            path of build/tools/NAME; skip until built
# shellcheck shell=bash

# shellcheck source=scripts/lib/ibfs.sh
source "${BASH_SOURCE[0]%/*}/../../scripts/lib/ibfs.sh"

# Print the path of build/tools/NAME; missing, skip, or fail under CI=true.
need_tool() {
	local t=$IBFS_TOOLS/$1
	[[ -x $t ]] && { echo "$t"; return 0; }
	[[ ${CI:-} == true ]] && fail "build/tools/$1 not built"
	skip "build/tools/$1 not built"
}

# Fail unless WANT equals GOT.
assert_eq() {
	[[ $1 == "$2" ]] || fail "${3:-assert_eq}: want '$1', got '$2'"
}

# Fail unless GOT matches extended REGEX.
assert_match() {
	[[ $2 =~ $1 ]] || fail "${3:-assert_match}: '$2' does not match /$1/"
}
