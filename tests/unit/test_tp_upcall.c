/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for the transport's upcalls (tp_upcall.c, with tp_recv.c and
 * tp_rel.c feeding them): the receive path is fed by hand, through a fake
 * device whose CQ and QP are the verbs provider's function table, and
 * deliver runs with no lock of the engine held, so it may send (here a
 * reply with tp_send_async) in both delivery modes.  A refused reliable
 * message is not held: the stream moves on and its acks carry the
 * refusal; after a refusal for a full queue, later messages to that
 * channel are refused until a retry goes in, while other channels go on.
 */
#include "tp_harness.h"

/* The answers deliver gives. */
static int delivered, refuse, replied, done_status = 1;
static int refuse_rc = -EAGAIN; /* what a refusal returns */
static char got[64];

/* A reply finished (datagram mode: at once). */
static void reply_done(void *arg, int status, size_t len)
{
	done_status = status;
}

/* deliver: check the locks, answer on channel "pong", take the data. */
static int echo_deliver(void *arg, struct peer *p, const char *chan, void *data,
			size_t len)
{
	assert_ptr_equal(arg, &dev);
	assert_unlocked();
	if (refuse) {
		refuse--;
		return refuse_rc;
	}
	delivered++;
	snprintf(got, sizeof(got), "%s:%.*s", chan, (int)len, (char *)data);
	assert_int_equal(
		tp_send_async(tp, p, "pong", data, len, 0, reply_done, NULL),
		0);
	replied++;
	free(data);
	return 0;
}

/* announce: no lock held either. */
static void echo_announce(void *arg)
{
	assert_unlocked();
}

static const struct tp_ops echo_ops = {
	.deliver = echo_deliver,
	.announce = echo_announce,
};

/* An engine on the fake device, alpha local, beta up (probed). */
static int setup(const char *text)
{
	delivered = refuse = replied = 0;
	refuse_rc = -EAGAIN;
	done_status = 1;
	got[0] = '\0';
	if (tp_harness_open(text, &echo_ops, &dev))
		return -1;
	tp_harness_probe_beta();
	return 0;
}

/* datagram mode */
static int setup_datagram(void **state)
{
	return setup(TWO_NODES("datagram"));
}

/* datagram mode, partial messages due after 1 ms */
static int setup_quick_expiry(void **state)
{
	return setup(TWO_NODES("datagram\nmax_message = 1M\n"
			       "reassembly_timeout = 1"));
}

/* delivery = reliable */
static int setup_reliable(void **state)
{
	return setup(TWO_NODES("reliable"));
}

/* delivery = reliable, room in the ring for an ack per message for
 * thousands of them (the fake send CQ completes none) */
static int setup_reliable_many(void **state)
{
	return setup(TWO_NODES("reliable\nsend_depth = 8192"));
}

/* datagram mode, with gamma configured too */
static int setup_three(void **state)
{
	return setup(TWO_NODES("datagram") "[node gamma]\naddr = 10.0.2.17\n");
}

/* Everything setup made, in reverse. */
static int teardown(void **state)
{
	return tp_harness_close();
}

/* Beta sends "hello" on chan in receive slot 0 (psn psn when reliable,
 * with rflags). */
static void beta_sends_on(const char *chan, uint32_t msg_id, uint32_t psn,
			  uint32_t rflags)
{
	uint8_t *slot = tp->rx.buf;
	union ibv_gid gid;
	struct wire_rel w;
	size_t dlen, room = MTU;

	if (tp_peer_reliable(tp, &peers[BETA]))
		room -= WIRE_REL_LEN;
	dlen = wire_frag_build(slot + GRH, room, peers[BETA].id, msg_id, chan,
			       "hello", 5, 0);
	assert_true(dlen > 0);
	if (tp_peer_reliable(tp, &peers[BETA])) {
		memset(&w, 0, sizeof(w));
		/* the session the bootstrap agreed on (tp_rel_attach) */
		w.sess = tp->rel.peer[BETA]->rx.sess;
		w.psn = psn;
		w.rflags = WIRE_REL_ACKREQ | rflags;
		dlen = wire_rel_put(slot + GRH, dlen, &w);
	}
	beta_gid(&gid);
	tp_harness_arrive(BETA_QPN, &gid, dlen);
}

