/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the unit tests of the transport share (test_tp_upcall.c,
 * test_tp_probe.c): an engine on a fake device, whose CQ and QP are the
 * verbs provider's function table, so that a test feeds receive
 * completions by hand and sees every datagram posted; alpha is local,
 * beta installed (joined) at BETA_QPN through the fake AH.
 */
#ifndef IBFS_TP_HARNESS_H
#define IBFS_TP_HARNESS_H

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

/* The engine under test. */
static struct config cfg;
static struct peer *peers;
static struct tp *tp;

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

/* Beta's GID, as its datagrams carry it in the GRH. */
static void beta_gid(union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[0] = 0xfe;
	gid->raw[1] = 0x80;
	gid->raw[15] = 0x16;
}

/* beta's state as .status names it. */
static inline const char *beta_state(void)
{
	struct peer *p = &peers[BETA];
	const char *s;

	pthread_mutex_lock(&p->lock);
	s = peer_state_name(peer_state(p));
	pthread_mutex_unlock(&p->lock);
	return s;
}

/* An engine on the fake device with ops, alpha local, beta joined (not
 * up until a probe of it is answered: tp_harness_probe_beta). */
static int tp_harness_open(const char *text, const struct tp_ops *ops,
			   void *arg)
{
	char err[CONFIG_ERR_MAX];
	struct peer_addr addr;

	memset(&dev, 0, sizeof(dev));
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
	tp->ops = *ops;
	tp->arg = arg;
	tp->self_id = peers[ALPHA].id;
	tp->info.mtu_bytes = MTU;
	tp->info.link_layer = IBV_LINK_LAYER_ETHERNET;
	tp->info.port = 1;
	snprintf(tp->info.device, sizeof(tp->info.device), "rxe0");
	tp->msg_ids = calloc(tp->npeers, sizeof(*tp->msg_ids));
	tp->dev.qp = &dev.qp;
	tp->dev.scq = &dev.scq;
	tp->dev.rcq = &dev.rcq;
	tp->prog.efd = eventfd(0, EFD_NONBLOCK);
	pthread_mutex_init(&tp->info_lock, NULL);
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
	return tp_peer_up(tp, &peers[BETA], &addr, (struct ibv_ah *)&dev.ah,
			  ROUTE_GID);
}

/* Everything tp_harness_open made, in reverse (no QP: it is fake). */
static int tp_harness_close(void)
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
	pthread_mutex_destroy(&tp->info_lock);
	free((void *)tp->msg_ids);
	free(tp);
	peer_table_close(peers, cfg.nnodes);
	config_free(&cfg);
	return 0;
}

/* A completion of dlen bytes in receive slot 0 from src_qp, whose GRH
 * names gid; the caller wrote the datagram after the GRH. */
static void tp_harness_arrive(uint32_t src_qp, const union ibv_gid *gid,
			      size_t dlen)
{
	struct ibv_grh *grh = (struct ibv_grh *)tp->rx.buf;
	struct ibv_wc *wc = &dev.rwc[dev.nrwc++];

	memset(grh, 0, GRH);
	grh->version_tclass_flow = htobe32(6u << 28);
	grh->sgid = *gid;
	memset(wc, 0, sizeof(*wc));
	wc->status = IBV_WC_SUCCESS;
	wc->byte_len = GRH + dlen;
	wc->src_qp = src_qp;
	wc->wc_flags = IBV_WC_GRH;
}

/* A probe datagram (type) from node id at qpn and gid, with token. */
static void tp_harness_probe_from(uint8_t type, uint32_t id, uint32_t qpn,
				  const union ibv_gid *gid, uint32_t token)
{
	tp_harness_arrive(qpn, gid,
			  wire_probe_build(tp->rx.buf + GRH, type, id, token));
}

/* The token of the latest ping posted, -1 if none. */
static int64_t tp_harness_last_ping(void)
{
	struct wire_hdr h;
	int i;

	for (i = dev.nsent - 1; i >= 0; i--)
		if (!wire_hdr_decode(&h, dev.sent[i].buf, dev.sent[i].len) &&
		    h.type == WIRE_PING)
			return h.msg_id;
	return -1;
}

/* Beta's daemon answers the latest ping: beta is up. */
static void tp_harness_probe_beta(void)
{
	union ibv_gid gid;
	int64_t token;

	tp_probe_tick(tp, util_now_ms());
	token = tp_harness_last_ping();
	assert_true(token >= 0);
	beta_gid(&gid);
	tp_harness_probe_from(WIRE_PONG, peers[BETA].id, BETA_QPN, &gid,
			      (uint32_t)token);
	assert_int_equal(tp_recv_drain(tp), 1);
	assert_true(peer_is_up(&peers[BETA]));
	dev.nsent = 0;
}

#endif
