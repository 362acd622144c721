#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The tree's shape, as issue 17 set it, checked so that it stays that way:
#   - no file in src/ include/ tests/unit tests/tools tests/fuzz over 900
#     lines;
#   - no C function in them over 80 lines, from the column-0 line with its
#     name and '(' to its column-0 '}';
#   - clang-format --dry-run --Werror finds nothing to change.
# Each offender is printed as FILE:LINE: why; exits 1 if there is any.
#   scripts/lint.sh [FILE...]    paths from the repository root; default:
#                                every .c and .h in those folders
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
MAX_FILE_LINES=${MAX_FILE_LINES:-900}
MAX_FUNC_LINES=${MAX_FUNC_LINES:-80}
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}

# The files to check, relative to ROOT, one a line.
lint_files() {
	if (($#)); then
		printf '%s\n' "$@"
		return
	fi
	ls src/*.c src/*.h include/*.h tests/unit/*.c tests/unit/*.h \
		tests/tools/*.c tests/fuzz/*.c tests/fuzz/*.h 2>/dev/null || true
}

# File and function lengths of the files given.
lint_lengths() {
	python3 - "$MAX_FILE_LINES" "$MAX_FUNC_LINES" "$@" <<'EOF'
import sys

max_file, max_func = int(sys.argv[1]), int(sys.argv[2])
bad = 0


def column0_code(line):
    """A line that starts at column 0 and is not a comment or directive."""
    return line[:1] not in ("", " ", "\t", "\n", "#", "/", "*", "}", "{")


for path in sys.argv[3:]:
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > max_file:
        print(f"{path}:{len(lines)}: {len(lines)} lines, over {max_file}")
        bad = 1
    i = 0
    while i < len(lines):
        if not (column0_code(lines[i]) and "(" in lines[i]):
            i += 1
            continue
        # The head is this line and its indented continuations; a body
        # follows it on a column-0 '{' and ends on a column-0 '}'.  A head
        # ending in ';' is a prototype, anything else (a macro call in a
        # table, say) is not a function either.
        start, j = i, i
        while not lines[j].rstrip().endswith(";") and j + 1 < len(lines) \
                and lines[j + 1][:1] in (" ", "\t"):
            j += 1
        if lines[j].rstrip().endswith(";") or j + 1 == len(lines) \
                or not lines[j + 1].startswith("{"):
            i = j + 1
            continue
        while j < len(lines) and not lines[j].startswith("}"):
            j += 1
        n = j - start + 1
        if n > max_func:
            name = lines[start].split("(")[0].split()[-1:] or ["?"]
            print(f"{path}:{start + 1}: function {name[0].lstrip('*')} "
                  f"is {n} lines, over {max_func}")
            bad = 1
        i = j + 1
sys.exit(bad)
EOF
}

# clang-format's complaints, as FILE:LINE lines.
lint_format() {
	local out rc=0
	if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
		echo "$CLANG_FORMAT: not on PATH (make deps installs it)"
		return 1
	fi
	out=$("$CLANG_FORMAT" --dry-run --Werror "$@" 2>&1) || rc=$?
	# "FILE:LINE:COL: error: code should be clang-formatted": FILE:LINE.
	if ((rc)); then
		sed -n 's/^\([^:]*:[0-9]*\):[0-9]*: error: \(.*\)/\1: \2/p' \
			<<<"$out" | sort -t: -k1,1 -k2,2n -u
		[[ -n $out ]] || echo "$CLANG_FORMAT exited $rc"
	fi
	return "$rc"
}

main() {
	local -a files
	local rc=0
	cd "$ROOT"
	mapfile -t files < <(lint_files "$@")
	((${#files[@]})) || { echo "lint: no files"; return 1; }
	lint_lengths "${files[@]}" || rc=1
	lint_format "${files[@]}" || rc=1
	return "$rc"
}

main "$@"
