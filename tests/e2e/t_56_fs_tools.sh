#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Tools people already use on a channel, and what a scraper reads.
# tail -f (and -F) on beta's view of alpha's channel prints all three
# messages alpha sends, one at a time, and never "file truncated": its
# fstat counts what its own open read plus what is queued, while stat of
# the path from another process stays the bytes queued (0). MOUNT/.metrics
# is Prometheus text (every line a comment or `name{labels} value`, one
# HELP and TYPE per family, before its samples; every counter and gauge
# of include/peer.h's X lists a family of its own, ibfs_NAME_total of TYPE
# counter or ibfs_NAME of TYPE gauge, each drop reason a sample of
# ibfs_drops_total) whose msgs_tx matches .status. docs/recipes.md's
# serving loop, with `touch` first, waits for each request: one turn per
# request, however long nothing comes (a count, not a speed).
# timeout: 90
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_cmd tail awk pgrep stat
DOCNAMES=$(need_tool docnames)
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)

# The number of lines in FILE, into N, in bash alone: wc(1) in every
# poll of a wait_for costs a process (about 0.1 s in the TCG bed).
nlines() {
	local -a l
	mapfile -t l <"$1"
	N=${#l[@]}
}

# Whether both tails printed at least $1 lines.
tails_have() {
	nlines "$WORK/tail.out"
	((N >= $1)) || return 1
	nlines "$WORK/tailn.out"
	((N >= $1))
}

# ---- tail -f and tail -F: polling, since FUSE sends no inotify event.
echo "msg 1" >"$A/beta/log"
echo "msg 1" >"$A/beta/logn"
wait_file "$B/alpha/log"
wait_file "$B/alpha/logn"
tail -s 0.1 -f "$B/alpha/log" >"$WORK/tail.out" 2>"$WORK/tail.err" &
tf=$!
tail -s 0.1 -F "$B/alpha/logn" >"$WORK/tailn.out" 2>"$WORK/tailn.err" &
tn=$!
on_exit "kill $tf $tn 2>/dev/null || true"
for i in 1 2 3; do
	((i == 1)) || { echo "msg $i" >"$A/beta/log" && echo "msg $i" >"$A/beta/logn"; }
	wait_for "tails_have $i" 20 ||
		fail "tail printed too little for message $i: $(cat "$WORK/tail.out" "$WORK/tail.err" "$WORK/tailn.out" "$WORK/tailn.err")"
	sleep 0.3 # a few of tail's polls between messages
done
# the path's size from another process: what is queued, none (tail read it)
assert_eq 0 "$(stat -c %s "$B/alpha/log")" "stat of the path while tail follows"
kill "$tf" "$tn"
wait "$tf" "$tn" || true
assert_eq "$(printf 'msg %s\n' 1 2 3)" "$(<"$WORK/tail.out")" "tail -f output"
assert_eq "$(printf 'msg %s\n' 1 2 3)" "$(<"$WORK/tailn.out")" "tail -F output"
assert_out "" "tail's stderr" cat "$WORK/tail.err" "$WORK/tailn.err"
echo "queued" >"$A/beta/log"
wait_size "$B/alpha/log" 7
log "tail -f and -F: 3 messages each, nothing on stderr; stat of the path is the bytes queued"

# ---- MOUNT/.metrics: Prometheus text exposition 0.0.4.
[[ $'\n'$(ls -a "$A")$'\n' == *$'\n.metrics\n'* ]] || fail ".metrics is not listed in $A"
cat "$A/.metrics" >"$WORK/metrics"
tx=$(peer_status "$A" beta msgs_tx)
awk '
	/^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* / {
		if ($2 == "TYPE" && seen[$3]++) { print "TYPE twice: " $0; bad = 1 }
		if ($2 == "TYPE" && $4 !~ /^(counter|gauge)$/) { print "type: " $0; bad = 1 }
		next
	}
	/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [0-9]+$/ {
		n++; next
	}
	{ print "bad line: " $0; bad = 1 }
	END { if (!n) { print "no samples"; bad = 1 } exit bad }
' "$WORK/metrics" || fail ".metrics is not Prometheus text"
"$DOCNAMES" >"$WORK/docnames" || fail "build/tools/docnames failed"
# Each family has one HELP and one TYPE, both before its first sample;
# each counter docnames takes from peer.h's X lists is such a family (or,
# drop_REASON, a reason of ibfs_drops_total), the TYPE its name says.
awk '
	FNR == NR { if ($1 == "counter") want[$2] = 1; next }
	/^# (HELP|TYPE) / {
		if ($3 in sampled) { print $2 " after the samples: " $0; bad = 1 }
		if ($2 == "HELP") help[$3]++
		else { type[$3]++; kind[$3] = $4 }
		next
	}
	/^[^#]/ {
		f = $1; sub(/[{].*/, "", f)
		if (!sampled[f]++ && (!help[f] || !type[f])) {
			print "a sample before the HELP and TYPE of " f; bad = 1
		}
		if (f == "ibfs_drops_total" && match($0, /reason="[^"]*"/))
			reason[substr($0, RSTART + 8, RLENGTH - 9)] = 1
	}
	END {
		for (f in sampled) {
			if (help[f] != 1 || type[f] != 1) {
				print f ": " help[f] + 0 " HELP, " type[f] + 0 " TYPE"
				bad = 1
			}
		}
		for (c in want) {
			if (c ~ /^drop_/) {
				if (!reason[substr(c, 6)]) {
					print "no ibfs_drops_total sample for " c; bad = 1
				}
				continue
			}
			f = "ibfs_" c "_total"
			if (!(f in sampled) && !(f in help) && !(f in type))
				f = "ibfs_" c
			if (!(f in sampled) || help[f] != 1 || type[f] != 1) {
				print c ": no family of its own (HELP, TYPE, samples)"
				bad = 1
			} else if (kind[f] != (f ~ /_total$/ ? "counter" : "gauge")) {
				print f ": TYPE " kind[f]; bad = 1
			}
		}
		exit bad
	}
' "$WORK/docnames" "$WORK/metrics" || fail ".metrics: a family without its HELP or TYPE"
assert_eq 1 "$(grep -c '^ibfs_msgs_tx_total{peer="beta"} [0-9]' "$WORK/metrics")" "one msgs_tx sample for beta"
m=$'\n'$(<"$WORK/metrics")$'\n'
# Fail unless .metrics has line $1 (whole).
has() { [[ $m == *$'\n'"$1"$'\n'* ]] || fail ".metrics lacks '$1'"; }
has "ibfs_msgs_tx_total{peer=\"beta\"} $tx" # as in .status
has '# TYPE ibfs_msgs_tx_total counter'
has 'ibfs_peer_up{peer="beta"} 1'
has 'ibfs_drops_total{peer="beta",reason="queue_full"} 0'
m=$'\n'$(<"$B/.metrics")$'\n'
has 'ibfs_queued_bytes{peer="alpha"} 7' # beta's, of alpha's "queued"
log ".metrics: $(wc -l <"$WORK/metrics") lines, all well-formed; msgs_tx to beta $tx as in .status"

# ---- docs/recipes.md's serving loop, touch first: cat waits instead of ENOENT.
touch "$B/alpha/ask"
(while :; do
	echo turn >>"$WORK/turns"
	cat "$B/alpha/ask" >/dev/null && uptime >"$B/alpha/answer"
done) &
loop=$!
on_exit "kill $loop 2>/dev/null || true"
for i in 1 2; do
	wait_parked "$B" alpha 1
	# nothing sent yet: a loop that spins on ENOENT turns several times
	# a second (a cat is about 0.1 s in the TCG bed), this one waits
	((i > 1)) || sleep 1
	nlines "$WORK/turns"
	assert_eq "$i" "$N" "turns of the loop before request $i"
	echo "uptime?" >"$A/beta/ask"
	wait_for "[ -s '$A/beta/answer' ]" 20 || fail "no answer to request $i"
	grep -q 'load average' "$A/beta/answer" || fail "answer: $(cat "$A/beta/answer")"
done
wait_parked "$B" alpha 1
catpid=$(pgrep -P "$loop" cat)
kill "$loop"
kill "$catpid"
nlines "$WORK/turns"
assert_eq 3 "$N" "turns for two requests"
log "serving loop: 3 turns for 2 requests, each answered"
