/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for the data path probe (tp_probe.c) and the async events
 * that hold and release it (tp_event.c), on the fake device of
 * tp_harness.h, with time driven by hand through tp_probe_tick: a peer
 * the bootstrap installed is probing, not up, until its answer to our
 * ping comes; unanswered after three pings (0, 150, 450 ms) it is
 * unreachable at 1050 ms, with a reason, is pinged on once a second and
 * comes up by itself on an answer; a peer up is watched, with no timer
 * while nothing is sent to it, and unreachable again when sent to and
 * three pings go unanswered (1, 2, 4 s apart);
 * we answer a joined peer's ping at once (once per batch), never a
 * stranger's; the port going down makes every peer down with the port's
 * reason, and its return probes them again.
 */
#include "tp_harness.h"

/* What the upcalls saw. */
static int ups, fails;

/* peer_up: once per answered probe. */
static void probe_peer_up(void *arg, struct peer *p)
{
	assert_unlocked();
	assert_ptr_equal(p, &peers[BETA]);
	ups++;
}

/* peer_failed: once when a peer turns unreachable or its port goes. */
static void probe_peer_failed(void *arg, struct peer *p)
{
	assert_unlocked();
	fails++;
}

static const struct tp_ops probe_ops = {
	.peer_up = probe_peer_up,
	.peer_failed = probe_peer_failed,
};

/* Alpha local, beta joined and not answered yet. */
static int setup(void **state)
{
	ups = fails = 0;
	return tp_harness_open(TWO_NODES("datagram"), &probe_ops, NULL);
}

/* Everything setup made, in reverse. */
static int teardown(void **state)
{
	return tp_harness_close();
}

/* How many pings went to beta so far. */
static int pings(void)
{
	struct wire_hdr h;
	int i, n = 0;

	for (i = 0; i < dev.nsent; i++)
		if (!wire_hdr_decode(&h, dev.sent[i].buf, dev.sent[i].len) &&
		    h.type == WIRE_PING && dev.sent[i].qpn == BETA_QPN)
			n++;
	return n;
}

/* A probe datagram from beta with token. */
static void beta_probe(uint8_t type, uint32_t token)
{
	union ibv_gid gid;

	beta_gid(&gid);
	tp_harness_probe_from(type, peers[BETA].id, BETA_QPN, &gid, token);
}

