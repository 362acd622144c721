# SPDX-License-Identifier: BSD-2-Clause
# Helpers for e2e tests (source it; tests/e2e/run.sh runs each t_*.sh in the
# test bed with WORK set to a fresh temp dir): scripts/lib/ibfs.sh, which
# starts and stops the daemons (see it for what it provides), and what only
# tests need:
#   assert_eq WANT GOT [MSG] | assert_match REGEX GOT [MSG]
#   assert_out WANT MSG CMD...  CMD succeeds and prints WANT
#   value_of VAR CMD...       VAR=$(CMD), failing the test when CMD fails
#   assert_no_line REGEX MSG FILE...  no line of the FILEs (all readable)
#                             matches extended REGEX
#   need_tool NAME            path of build/tools/NAME; skip until built
#   private_rxe DEV IP        a rxe device of the test's own, on a veth
#   start_set EXTRA NAME...   another config's nodes, started
#   cert_pki                  a CA and node certificates in $PKI; the
#                             config's [global] lines to use them
#   cert_short NODE SECS OUT  NODE's certificate again, into OUT, valid
#                             from an hour ago until SECS from now
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

# Fail unless CMD succeeds and prints WANT (trailing newlines cut, as
# "$(CMD)" cuts them). `assert_eq "" "$(CMD)"` passes when CMD fails,
# having printed nothing (and `assert_eq 0 "$(CMD | wc -l)"` likewise):
# the status of a command substitution in an argument is lost.
assert_out() {
	local want=$1 msg=$2 got rc=0
	shift 2
	got=$("$@") || rc=$?
	((rc == 0)) || fail "$msg: '$*' failed (exit $rc)"
	assert_eq "$want" "$got" "$msg"
}

# Set variable VAR to CMD's output; fail the test, naming CMD, when CMD
# fails (for two values compared, both of which a failure would leave "").
value_of() {
	local -n _value_of_var=$1
	local rc=0
	shift
	_value_of_var=$("$@") || rc=$?
	((rc == 0)) || fail "'$*' failed (exit $rc)"
}

# Fail when a line of FILE... matches extended REGEX, naming the first
# few, or when a FILE cannot be read: `if grep -q RE FILE; then fail`
# takes a FILE missing for one without the line.
assert_no_line() {
	local re=$1 msg=$2 rc=0
	shift 2
	grep -qE -- "$re" "$@" || rc=$?
	case $rc in
	1) return 0 ;;
	0) fail "$msg: $(grep -hE -- "$re" "$@" | head -n 3)" ;;
	*) fail "$msg: grep exit $rc (a file unreadable?)" ;;
	esac
}

# A rxe device DEV of the test's own on a veth (DEV0, its peer DEV1), with
# IP/24 on DEV0 and its port ACTIVE, so that rxe0, which other nodes of the
# bed share, stays as it is; the nodes written after run on it.  Gone at
# exit, once the nodes stopped.
private_rxe() {
	local dev=$1
	need_cmd rdma ip
	ip link add "${dev}0" type veth peer name "${dev}1" || fail "veth"
	on_exit "ibfs_stop_nodes; rdma link delete $dev 2>/dev/null; ip link del ${dev}0 2>/dev/null"
	ip addr add "$2/24" dev "${dev}0"
	ip link set "${dev}0" up
	ip link set "${dev}1" up
	rdma link add "$dev" type rxe netdev "${dev}0" || fail "rxe on veth"
	wait_for "rdma link show $dev/1 | grep -q 'state ACTIVE'" 20 || fail "$dev not ACTIVE"
	export IBFS_DEV=$dev IBFS_IP=$2
}

# Write the config of nodes NAME... with [global] lines EXTRA (a copy kept
# with the logs, named for the first node; START_SET_EDIT, a sed script
# run over it, when set) and start them; the nodes started before stay on
# the list ibfs_stop_nodes stops.
start_set() {
	local was=("${IBFS_NODES[@]}")
	# shellcheck disable=SC2034 # ibfs_conf_global reads it
	IBFS_CONF_EXTRA=$1
	shift
	ibfs_write_conf "$@"
	[[ -z ${START_SET_EDIT:-} ]] || sed -i "$START_SET_EDIT" "$WORK/ibfs.conf"
	cp "$WORK/ibfs.conf" "$WORK/$1.conf"
	ibfs_start_some "$@"
	IBFS_NODES=("${was[@]}" "$@")
}

# Make $PKI ($WORK/pki) with docs/certificates.md's commands (what each
# directory holds: tests/unit/mkcerts.sh), and set IBFS_CONF_EXTRA so
# that each node uses its own certificate of ca1 (%n), with a short
# peer_timeout, so that refusals show soon.
cert_pki() {
	command -v openssl >/dev/null || fail "openssl is not installed (make deps)"
	PKI=$WORK/pki
	mkdir -p "$PKI"
	"$IBFS_ROOT/tests/unit/mkcerts.sh" "$IBFS_ROOT/docs/certificates.md" "$PKI" ||
		fail "mkcerts: the CA and certificates were not made"
	# shellcheck disable=SC2034 # ibfs_conf_global reads it
	IBFS_CONF_EXTRA="ca = $PKI/ca1/ca.pem
cert = $PKI/ca1/%n.pem
key = $PKI/ca1/%n.key
peer_timeout = 3s"
}

# NODE's certificate (cert_pki's CA, NODE's request) issued again into
# OUT, ending SECS seconds from now: a daemon starts with it (its own
# certificate is checked at start) and it expires while it runs.
cert_short() {
	local node=$1 secs=$2 out=$3
	(cd "$PKI/ca1" &&
		openssl ca -config ca.cnf -batch -notext -in "$node.csr" \
			-out "$out" \
			-startdate "$(date -u -d '-1 hour' +%Y%m%d%H%M%SZ)" \
			-enddate "$(date -u -d "+$secs seconds" +%Y%m%d%H%M%SZ)") \
		>>"$WORK/pki.log" 2>&1 || fail "a short-lived certificate for $node"
}
