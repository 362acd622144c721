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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "unit.h"
#include "../../src/tp_int.h"
#include "config.h"
#include "peer.h"
#include "util.h"
#include "wire.h"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define TWO_NODES(delivery)                                                    \
	"[global]\nroute = gid\ndelivery = " delivery "\n"                     \
	"[node alpha]\naddr = 10.0.2.15\n"                                     \
	"[node beta]\naddr = 10.0.2.16\n"

#define ALPHA	 0
#define BETA	 1
#define BETA_QPN 0x123
#define MTU	 1024
#define GRH	 sizeof(struct ibv_grh)
#define MAX_SENT 64

/* A datagram the engine posted: where it went and its bytes. */
struct sent {
	uint32_t qpn;
	size_t len;
	uint8_t buf[MTU];
};

/* The fake device and what it saw; one test at a time. */
static struct {
	struct ibv_context ctx;
	struct ibv_cq scq, rcq;
	struct ibv_qp qp;
	struct ibv_mr mr;
	int ah; /* its address is the AH */
	struct ibv_wc rwc[4];
	int nrwc;
	struct sent sent[MAX_SENT];
	int nsent;
} dev;

/* The engine under test and the answers deliver gives. */
static struct config cfg;
static struct peer *peers;
static struct tp *tp;
static int delivered, refuse, replied, done_status = 1;
static int refuse_rc = -EAGAIN; /* what a refusal returns */
static char got[64];

/* Receive completions queued by the test; the send CQ stays empty. */
static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	int k = 0;

	if (cq != &dev.rcq)
		return 0;
	while (k < n && k < dev.nrwc) {
		wc[k] = dev.rwc[k];
		k++;
	}
	memmove(dev.rwc, dev.rwc + k, (dev.nrwc - k) * sizeof(dev.rwc[0]));
	dev.nrwc -= k;
	return k;
}

/* Record every WR of the chain. */
static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad)
{
	for (; wr; wr = wr->next) {
		struct sent *s = &dev.sent[dev.nsent++];

		assert_true(dev.nsent <= MAX_SENT);
		assert_int_equal(wr->num_sge, 1);
		assert_ptr_equal(wr->wr.ud.ah, (struct ibv_ah *)&dev.ah);
		s->qpn = wr->wr.ud.remote_qpn;
		s->len = wr->sg_list[0].length;
		memcpy(s->buf, (void *)(uintptr_t)wr->sg_list[0].addr, s->len);
	}
	return 0;
}

/* Receives are always taken. */
static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad)
{
	return 0;
}

/* Every engine lock is free: an upcall may call the engine back. */
static void assert_unlocked(void)
{
	assert_int_equal(pthread_rwlock_trywrlock(&tp->rx.srclock), 0);
	pthread_rwlock_unlock(&tp->rx.srclock);
	assert_int_equal(pthread_mutex_trylock(&tp->rx.rlock), 0);
	pthread_mutex_unlock(&tp->rx.rlock);
	assert_int_equal(pthread_mutex_trylock(&tp->rel.lock), 0);
	pthread_mutex_unlock(&tp->rel.lock);
	assert_int_equal(pthread_mutex_trylock(&tp->ring.lock), 0);
	pthread_mutex_unlock(&tp->ring.lock);
}

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

/* Beta's GID, as its datagrams carry it in the GRH. */
static void beta_gid(union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[0] = 0xfe;
	gid->raw[1] = 0x80;
	gid->raw[15] = 0x16;
}