/* Joined is not up: no data goes until beta answers our ping. */
static void test_probe_before_up(void **state)
{
	uint64_t t0 = util_now_ms(), v;
	int64_t token;

	assert_string_equal(beta_state(), "probing");
	assert_int_equal(tp_send(tp, &peers[BETA], "x", "hi", 2), -ENOTCONN);
	assert_int_equal(tp_probe_tick(tp, t0), TP_PROBE_FIRST_MS);
	assert_int_equal(pings(), 1);
	assert_int_equal(peer_use(&peers[BETA])->cnt.probe_tx, 1);
	token = tp_harness_last_ping();
	/* an answer to a ping we never sent changes nothing */
	beta_probe(WIRE_PONG, (uint32_t)token + 1);
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_string_equal(beta_state(), "probing");
	assert_int_equal(ups, 0);
	beta_probe(WIRE_PONG, (uint32_t)token);
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_string_equal(beta_state(), "up");
	assert_int_equal(ups, 1);
	assert_int_equal(peer_use(&peers[BETA])->cnt.probe_rx, 2);
	assert_int_equal(tp->totals.probe_rx, 2);
	/* up and idle: no ping, no look to come (no timer); data goes */
	assert_int_equal(tp_probe_tick(tp, t0 + 5000), -1);
	assert_int_equal(pings(), 1);
	assert_int_equal(read(tp->prog.efd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(tp_send(tp, &peers[BETA], "x", "hi", 2), 0);
	assert_int_equal(tp_send(tp, &peers[BETA], "x", "hi", 2), 0);
	/* the first send woke the progress thread, once, for the watch */
	assert_int_equal(read(tp->prog.efd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(v, 1);
	assert_int_equal(tp_probe_tick(tp, t0 + 5000), TP_PROBE_WATCH_MS);
}

/* Three pings unanswered: unreachable, with why; an answer later: up. */
static void test_probe_unreachable_recovers(void **state)
{
	uint64_t t0 = util_now_ms();
	const char *why = "datagrams to beta get no answer (qkey, pkey, "
			  "route or firewall?)";

	tp_probe_tick(tp, t0);
	assert_int_equal(tp_probe_tick(tp, t0 + 149), 1);
	assert_int_equal(pings(), 1);
	assert_int_equal(tp_probe_tick(tp, t0 + 150), 300);
	assert_int_equal(tp_probe_tick(tp, t0 + 450), 600);
	assert_int_equal(pings(), 3);
	assert_string_equal(beta_state(), "probing");
	assert_int_equal(fails, 0);
	assert_int_equal(tp_probe_tick(tp, t0 + 1050), TP_PROBE_SLOW_MS);
	assert_int_equal(pings(), 4);
	assert_string_equal(beta_state(), "unreachable");
	assert_string_equal(peer_use(&peers[BETA])->last_error, why);
	assert_int_equal(fails, 1);
	assert_int_equal(tp_send(tp, &peers[BETA], "x", "hi", 2), -ENOTCONN);
	/* pinged on, once a second, failed only once */
	assert_int_equal(tp_probe_tick(tp, t0 + 2050), TP_PROBE_SLOW_MS);
	assert_int_equal(pings(), 5);
	assert_int_equal(fails, 1);
	beta_probe(WIRE_PONG, (uint32_t)tp_harness_last_ping());
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_string_equal(beta_state(), "up");
	assert_string_equal(peer_use(&peers[BETA])->last_error, "");
	assert_int_equal(ups, 1);
}

/* Beta up by its answer to our first ping, at t0; nothing sent, the
 * watch has no look to come. */
static void beta_up_at(uint64_t t0)
{
	tp_probe_tick(tp, t0);
	beta_probe(WIRE_PONG, (uint32_t)tp_harness_last_ping());
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_string_equal(beta_state(), "up");
	assert_int_equal(tp_probe_tick(tp, t0), -1);
}

/* A peer up is watched: idle, it costs no ping and no timer; sent to,
 * it is pinged at the look TP_PROBE_WATCH_MS later, and its answer ends
 * that; the look that finds nothing sent is the last; sent to and silent
 * (its own pings prove nothing of ours), it is unreachable after three
 * pings, once; an answer brings it up again. */
static void test_probe_watch_up(void **state)
{
	uint64_t t0 = util_now_ms(), s1 = t0 + 2000;
	uint64_t l1 = s1 + TP_PROBE_WATCH_MS, l2 = l1 + TP_PROBE_WATCH_MS;
	uint64_t l3 = l2 + 1000 + TP_PROBE_WATCH_MS;

	beta_up_at(t0);
	/* idle: nothing sent, nothing to prove, nothing armed */
	assert_int_equal(tp_probe_tick(tp, t0 + 1000), -1);
	assert_int_equal(pings(), 1);
	/* sent to: one ping at the look, and its answer ends it */
	assert_int_equal(tp_send(tp, &peers[BETA], "x", "hi", 2), 0);
	assert_int_equal(tp_probe_tick(tp, s1), TP_PROBE_WATCH_MS);
	assert_int_equal(tp_probe_tick(tp, l1), TP_PROBE_SLOW_MS);
	assert_int_equal(pings(), 2);
	beta_probe(WIRE_PONG, (uint32_t)tp_harness_last_ping());
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_int_equal(tp_probe_tick(tp, l1 + 1000),
			 TP_PROBE_WATCH_MS - 1000);
	assert_int_equal(pings(), 2);
	assert_string_equal(beta_state(), "up");
	/* a look with nothing sent since the last is the last */
	assert_int_equal(tp_probe_tick(tp, l2), -1);
	assert_int_equal(tp_probe_tick(tp, l2 + 1000), -1);
	assert_int_equal(pings(), 2);
	/* sent to, and no answer: pings 1 and 2 s apart, unreachable 4 s
	 * after the third; beta's own ping does not count */
	assert_int_equal(tp_send(tp, &peers[BETA], "x", "hi", 2), 0);
	assert_int_equal(tp_probe_tick(tp, l2 + 1000), TP_PROBE_WATCH_MS);
	assert_int_equal(tp_probe_tick(tp, l3), TP_PROBE_SLOW_MS);
	beta_probe(WIRE_PING, 77);
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_int_equal(tp_probe_tick(tp, l3 + 1000), 2 * TP_PROBE_SLOW_MS);
	tp_probe_tick(tp, l3 + 3000);
	tp_probe_tick(tp, l3 + 5000); /* a look meanwhile changes nothing */
	assert_int_equal(pings(), 5);
	assert_string_equal(beta_state(), "up");
	assert_int_equal(fails, 0);
	assert_int_equal(tp_probe_tick(tp, l3 + 6999), 1);
	assert_string_equal(beta_state(), "up");
	tp_probe_tick(tp, l3 + 7000);
	assert_string_equal(beta_state(), "unreachable");
	assert_int_equal(fails, 1);
	assert_int_equal(pings(), 6);
	assert_int_equal(tp_send(tp, &peers[BETA], "x", "hi", 2), -ENOTCONN);
	tp_probe_tick(tp, l3 + 8000);
	assert_int_equal(fails, 1);
	assert_int_equal(pings(), 7);
	/* its answer: up again */
	beta_probe(WIRE_PONG, (uint32_t)tp_harness_last_ping());
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_string_equal(beta_state(), "up");
	assert_int_equal(ups, 2);
}

/* Beta's ping is answered with its token, once per batch; it makes us
 * ping beta at once, since beta has just installed us. */
static void test_probe_answers_joined(void **state)
{
	struct wire_hdr h;
	int i, pongs = 0;

	tp_probe_tick(tp, util_now_ms());
	usleep(20000); /* past TP_PROBE_GAP_MS on a coarse clock */
	dev.nsent = 0;
	beta_probe(WIRE_PING, 0xabcd);
	beta_probe(WIRE_PING, 0xabcd); /* both in slot 0: a duplicate */
	assert_int_equal(tp_recv_drain(tp), 2);
	for (i = 0; i < dev.nsent; i++) {
		assert_int_equal(
			wire_hdr_decode(&h, dev.sent[i].buf, dev.sent[i].len),
			0);
		assert_int_equal(dev.sent[i].qpn, BETA_QPN);
		if (h.type == WIRE_PONG) {
			assert_int_equal(h.msg_id, 0xabcd);
			assert_int_equal(h.src, peers[ALPHA].id);
			pongs++;
		}
	}
	assert_int_equal(pongs, 1);
	assert_int_equal(peer_use(&peers[BETA])->cnt.probe_answered, 1);
	tp_probe_tick(tp, util_now_ms());
	assert_int_equal(pings(), 1);
}

/* A stranger's ping, or one from beta once its session ended, gets no
 * answer. */
static void test_probe_strangers_unanswered(void **state)
{
	union ibv_gid gid;

	memset(&gid, 0, sizeof(gid));
	gid.raw[15] = 0x99;
	tp_harness_probe_from(WIRE_PING, peers[BETA].id, 0x777, &gid, 1);
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_int_equal(dev.nsent, 0);
	assert_int_equal(tp->totals.drops[DROP_UNKNOWN_SRC], 1);
	tp_peer_down(tp, &peers[BETA]);
	assert_string_equal(beta_state(), "idle");
	beta_probe(WIRE_PING, 2); /* lingering: accepted, not answered */
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_int_equal(dev.nsent, 0);
	assert_int_equal(tp_probe_tick(tp, util_now_ms()), -1);
	assert_int_equal(dev.nsent, 0);
}

/* One async event of type on port. */
static int event(enum ibv_event_type type, int port)
{
	struct ibv_async_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_type = type;
	ev.element.port_num = port;
	return tp_event_handle(tp, &ev);
}

/* Port down: every peer down with the port's reason, nothing probed;
 * back: probed again, up on the answer.  Another port's events and
 * events of no row change nothing. */
static void test_probe_port_events(void **state)
{
	tp_harness_probe_beta();
	assert_int_equal(ups, 1);
	assert_int_equal(event(IBV_EVENT_PORT_ERR, 2), 0);
	assert_int_equal(event(IBV_EVENT_QP_LAST_WQE_REACHED, 1), 0);
	assert_string_equal(beta_state(), "up");
	assert_int_equal(event(IBV_EVENT_PORT_ERR, 1), 1);
	assert_string_equal(beta_state(), "down");
	assert_string_equal(peer_use(&peers[BETA])->last_error,
			    "port 1 of rxe0 is down");
	assert_int_equal(fails, 1);
	assert_int_equal(tp_send(tp, &peers[BETA], "x", "hi", 2), -ENOTCONN);
	assert_int_equal(tp_probe_tick(tp, util_now_ms()), -1);
	assert_int_equal(pings(), 0);
	assert_int_equal(event(IBV_EVENT_PORT_ACTIVE, 1), 1);
	assert_string_equal(beta_state(), "probing");
	assert_string_equal(peer_use(&peers[BETA])->last_error, "");
	tp_harness_probe_beta();
	assert_int_equal(ups, 2);
	assert_int_equal(tp_send(tp, &peers[BETA], "x", "hi", 2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_probe_before_up, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_probe_watch_up, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_probe_unreachable_recovers,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_probe_answers_joined,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_probe_strangers_unanswered,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_probe_port_events, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