/* Beta sends the first fragment of message msg_id, of max_message
 * bytes, in receive slot 0, with flags (WIRE_FLAG_*). */
static void beta_first(uint32_t msg_id, uint8_t flags)
{
	static uint8_t big[1 << 20];
	uint8_t *slot = tp->rx.buf;
	union ibv_gid gid;
	size_t dlen;

	dlen = wire_frag_build(slot + GRH, MTU, peers[BETA].id, msg_id, "big",
			       big, cfg.max_message, 0);
	assert_true(dlen > 0);
	wire_set_flag(slot + GRH, flags);
	beta_gid(&gid);
	tp_harness_arrive(BETA_QPN, &gid, dlen);
}

/* Beta sends "hello" on "ping" in receive slot 0 (psn 0 when reliable). */
static void beta_sends(uint32_t msg_id)
{
	beta_sends_on("ping", msg_id, 0, 0);
}

/* How many DATA datagrams on channel chan went to beta. */
static int sent_on(const char *chan)
{
	struct wire_hdr h;
	int i, n = 0;

	for (i = 0; i < dev.nsent; i++) {
		const struct sent *s = &dev.sent[i];

		assert_int_equal(s->qpn, BETA_QPN);
		assert_int_equal(wire_hdr_decode(&h, s->buf, s->len), 0);
		if (h.type == WIRE_DATA && h.chan_len == strlen(chan) &&
		    !memcmp(s->buf + WIRE_HDR_LEN, chan, h.chan_len))
			n++;
	}
	return n;
}

/* datagram: deliver runs unlocked and its reply goes out at once. */
static void test_datagram_deliver_sends(void **state)
{
	beta_sends(1);
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_int_equal(delivered, 1);
	assert_string_equal(got, "ping:hello");
	assert_int_equal(replied, 1);
	assert_int_equal(done_status, 0);
	assert_int_equal(sent_on("pong"), 1);
	assert_int_equal(peer_use(&peers[BETA])->cnt.msgs_rx, 1);
	assert_int_equal(peer_use(&peers[BETA])->cnt.msgs_tx, 1);
}

/*
 * A datagram is its sender's by QP and GID and by the node its header
 * names: gamma, expected at beta's very QPN and GID (its hello said so),
 * takes none of beta's datagrams, which are delivered as beta's.  The
 * bootstrap can tell: beta, up, holds that QPN and GID against any other
 * node's hello (tp_addr_holder), while gamma, only expected, holds
 * nothing against beta's.
 */
static void test_datagram_sender_named(void **state)
{
	struct peer_addr addr;

	memset(&addr, 0, sizeof(addr));
	addr.qpn = BETA_QPN;
	addr.mtu = IBV_MTU_1024;
	beta_gid(&addr.gid);
	assert_int_equal(tp_addr_holder(tp, &peers[2], &addr), BETA);
	assert_int_equal(tp_addr_holder(tp, &peers[BETA], &addr), -1);
	addr.qpn++;
	assert_int_equal(tp_addr_holder(tp, &peers[2], &addr), -1);
	addr.qpn--;
	tp_peer_expect(tp, &peers[2], &addr);
	assert_int_equal(tp_addr_holder(tp, &peers[BETA], &addr), -1);
	beta_sends(1);
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_int_equal(delivered, 1);
	assert_string_equal(got, "ping:hello");
	assert_int_equal(peer_use(&peers[BETA])->cnt.msgs_rx, 1);
	assert_int_equal(peer_use(&peers[2])->cnt.drops[DROP_MALFORMED], 0);
	assert_int_equal(peer_use(&peers[BETA])->cnt.drops[DROP_MALFORMED], 0);
}

