#!/usr/bin/env bash
# A daemon run under valgrind, through traffic, a waiting reader and
# SIGTERM, shows no definite leaks (memcheck's "definitely lost").
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_cmd valgrind
need_bin
[[ -z ${SANITIZE:-} ]] || skip "valgrind cannot run a SANITIZE=$SANITIZE build"

real=$IBFS_BIN
# beta runs under valgrind; alpha as usual.
cat >"$WORK/ibfs-vg" <<EOS
#!/bin/sh
case " \$* " in
*" -n beta "*) exec valgrind --leak-check=full --show-leak-kinds=definite \
	--log-file="$WORK/vg.log" "$real" "\$@" ;;
esac
exec "$real" "\$@"
EOS
chmod +x "$WORK/ibfs-vg"
IBFS_BIN=$WORK/ibfs-vg
IBFS_UP_TIMEOUT=180
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
sleep 2
pid=${IBFS_PID[beta]}
kill -TERM "$pid"
for ((i = 0; i < 1200; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
ibfs_stop beta
grep -q "ERROR SUMMARY" "$WORK/vg.log" || fail "valgrind did not finish: $(tail -5 "$WORK/vg.log")"
grep -E "definitely lost|no leaks are possible|ERROR SUMMARY" "$WORK/vg.log" >&2
if grep -q "definitely lost: [1-9]" "$WORK/vg.log"; then
	sed -n '/definitely lost in/,/^==[0-9]*== $/p' "$WORK/vg.log" | head -60 >&2
	fail "definite leaks"
fi