/* An engine on the fake device, alpha local, beta up. */
static int setup(const char *text)
{
	char err[CONFIG_ERR_MAX];
	struct peer_addr addr;

	memset(&dev, 0, sizeof(dev));
	delivered = refuse = replied = 0;
	refuse_rc = -EAGAIN;
	done_status = 1;
	got[0] = '\0';
	dev.ctx.ops.poll_cq = fake_poll_cq;
	dev.ctx.ops.post_send = fake_post_send;
	dev.ctx.ops.post_recv = fake_post_recv;
	dev.scq.context = dev.rcq.context = dev.qp.context = &dev.ctx;
	memset(&cfg, 0, sizeof(cfg));
	if (config_load_string(text, "t.ini", &cfg, err, sizeof(err)) ||
	    config_select_local(&cfg, "alpha", err, sizeof(err)) ||
	    peer_table_open(&peers, &cfg))
		return -1;
	tp = calloc(1, sizeof(*tp));
	tp->cfg = &cfg;
	tp->peers = peers;
	tp->npeers = cfg.nnodes;
	tp->ops = echo_ops;
	tp->arg = &dev;
	tp->self_id = peers[ALPHA].id;
	tp->info.mtu_bytes = MTU;
	tp->info.link_layer = IBV_LINK_LAYER_ETHERNET;
	tp->msg_ids = calloc(tp->npeers, sizeof(*tp->msg_ids));
	tp->dev.qp = &dev.qp;
	tp->dev.scq = &dev.scq;
	tp->dev.rcq = &dev.rcq;
	tp->prog.efd = eventfd(0, EFD_NONBLOCK);
	if (tp_ring_open(tp) || tp_recv_open(tp) || tp_rel_open(tp))
		return -1;
	tp->ring.buf = calloc(cfg.send_depth, MTU);
	tp->ring.mr = &dev.mr;
	tp->rx.slot = MTU + GRH;
	tp->rx.buf = calloc(cfg.recv_depth, tp->rx.slot);
	tp->rx.mr = &dev.mr;
	if (tp_recv_post(tp))
		return -1;
	memset(&addr, 0, sizeof(addr));
	addr.qpn = BETA_QPN;
	addr.mtu = IBV_MTU_1024;
	beta_gid(&addr.gid);
	tp_peer_up(tp, &peers[BETA], &addr, (struct ibv_ah *)&dev.ah,
		   ROUTE_GID);
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

/* Everything setup made, in reverse (no QP to destroy: it is fake). */
static int teardown(void **state)
{
	int i;

	for (i = 0; i < tp->npeers; i++)
		tp_rel_reset(tp, &tp->peers[i], -ENOTCONN, 1);
	free(tp->rx.buf);
	free(tp->ring.buf);
	tp_rel_close(tp);
	tp_recv_close(tp);
	tp_ring_close(tp);
	close(tp->prog.efd);
	free((void *)tp->msg_ids);
	free(tp);
	peer_table_close(peers, cfg.nnodes);
	config_free(&cfg);
	return 0;
}

/* Beta sends "hello" on chan in receive slot 0 (psn psn when reliable,
 * with rflags). */
static void beta_sends_on(const char *chan, uint32_t msg_id, uint32_t psn,
			  uint32_t rflags)
{
	uint8_t *slot = tp->rx.buf;
	struct ibv_grh *grh = (struct ibv_grh *)slot;
	struct ibv_wc *wc = &dev.rwc[dev.nrwc++];
	struct wire_rel w;
	size_t dlen, room = MTU;

	if (tp_peer_reliable(tp, &peers[BETA]))
		room -= WIRE_REL_LEN;
	memset(grh, 0, GRH);
	grh->version_tclass_flow = htobe32(6u << 28);
	beta_gid(&grh->sgid);
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
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = 0;
	wc->status = IBV_WC_SUCCESS;
	wc->byte_len = GRH + dlen;
	wc->src_qp = BETA_QPN;
	wc->wc_flags = IBV_WC_GRH;
}

/* Beta sends the first fragment of message msg_id, of max_message
 * bytes, in receive slot 0, with flags (WIRE_FLAG_*). */
static void beta_first(uint32_t msg_id, uint8_t flags)
{
	static uint8_t big[1 << 20];
	uint8_t *slot = tp->rx.buf;
	struct ibv_grh *grh = (struct ibv_grh *)slot;
	struct ibv_wc *wc = &dev.rwc[dev.nrwc++];
	size_t dlen;

	memset(grh, 0, GRH);
	grh->version_tclass_flow = htobe32(6u << 28);
	beta_gid(&grh->sgid);
	dlen = wire_frag_build(slot + GRH, MTU, peers[BETA].id, msg_id, "big",
			       big, cfg.max_message, 0);
	assert_true(dlen > 0);
	wire_set_flag(slot + GRH, flags);
	memset(wc, 0, sizeof(*wc));
	wc->status = IBV_WC_SUCCESS;
	wc->byte_len = GRH + dlen;
	wc->src_qp = BETA_QPN;
	wc->wc_flags = IBV_WC_GRH;
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
	assert_int_equal(peers[BETA].cnt.msgs_rx, 1);
	assert_int_equal(peers[BETA].cnt.msgs_tx, 1);
}

/* datagram: a refused message is a drop, never offered again. */
static void test_datagram_refused_drops(void **state)
{
	refuse = 1;
	beta_sends(2);
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_int_equal(delivered, 0);
	assert_int_equal(peers[BETA].cnt.drops[DROP_QUEUE_FULL], 1);
	assert_int_equal(peers[BETA].cnt.msgs_rx, 0);
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
		assert_int_equal(peers[BETA].cnt.drops[causes[i].why], 1);
	}
	assert_int_equal(delivered, 0);
	assert_int_equal(peers[BETA].cnt.msgs_rx, 0);
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
	assert_int_equal(peers[BETA].cnt.msgs_rx, 1);
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
	assert_int_equal(peers[BETA].cnt.drops[DROP_QUEUE_FULL], 0);
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
	assert_int_equal(peers[BETA].cnt.drops[DROP_QUEUE_FULL], 0);
	assert_int_equal(peers[BETA].cnt.msgs_rx, 3);
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
	assert_int_equal(peers[BETA].cnt.drops[DROP_MALFORMED], 1);
	assert_int_equal(beta_arrives("ping", 1, 0), REL_CODE_NONE);
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
	assert_int_equal(peers[BETA].cnt.drops[DROP_MAX_CHANNELS], 1);
	assert_int_equal(peers[BETA].cnt.drops[DROP_QUEUE_FULL], 0);
	assert_int_equal(beta_arrives("ping", 1, 0), REL_CODE_NONE);
	assert_int_equal(delivered, 1);
}

/*
 * datagram: a peer's partial messages beyond its share of reassembly
 * memory are dropped and counted by cause; its group messages count in
 * the same share; partials past reassembly_timeout are counted expired.
 */
static void test_datagram_reasm_drops(void **state)
{
	atomic_uint_fast64_t *d = peers[BETA].cnt.drops;
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
	assert_int_equal(peers[BETA].cnt.mcast_rx, 1);
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
		cmocka_unit_test_setup_teardown(test_datagram_refused_drops,
						setup_datagram, teardown),
		cmocka_unit_test_setup_teardown(test_datagram_reasm_drops,
						setup_quick_expiry, teardown),
		cmocka_unit_test_setup_teardown(test_datagram_refusal_causes,
						setup_datagram, teardown),
		cmocka_unit_test_setup_teardown(test_reliable_deliver_sends,
						setup_reliable, teardown),
		cmocka_unit_test_setup_teardown(
			test_reliable_full_channel_alone, setup_reliable,
			teardown),
		cmocka_unit_test_setup_teardown(test_reliable_refused_for_good,
						setup_reliable, teardown),
		cmocka_unit_test_setup_teardown(test_reliable_bad_name,
						setup_reliable, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