/* datagram: a refused message is a drop, never offered again. */
static void test_datagram_refused_drops(void **state)
{
	refuse = 1;
	beta_sends(2);
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_int_equal(delivered, 0);
	assert_int_equal(peer_use(&peers[BETA])->cnt.drops[DROP_QUEUE_FULL], 1);
	assert_int_equal(peer_use(&peers[BETA])->cnt.msgs_rx, 0);
	assert_int_equal(sent_on("pong"), 0);
}

/* datagram: each cause of a refusal (fs.h's fs_deliver) is its own drop
 * reason in .status. */
static void test_datagram_refusal_causes(void **state)
{
	static const struct {
		int rc;
		enum peer_drop why;
	} causes[] = {
		{-EAGAIN, DROP_QUEUE_FULL},
		{-ENOBUFS, DROP_MEMORY_LIMIT},
		{-ENOSPC, DROP_MAX_CHANNELS},
		{-EINVAL, DROP_BAD_NAME},
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(causes); i++) {
		refuse = 1;
		refuse_rc = causes[i].rc;
		beta_sends(10 + (uint32_t)i);
		assert_int_equal(tp_recv_drain(tp), 1);
		assert_int_equal(
			peer_use(&peers[BETA])->cnt.drops[causes[i].why], 1);
	}
	assert_int_equal(delivered, 0);
	assert_int_equal(peer_use(&peers[BETA])->cnt.msgs_rx, 0);
}

/* reliable: deliver runs unlocked, after the batch; its reply joins our
 * stream to beta and goes out with the ack. */
static void test_reliable_deliver_sends(void **state)
{
	beta_sends(3);
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_int_equal(delivered, 1);
	assert_string_equal(got, "ping:hello");
	assert_int_equal(replied, 1);
	assert_int_equal(done_status, 1); /* not acked yet */
	assert_int_equal(sent_on("pong"), 1);
	assert_int_equal(peer_use(&peers[BETA])->cnt.msgs_rx, 1);
}

/*
 * The refusal code of psn in the last ACK to beta; checks that no DATA
 * datagram to beta carried an ack meanwhile (one could cover a refused
 * psn without saying so).  -1 when no ACK went.
 */
static int acked_code(uint32_t psn)
{
	struct wire_hdr h;
	struct wire_rel w;
	rel_codes c;
	int i, code = -1;

	for (i = 0; i < dev.nsent; i++) {
		const struct sent *s = &dev.sent[i];

		assert_int_equal(wire_hdr_decode(&h, s->buf, s->len), 0);
		assert_true(wire_rel_get(s->buf, s->len, &w) >= 0);
		if (h.type == WIRE_DATA) {
			assert_false(w.rflags & WIRE_REL_ACK);
			continue;
		}
		if (!(w.rflags & WIRE_REL_ACK))
			continue;
		/* one may go while the message is offered: ack = psn */
		assert_true(w.rflags & WIRE_REL_CODES);
		memcpy(c.plane, w.codes, sizeof(c.plane));
		code = w.ack == psn + 1 ? (int)rel_codes_get(&c, w.ack, psn)
					: -1;
	}
	return code;
}

/* Beta's datagram psn on chan arrives and is settled; what alpha's acks
 * say of it. */
static int beta_arrives(const char *chan, uint32_t psn, uint32_t rflags)
{
	dev.nsent = 0; /* only what this one makes */
	beta_sends_on(chan, 10 + psn, psn, rflags);
	assert_int_equal(tp_recv_drain(tp), 1);
	tp_rel_service(tp, 1);
	assert_int_equal(rel_rx_next(&tp->rel.peer[BETA]->rx), psn + 1);
	assert_false(tp->rel.peer[BETA]->held);
	return acked_code(psn);
}

/* Beta's "hello" at psn on "ping" is delivered, in order. */
static void beta_delivers(uint32_t psn)
{
	int before = delivered;

	beta_sends_on("ping", 20 + psn, psn, 0);
	assert_int_equal(tp_recv_drain(tp), 1);
	tp_rel_service(tp, 1);
	assert_int_equal(delivered, before + 1);
	assert_int_equal(rel_rx_next(&tp->rel.peer[BETA]->rx), psn + 1);
}

/* Beta (installed again, its cached AH) announces max_message and mtu,
 * booted as boot; the bootstrap's tp_peer_up. */
