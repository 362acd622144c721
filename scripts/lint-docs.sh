#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The docs name what the code has, checked so that they do not drift:
#   - the generated regions of man/ibfs.conf.5 (every config key, with its
#     default, range and unit) and man/ibfs-status.7 (every .status field
#     and counter, every .metrics family with its HELP) are what the
#     tables make now (scripts/mkman.sh --check; make man rewrites them);
#   - every config key of src/config_keys.c's tables is in man/ibfs.conf.5,
#     and every key it documents is one of them;
#   - every option of `ibfs --help`, and every long option src/opts.c
#     accepts, is in man/ibfs.8, and every long option man/ibfs.8 gives is
#     one ibfs has;
#   - every .status counter of include/peer.h's X lists is in
#     man/ibfs-status.7, and the fields src/fs_status.c prints are the
#     ones tests/tools/docnames.c describes there, no more, no fewer;
#   - every message src/ logs at warning level or above has an entry in
#     man/ibfs.8's DIAGNOSTICS (matched on its words between conversions);
#   - every man page renders without a groff warning;
#   - every source file src/*.c is in docs/architecture.md, the map.
# The names come from the code: keys and counters from the tables, through
# build/tools/docnames; options from build/ibfs --help.  Each name missing
# is printed as "DOC: NAME (KIND) missing"; exits 1 if there is any.
#   scripts/lint-docs.sh      (after make: needs build/ibfs, build/tools/docnames)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
B=build
BAD=0

# A document as plain words: troff's \- is -, font escapes and \& go.
doc_text() {
	case $1 in
	*.[0-9]) sed -e 's/\\-/-/g' -e 's/\\f\[[^]]*\]//g' -e 's/\\f([A-Z][A-Z]//g' \
		-e 's/\\f[A-Z0-9]//g' -e 's/\\&//g' -e 's/\\c$//' "$1" ;;
	*) cat "$1" ;;
	esac
}

