#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A daemon run under valgrind, through traffic, a waiting reader and
# SIGTERM, shows no memcheck error (invalid reads and writes, uses of
# uninitialised values, bad frees) and no definite leak, and exits 0.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_cmd valgrind
need_bin
[[ -z ${SANITIZE:-} ]] || skip "valgrind cannot run a SANITIZE=$SANITIZE build"

real=$IBFS_BIN
# beta runs under valgrind; alpha as usual. No embedded gdbserver
# (--vgdb=no): nobody attaches, and it polls for one all along.
cat >"$WORK/ibfs-vg" <<EOS
#!/bin/sh
case " \$* " in
*" -n beta "*) exec valgrind --vgdb=no --leak-check=full --show-leak-kinds=definite \
	--errors-for-leak-kinds=definite --error-exitcode=99 \
	--log-file="$WORK/vg.log" "$real" "\$@" ;;
esac
exec "$real" "\$@"
EOS
chmod +x "$WORK/ibfs-vg"
IBFS_BIN=$WORK/ibfs-vg
IBFS_UP_TIMEOUT=180
IBFS_STOP_TIMEOUT=120 # memcheck takes a while to exit
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)

for i in $(seq 20); do echo "m $i" >"$A/beta/chat"; done
head -c 300000 /dev/urandom >"$WORK/blob"
dd if="$WORK/blob" of="$A/beta/big" bs=300000 count=1 status=none
wait_size "$B/alpha/big" 300000 120
cmp "$WORK/blob" <(cat "$B/alpha/big") || fail "message differs under valgrind"
echo back >"$B/alpha/chat"
wait_file "$A/beta/chat"
cat "$B/alpha/.status" >/dev/null
ls -l "$B/alpha" >/dev/null
rm "$B/alpha/chat"
touch "$B/alpha/wait"
timeout 60 cat "$B/alpha/wait" >/dev/null 2>&1 &
wait_parked "$B" alpha 1
# SIGTERM: exit 0, or 99 for a memcheck error; ibfs_stop fails the test
# on either, and on "definitely lost" or "ERROR SUMMARY: N" in vg.log.
rc=0
ibfs_stop beta || rc=$?
grep -E "definitely lost|no leaks are possible|ERROR SUMMARY" "$WORK/vg.log" >&2 || true
grep -q "ERROR SUMMARY: 0 errors" "$WORK/vg.log" ||
	fail "memcheck: $(grep 'ERROR SUMMARY' "$WORK/vg.log" || tail -5 "$WORK/vg.log")"
((rc == 0)) || fail "beta under valgrind did not end cleanly"