static void beta_hello_as(uint32_t max_message, enum ibv_mtu mtu, uint32_t boot)
{
	struct peer_addr addr;

	memset(&addr, 0, sizeof(addr));
	addr.qpn = BETA_QPN;
	addr.mtu = mtu;
	addr.max_message = max_message;
	addr.boot = boot;
	beta_gid(&addr.gid);
	assert_int_equal(tp_peer_up(tp, &peers[BETA], &addr, NULL, ROUTE_GID),
			 0);
}

/* The same, in the incarnation the harness met. */
static void beta_hello(uint32_t max_message, enum ibv_mtu mtu)
{
	beta_hello_as(max_message, mtu, 0);
}

/* Beta met again at its address, booted as boot, and up (probed). */
static void beta_met(uint32_t boot)
{
	beta_hello_as(0, IBV_MTU_1024, boot);
	tp_harness_probe_beta();
}

/*
 * reliable (issue 33): beta's session idles out, its streams (15 KiB)
 * go on the progress thread's next pass, and where they stood stays;
 * met again, the same incarnation's streams go on from there in their
 * sessions (beta may have kept its own), a new incarnation's afresh.
 */
static void test_reliable_idle_lets_go(void **state)
{
	uint32_t rx_sess, tx_sess;

	beta_delivers(0);
	assert_int_equal(replied, 1); /* our stream to beta moved too */
	rx_sess = tp->rel.peer[BETA]->rx.sess;
	tx_sess = tp->rel.peer[BETA]->tx.sess;
	tp_peer_down(tp, &peers[BETA]);
	tp_peer_idle(tp, &peers[BETA]);
	assert_non_null(tp->rel.peer[BETA]); /* the progress thread's */
	tp_rel_service(tp, 0);
	assert_null(tp->rel.peer[BETA]);
	assert_int_equal(tp->rel.nactive, 0);
	beta_met(0);
	assert_non_null(tp->rel.peer[BETA]);
	assert_int_equal(tp->rel.peer[BETA]->rx.sess, rx_sess);
	assert_int_equal(tp->rel.peer[BETA]->tx.sess, tx_sess);
	assert_int_equal(tp->rel.peer[BETA]->tx.nxt, 1);
	beta_delivers(1);
	/* met again before the pass: kept */
	tp_peer_down(tp, &peers[BETA]);
	tp_peer_idle(tp, &peers[BETA]);
	beta_met(0);
	tp_rel_service(tp, 0);
	assert_non_null(tp->rel.peer[BETA]);
	beta_delivers(2);
	/* let go, then a new incarnation of beta: both afresh */
	tp_peer_down(tp, &peers[BETA]);
	tp_peer_idle(tp, &peers[BETA]);
	tp_rel_service(tp, 0);
	assert_null(tp->rel.peer[BETA]);
	beta_met(0x5eed);
	assert_int_not_equal(tp->rel.peer[BETA]->rx.sess, rx_sess);
	assert_int_equal(tp->rel.peer[BETA]->tx.nxt, 0);
	beta_delivers(0);
}

/*
 * reliable: a message refused for a full queue is not held (the stream
 * moves on, no drop counted) and the ack says FULL; a later one to that
 * channel, not flagged retry, is refused at once, never offered; another
 * channel's message goes in meanwhile; then the retry goes in, and the
 * channel takes what follows.
 */
static void test_reliable_full_channel_alone(void **state)
{
	refuse = 1;
	refuse_rc = -EAGAIN;
	assert_int_equal(beta_arrives("ping", 0, 0), REL_CODE_FULL);
	assert_int_equal(delivered, 0);
	assert_int_equal(refuse, 0);
	assert_int_equal(peer_use(&peers[BETA])->cnt.drops[DROP_QUEUE_FULL], 0);
	assert_int_equal(beta_arrives("ping", 1, 0), REL_CODE_FULL);
	assert_int_equal(delivered, 0); /* not offered: it waits its turn */
	assert_int_equal(beta_arrives("other", 2, 0), REL_CODE_NONE);
	assert_int_equal(delivered, 1);
	assert_string_equal(got, "other:hello");
	assert_int_equal(beta_arrives("ping", 3, WIRE_REL_RETRY),
			 REL_CODE_NONE);
	assert_int_equal(delivered, 2);
	assert_string_equal(got, "ping:hello");
	assert_int_equal(beta_arrives("ping", 4, 0), REL_CODE_NONE);
	assert_int_equal(delivered, 3);
	assert_int_equal(peer_use(&peers[BETA])->cnt.drops[DROP_QUEUE_FULL], 0);
	assert_int_equal(peer_use(&peers[BETA])->cnt.msgs_rx, 3);
}

