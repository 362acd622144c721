#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Print redhat/ibfs.spec.in as a spec: @VERSION@ and @CHANGELOG@ from
# debian/changelog's top entry, so that the version and its date are
# written once, and @PKG_BUILDREQUIRES@ from the Makefile's PKG_MIN
# (LIB=VERSION ...), the minimum versions.  Run from the repository root
# (make rpm).
#   PKG_MIN='fuse3=3.7 ...' redhat/mkspec.sh VERSION
set -euo pipefail

VERSION=${1:?usage: mkspec.sh VERSION}

# The top entry of debian/changelog as an rpm %changelog entry:
#   * Wed Dec 02 2026 NAME <MAIL> - VERSION-1
#   - first line of an item ...
changelog() {
	awk -v v="$VERSION" '
	NR > 1 && /^[^ ]/ { exit }
	/^  \* / { sub(/^  \* /, "- "); items = items $0 "\n"; next }
	/^    / { sub(/^    /, "  "); items = items $0 "\n"; next }
	/^ -- / {
		sub(/^ -- /, "")
		who = $0; sub(/  .*/, "", who)
		split(substr($0, index($0, ">  ") + 3), d, /[ ,]+/)
		# d: Wed 02 Dec 2026 time zone
		printf "* %s %s %s %s %s - %s-1\n%s", d[1], d[3], d[2], d[4], who, v, items
	}' debian/changelog
}

# One BuildRequires line per LIB=VERSION of PKG_MIN.
buildrequires() {
	local m
	for m in ${PKG_MIN:?PKG_MIN unset (the Makefile sets it)}; do
		printf 'BuildRequires:  pkgconfig(%s) >= %s\n' "${m%%=*}" "${m#*=}"
	done
}

entry=$(changelog)
[[ -n $entry ]] || {
	echo "mkspec: no entry in debian/changelog" >&2
	exit 1
}
awk -v v="$VERSION" -v c="$entry" -v b="$(buildrequires)" '
	{ gsub(/@VERSION@/, v) }
	/^@CHANGELOG@$/ { print c; next }
	/^@PKG_BUILDREQUIRES@$/ { print b; next }
	{ print }' redhat/ibfs.spec.in
