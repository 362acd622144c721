#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The certificates test_cert needs, made with the commands of
# docs/certificates.md: each block there below a "<!-- mkcerts: NAME -->"
# comment is taken and run as it is, so the page's commands are proven.
# What only a test needs (an expired certificate, one naming no node by
# SAN, one whose SAN and CN differ) is made here, with the same ca.cnf.
#   tests/unit/mkcerts.sh DOC DIR
# DIR/ca1: Ed25519 CA; alpha beta gamma delta; gamma revoked in crl.pem
#   (crl0.pem: none revoked); expired (beta's key, ended 2025-11-30);
#   epsilon (CN only); zeta (CN beta, SAN zeta).
# DIR/ca2: ECDSA P-256 CA ("ibfs cluster CA 2"); alpha beta gamma.
# DIR/both.pem: both CAs; DIR/bothcrl.pem: both CRLs.
set -eu

DOC=$1 DIR=$2
ECDSA='-algorithm EC -pkeyopt ec_paramgen_curve:P-256'

# The lines of DOC's block NAME, without its fences; none is an error.
block() {
	awk -v tag="<!-- mkcerts: $1 -->" '
		$0 == tag { on = 1; next }
		on && /^```/ { if (open) exit; open = 1; next }
		on && open { print; n++ }
		END { exit n ? 0 : 1 }' "$DOC" || {
		echo "mkcerts: no block $1 in $DOC" >&2
		exit 1
	}
}

# Run block NAME in directory D; with "new", as the page says for a
# rotation's second CA: its key P-256 in place of Ed25519 (what ECDSA
# sites do) and a name of its own.
run() {
	d=$1 name=$2 new=${3:-}
	block "$name" >"$d/$name.sh"
	if [ "$new" = new ]; then
		sed -i -e "s/-algorithm ed25519/$ECDSA/" \
			-e 's|/CN=ibfs cluster CA"|/CN=ibfs cluster CA 2"|' \
			"$d/$name.sh"
	fi
	(cd "$d" && sh -e "./$name.sh") >>"$d/log" 2>&1 || {
		echo "mkcerts: block $name failed in $d:" >&2
		tail -n 20 "$d/log" >&2
		exit 1
	}
}

# A request for CN cn with extra req arguments, signed by the CA in d.
issue() {
	d=$1 out=$2 key=$3 cn=$4
	shift 4
	(cd "$d" &&
		openssl req -new -key "$key" -subj "/CN=$cn" "$@" \
			-out "$out.csr" &&
		openssl ca -config ca.cnf -batch -notext -in "$out.csr" \
			-out "$out.pem") >>"$d/log" 2>&1 || {
		echo "mkcerts: $out failed in $d:" >&2
		tail -n 20 "$d/log" >&2
		exit 1
	}
}

umask 077
for ca in ca1 ca2; do
	mkdir -p "$DIR/$ca"
	block ca.cnf >"$DIR/$ca/ca.cnf"
done
run "$DIR/ca1" ca
run "$DIR/ca1" node
run "$DIR/ca1" hostlist
cp "$DIR/ca1/crl.pem" "$DIR/ca1/crl0.pem"
run "$DIR/ca1" revoke
cp "$DIR/ca1/beta.key" "$DIR/ca1/expired.key"
(cd "$DIR/ca1" && openssl ca -config ca.cnf -batch -notext \
	-startdate 20250101000000Z -enddate 20251130000000Z \
	-in beta.csr -out expired.pem) >>"$DIR/ca1/log" 2>&1
cp "$DIR/ca1/beta.key" "$DIR/ca1/epsilon.key"
issue "$DIR/ca1" epsilon epsilon.key epsilon
cp "$DIR/ca1/beta.key" "$DIR/ca1/zeta.key"
issue "$DIR/ca1" zeta zeta.key beta -addext "subjectAltName = DNS:zeta"

run "$DIR/ca2" ca new
run "$DIR/ca2" hostlist new
cat "$DIR/ca1/ca.pem" "$DIR/ca2/ca.pem" >"$DIR/both.pem"
cat "$DIR/ca1/crl.pem" "$DIR/ca2/crl.pem" >"$DIR/bothcrl.pem"