/*
 * reliable: the channels that wait for a retry are at most the psns of
 * one window (REL_SACK_BITS), however many names a peer's messages are
 * refused on (each a fresh one, its memory share full); a channel's
 * entry goes once a window has passed, since the sender knows by then
 * and sends it only retries, so a later message to it goes in.
 */
static void test_reliable_full_names_bounded(void **state)
{
	char name[16];
	uint32_t psn;

	refuse_rc = -ENOBUFS;
	for (psn = 0; psn < 3000; psn++) {
		snprintf(name, sizeof(name), "n%u", psn);
		refuse = 1;
		assert_int_equal(beta_arrives(name, psn, 0), REL_CODE_FULL);
		assert_true(tp->rel.peer[BETA]->nfull <= REL_SACK_BITS);
	}
	assert_int_equal(delivered, 0);
	/* within the window of its refusal (psn 2999): in flight before
	 * the sender knew, refused in turn; a window later it goes in */
	assert_int_equal(beta_arrives("n2999", psn, 0), REL_CODE_FULL);
	for (psn++; psn < 2999 + REL_SACK_BITS; psn++)
		assert_int_equal(beta_arrives("other", psn, 0), REL_CODE_NONE);
	assert_int_equal(beta_arrives("n2999", psn, 0), REL_CODE_NONE);
	assert_string_equal(got, "n2999:hello");
	assert_int_equal(tp->rel.peer[BETA]->nfull, 0);
	beta_sends_on("n0", 1, psn + 1, 0); /* no refusal left to ack */
	assert_int_equal(tp_recv_drain(tp), 1);
	tp_rel_service(tp, 1);
	assert_string_equal(got, "n0:hello");
}

/* reliable: a name the receiver refuses (a leading '.': only a peer that
 * breaks the sender's own check sends one) is refused for good, EINVAL,
 * never offered, and the next message goes in. */
static void test_reliable_bad_name(void **state)
{
	dev.nsent = 0;
	beta_sends_on("xbad", 10, 0, 0);
	tp->rx.buf[GRH + WIRE_HDR_LEN] = '.';
	assert_int_equal(tp_recv_drain(tp), 1);
	tp_rel_service(tp, 1);
	assert_int_equal(acked_code(0), REL_CODE_INVAL);
	assert_int_equal(delivered, 0);
	assert_int_equal(peer_use(&peers[BETA])->cnt.drops[DROP_MALFORMED], 1);
	beta_delivers(1);
	assert_int_equal(delivered, 1);
}

/* reliable: a refusal for good (the channel cap) is acked with its code
 * and counted as its cause's drop, as in datagram mode; the channel does
 * not wait for a retry. */
static void test_reliable_refused_for_good(void **state)
{
	refuse = 1;
	refuse_rc = -ENOSPC;
	assert_int_equal(beta_arrives("ping", 0, 0), REL_CODE_NOSPC);
	assert_int_equal(peer_use(&peers[BETA])->cnt.drops[DROP_MAX_CHANNELS],
			 1);
	assert_int_equal(peer_use(&peers[BETA])->cnt.drops[DROP_QUEUE_FULL], 0);
	beta_delivers(1);
	assert_int_equal(delivered, 1);
}

/*
 * all/: the group's messages fit what its members take now, not the
 * smallest any member ever said: beta's hello with max_message = 1 and
 * mtu = 256 bounds every all/ write while it stands, and no longer once
 * beta says otherwise, or leaves.
 */
