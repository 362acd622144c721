#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# delivery = reliable against a forged datagram (issue 20): a stranger on
# the fabric crafts one RoCE v2 packet by hand (Python, AF_PACKET, the
# ICRC computed as rdma_rxe's rxe_icrc.c does) to alpha's QP, claiming
# beta's source QPN (DETH) and GID, carrying ibfs's header and a reliable
# trailer of a "newer" session at psn 0 (two of them, half the session
# space apart, so one is newer whatever beta's session is).  Before the
# fix alpha joined that session and beta's stream was dead until a
# restart.  Now:
# - the forged message is never delivered, and alpha counts the
#   datagrams in drop_rel_session;
# - beta -> alpha traffic goes on: a write after the forgery arrives,
#   within 5 s.
# The one-VM bed's rxe0 answers its own GID in the kernel (loopback, no
# frame), so the nodes run on a second rxe device on a veth, and the
# packet enters through its peer; accept_local lets in a frame whose
# source address is the node's own (both nodes share one GID here).
# timeout: 90
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_cmd rdma ip python3
forge=$(need_tool rel_forge)

# --- a second rxe device on a veth: the forgery goes in at its peer
ip link add ibfsf0 type veth peer name ibfsf1 || fail "veth"
on_exit "ibfs_stop_nodes; rdma link delete ibfsf 2>/dev/null; ip link del ibfsf0 2>/dev/null"
ip addr add 10.9.0.1/24 dev ibfsf0
ip link set ibfsf0 up
ip link set ibfsf1 up
conf=/proc/sys/net/ipv4/conf
echo 1 >"$conf/ibfsf0/accept_local"
echo 0 >"$conf/ibfsf0/rp_filter"
rpf=$(<"$conf/all/rp_filter")
on_exit "echo $rpf >$conf/all/rp_filter"
echo 0 >"$conf/all/rp_filter"
rdma link add ibfsf type rxe netdev ibfsf0 || fail "rxe on veth"
wait_for "rdma link show ibfsf/1 | grep -q 'state ACTIVE'" 20 || fail "ibfsf not ACTIVE"
export IBFS_DEV=ibfsf IBFS_IP=10.9.0.1
export IBFS_CONF_EXTRA=$'delivery = reliable\npeer_timeout = 3s'
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)

echo before >"$B/alpha/s"
assert_eq before "$(cat "$A/beta/s")" "a message before the forgery"
aqpn=$(status_of "$A" qpn)
bqpn=$(status_of "$B" qpn)
qkey=$(status_of "$A" qkey)
assert_eq "$bqpn" "$(peer_status "$A" beta qpn)" "beta's QPN as alpha knows it"
log "alpha qpn $aqpn, beta qpn $bqpn, qkey $qkey"

# --- the forgery: RoCE v2 UD SEND_ONLY, built byte by byte
cat >"$WORK/inject.py" <<'EOF'
import socket, struct, sys, zlib

ifname, src_mac, dst_mac, ip, dqpn, sqpn, qkey = sys.argv[1:8]
dqpn, sqpn, qkey = int(dqpn), int(sqpn), int(qkey, 0)
addr = socket.inet_aton(ip)
eth = bytes.fromhex(dst_mac.replace(":", "")) + \
    bytes.fromhex(src_mac.replace(":", "")) + b"\x08\x00"
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
sock.bind((ifname, 0))

def iphdr(tos, ttl, csum, udp_len):
    return struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + udp_len, 0x1234,
                       0x4000, ttl, 17, csum, addr, addr)

def frame(payload):
    pad = -len(payload) % 4
    body = payload + b"\0" * pad
    bth = struct.pack("!BBHII", 0x64, pad << 4, 0xFFFF, dqpn, 0)  # UD SEND_ONLY
    deth = struct.pack("!II", qkey, sqpn)
    udp_len = 8 + len(bth) + len(deth) + len(body) + 4
    h = iphdr(0, 64, 0, udp_len)
    s = sum(struct.unpack("!10H", h))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    udp = struct.pack("!HHHH", 0xC123, 4791, udp_len, 0)
    # ICRC (rxe_icrc.c): CRC32 over 8 bytes of ones, then the IP header
    # with tos, ttl and checksum all ones, the UDP header with checksum
    # all ones, the BTH with its reserved byte all ones, the DETH and the
    # payload; stored little-endian after the payload.
    masked = (b"\xff" * 8 + iphdr(0xFF, 0xFF, 0xFFFF, udp_len) + udp[:6] +
              b"\xff\xff" + bth[:4] + b"\xff" + bth[5:] + deth + body)
    icrc = struct.pack("<I", zlib.crc32(masked) & 0xFFFFFFFF)
    return (eth + iphdr(0, 64, ~s & 0xFFFF, udp_len) + udp + bth + deth +
            body + icrc)

for payload in sys.argv[8:]:
    sock.send(frame(bytes.fromhex(payload)))
EOF
mac0=$(cat /sys/class/net/ibfsf0/address)
mac1=$(cat /sys/class/net/ibfsf1/address)
dg1=$("$forge" beta x forged 0x00000001 0) || fail "rel_forge"
dg2=$("$forge" beta x forged 0x80000001 0) || fail "rel_forge"
python3 "$WORK/inject.py" ibfsf1 "$mac1" "$mac0" 10.9.0.1 "$aqpn" \
	"$bqpn" "$qkey" "$dg1" "$dg2" || fail "injecting the forged packets"
log "two forged datagrams sent to alpha as beta"

# --- beta's stream goes on: a write after the forgery arrives within 5 s
timeout 5 bash -c "echo after >'$B/alpha/s'" ||
	fail "beta's write after the forgery did not complete within 5 s"
assert_eq after "$(timeout 5 cat "$A/beta/s")" "a message after the forgery"
assert_eq 0 "$(peer_status "$B" alpha rel_timeouts)" "beta's rel_timeouts"
# ... and the forgeries reached alpha, which dropped them
wait_for "[ \$(peer_status '$A' beta drop_rel_session) -ge 2 ]" 10 ||
	fail "alpha did not count the forged datagrams (drop_rel_session" \
		"$(peer_status "$A" beta drop_rel_session))"
[[ ! -e $A/beta/x ]] || fail "the forged message was delivered: $(cat "$A/beta/x")"
log "drop_rel_session at alpha: $(peer_status "$A" beta drop_rel_session)"