# Whether NAME stands in TEXT as a whole name (no name character either
# side: --port is not found in --portal, nor qkey in my_qkey).
has_name() {
	local text=$1 name=${2//./\\.}
	grep -qE -- "(^|[^A-Za-z0-9_-])${name}([^A-Za-z0-9_-]|$)" <<<"$text"
}

# Report every name of KIND (words on stdin) that DOC lacks.
need_in() {
	local doc=$1 kind=$2 text name
	text=$(doc_text "$ROOT/$doc")
	while read -r name; do
		[[ -n $name ]] || continue
		if ! has_name "$text" "$name"; then
			echo "$doc: $name ($kind) missing"
			BAD=1
		fi
	done
}

# The names docnames prints for kind $1.
names_of() {
	awk -v k="$1" '$1 == k { print $2 }' <<<"$NAMES"
}

# Every config key, [global]'s and [node NAME]'s.
keys() {
	{ names_of gkey; names_of nkey; } | sort -u
}

# peer.h's X rows, counted: a new X list docnames does not print yet
# would else go unchecked.
check_counter_lists() {
	local rows printed
	rows=$(grep -cE '^[[:space:]]*X\(' "$ROOT/include/peer.h" || true)
	printed=$(names_of counter | grep -c . || true)
	if ((rows != printed)); then
		echo "include/peer.h: $rows X rows, docnames prints $printed" \
			"counters: add the new X list to tests/tools/docnames.c"
		BAD=1
	fi
}

# The options ibfs offers: --help's short and long ones, and the long
# ones src/opts.c's getopt table (opts_long) accepts.
options() {
	sed -n 's/^  \(-[A-Za-z0-9]\)[, ].*/\1/p' <<<"$HELP"
	grep -oE -- '(^|[ ,])--[a-z][a-z0-9-]*' <<<"$HELP" | sed 's/^[ ,]*//'
	local table
	table=$(sed -n '/^static const struct option opts_long\[\]/,/^};/p' \
		"$ROOT/src/opts.c" | sed -n 's/^[[:space:]]*{"\([a-z][a-z0-9-]*\)",.*/--\1/p')
	if [[ -z $table ]]; then
		echo "src/opts.c: no opts_long table found: fix scripts/lint-docs.sh"
		BAD=1
	fi
	echo "$table"
}

# The long options man/ibfs.8 gives for ibfs itself, each one ibfs must
# have (one that went, or a typo, is a lie).
check_man_options() {
	local name known
	known=$(options | sort -u)
	while read -r name; do
		if ! grep -qxF -- "$name" <<<"$known"; then
			echo "man/ibfs.8: $name (option) is not in ibfs --help"
			BAD=1
		fi
	done < <(doc_text "$ROOT/man/ibfs.8" |
		grep -oE -- '(^|[^A-Za-z0-9_-])--[a-z][a-z0-9-]*' |
		sed 's/^[^-]*//' | sort -u)
}

# The keys ibfs.conf(5) documents (its "\fBkey\fR = " entries), each one
# the code must have (one that went, or a typo, is a lie).
check_doc_keys() {
	local known name
	known=$(keys)
	while read -r name; do
		if ! grep -qxF -- "$name" <<<"$known"; then
			echo "man/ibfs.conf.5: $name (config key) is not in src/config_keys.c"
			BAD=1
		fi
	done < <(sed -n 's/^\\fB\([a-z_]*\)\\fR = .*/\1/p' "$ROOT/man/ibfs.conf.5")
}

# The field names of the .status files, from fs_status.c's format
# strings ("name=%s\n") and the keys it hands fs_status_qos; counters,
# printed from peer.h, are checked apart.
status_fields() {
	{
		grep -oE '"([^"\\]|\\.)*"' "$ROOT/src/fs_status.c" |
			sed -e 's/\\n/ /g' -e 's/%[a-z]*/ /g' |
			grep -oE '[a-z][a-z0-9_]*=' | tr -d =
		# "%s=%d" lines whose key is an argument: fs_status_qos's
		sed -n 's/.*fs_status_qos(f, "\([a-z_]*\)".*/\1/p' "$ROOT/src/fs_status.c"
	} | sort -u
}

# The .status fields fs_status.c prints and the ones docnames describes
# for ibfs-status(7): the same set, each way.
check_fields() {
	local name
	while read -r name; do
		echo "tests/tools/docnames.c: .status field $name is not printed by src/fs_status.c"
		BAD=1
	done < <(comm -13 <(status_fields) <(names_of field | sort -u))
	while read -r name; do
		echo "tests/tools/docnames.c: .status field $name (src/fs_status.c) has no entry"
		BAD=1
	done < <(comm -23 <(status_fields) <(names_of field | sort -u))
}

# Every message logged at warning level or above (log_warn, log_warnx,
# log_rl_warnx, fatal, fatalx; include/log.h), as "FILE:LINE<TAB>WORDS",
# a line for each run of words between the format's conversions (of 4
# bytes or more): the stable parts of the message, each of which its
# DIAGNOSTICS entry must have.  A format of conversions only ("%s %s: %s",
# the peer refusals of bootstrap_note) has no words to match.
diag_keys() {
	perl -e '
	my $lit = qr/"(?:[^"\\]|\\.)*"/;
	for my $f (@ARGV) {
		local $/;
		open my $fh, "<", $f or die "$f: $!";
		my $s = <$fh>;
		while ($s =~ /\b(?:(?:log_warnx?|fatalx?)\s*\(|log_rl_warnx\s*\([^,]*,)\s*((?:$lit\s*)+)/g) {
			my ($lits, $pos) = ($1, $-[0]);
			my $line = 1 + (substr($s, 0, $pos) =~ tr/\n//);
			my $fmt = join "", ($lits =~ /"((?:[^"\\]|\\.)*)"/g);
			$fmt =~ s/\\(["\\])/$1/g;
			$fmt =~ s/\\n/ /g;
			my @segs = split /%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t)?[a-zA-Z%]/, $fmt;
			for my $key (@segs) {
				$key =~ s/^[\s:,;)]+|[\s:,;(]+$//g;
				print "$f:$line\t$key\n" if length($key) >= 4;
			}
		}
	}' src/*.c
}

# Each warning's words in man/ibfs.8's DIAGNOSTICS.
check_diagnostics() {
	local text where key
	text=$(doc_text "$ROOT/man/ibfs.8" | sed -n '/^\.SH DIAGNOSTICS/,/^\.SH /p')
	if [[ -z $text ]]; then
		echo "man/ibfs.8: no DIAGNOSTICS section"
		BAD=1
		return
	fi
	while IFS=$'\t' read -r where key; do
		if ! grep -qF -- "$key" <<<"$text"; then
			echo "man/ibfs.8: DIAGNOSTICS has no entry for \"$key\" ($where)"
			BAD=1
		fi
	done < <(diag_keys)
}

# Each man page as groff reads it: no warning (man --warnings does the same).
check_render() {
	local page out
	for page in man/*.[1-9]; do
		out=$(groff -man -ww -z "$page" 2>&1) || true
		if [[ -n $out ]]; then
			echo "$page: groff warns: $out"
			BAD=1
		fi
	done
}

main() {
	local bin=$ROOT/$B/ibfs tool=$ROOT/$B/tools/docnames
	cd "$ROOT"
	for f in "$bin" "$tool"; do
		[[ -x $f ]] || { echo "lint-docs: ${f#"$ROOT"/} missing: run make"; return 1; }
	done
	NAMES=$("$tool")
	HELP=$("$bin" --help 2>&1 || true)
	[[ -n $(names_of gkey) && -n $HELP ]] ||
		{ echo "lint-docs: no names from docnames or ibfs --help"; return 1; }
	"$ROOT/scripts/mkman.sh" --check || BAD=1
	need_in man/ibfs.conf.5 "config key" < <(keys)
	check_doc_keys
	need_in man/ibfs.8 option < <(options | sort -u)
	check_man_options
	check_counter_lists
	need_in man/ibfs-status.7 counter < <(names_of counter)
	need_in man/ibfs-status.7 ".status field" < <(status_fields)
	check_fields
	check_diagnostics
	check_render
	need_in docs/architecture.md "source file" < <(cd src && ls -- *.c)
	return "$BAD"
}

main "$@"