static void test_group_bounds_follow_members(void **state)
{
	char big[600];

	memset(big, 'x', sizeof(big));
	tp->mcast.state = TP_MCAST_JOINED;
	tp->mcast.ah = (struct ibv_ah *)&dev.ah;
	beta_hello(1, IBV_MTU_256);
	assert_int_equal(tp_mcast_queue(tp, "c", "hi", 2), -EMSGSIZE);
	beta_hello(cfg.max_message, IBV_MTU_1024);
	dev.nsent = 0;
	assert_int_equal(tp_mcast_queue(tp, "c", big, sizeof(big)), 0);
	tp_flush(tp);
	assert_int_equal(dev.nsent, 1); /* one datagram: 1024 bytes fit */
	assert_int_equal(dev.sent[0].qpn, TP_MCAST_QPN);
	beta_hello(1, IBV_MTU_256);
	assert_int_equal(tp_mcast_queue(tp, "c", "hi", 2), -EMSGSIZE);
	tp_peer_down(tp, &peers[BETA]);
	dev.nsent = 0;
	assert_int_equal(tp_mcast_queue(tp, "c", big, sizeof(big)), 0);
	tp_flush(tp);
	assert_int_equal(dev.nsent, 1);
	tp->mcast.ah = NULL;
}

/*
 * datagram: a peer's partial messages beyond its share of reassembly
 * memory are dropped and counted by cause; its group messages count in
 * the same share; partials past reassembly_timeout are counted expired.
 */
static void test_datagram_reasm_drops(void **state)
{
	atomic_uint_fast64_t *d = peer_use(&peers[BETA])->cnt.drops;
	unsigned i, held;

	assert_int_equal(cfg.max_message, 1 << 20);
	for (i = 0; i < 100; i++) {
		beta_first(i, 0);
		assert_int_equal(tp_recv_drain(tp), 1);
	}
	held = wire_reasm_pending(tp->rx.reasm);
	assert_true(held > 32 && held < 64);
	assert_int_equal(d[DROP_REASM_SHARE], 100 - held);
	assert_int_equal(d[DROP_REASM_BUDGET], 0);
	assert_int_equal(d[DROP_QUEUE_FULL], 0);
	beta_first(0, WIRE_FLAG_MCAST);
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_int_equal(peer_use(&peers[BETA])->cnt.mcast_rx, 1);
	assert_int_equal(d[DROP_REASM_SHARE], 101 - held);
	assert_int_equal(wire_reasm_pending(tp->rx.reasm), held);
	usleep(20 * 1000);
	assert_int_equal(tp_recv_expire(tp), -1);
	assert_int_equal(d[DROP_REASM_TIMEOUT], held);
	assert_int_equal(tp->totals.drops[DROP_REASM_TIMEOUT], held);
	assert_int_equal(delivered, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_datagram_deliver_sends,
						setup_datagram, teardown),
		cmocka_unit_test_setup_teardown(test_datagram_sender_named,
						setup_three, teardown),
		cmocka_unit_test_setup_teardown(test_datagram_refused_drops,
						setup_datagram, teardown),
		cmocka_unit_test_setup_teardown(test_datagram_reasm_drops,
						setup_quick_expiry, teardown),
		cmocka_unit_test_setup_teardown(test_datagram_refusal_causes,
						setup_datagram, teardown),
		cmocka_unit_test_setup_teardown(
			test_group_bounds_follow_members, setup_datagram,
			teardown),
		cmocka_unit_test_setup_teardown(test_reliable_deliver_sends,
						setup_reliable, teardown),
		cmocka_unit_test_setup_teardown(test_reliable_idle_lets_go,
						setup_reliable, teardown),
		cmocka_unit_test_setup_teardown(
			test_reliable_full_channel_alone, setup_reliable,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_reliable_full_names_bounded, setup_reliable_many,
			teardown),
		cmocka_unit_test_setup_teardown(test_reliable_refused_for_good,
						setup_reliable, teardown),
		cmocka_unit_test_setup_teardown(test_reliable_bad_name,
						setup_reliable, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
