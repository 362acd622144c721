/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The receive path, step 6 of the UD recipe: receives stay posted with
 * sizeof(struct ibv_grh) of slack; the progress thread drains the receive
 * CQ in batches, strips the GRH, identifies the sender by src_qp and
 * source GID (the source filter that peer up and down keep), reassembles
 * datagram-mode messages or hands reliable datagrams to tp_rel.c, and
 * reposts each batch as one chain.  Whole messages go to deliver once the
 * batch's locks are dropped, and so are probes (tp_probe.c), which pass
 * the filter like data.  Announces (bootstrap = multicast) alone go
 * around the source filter, checked against their own source, to
 * announce.c's hook (tp_ann.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/ip.h>

#include "log.h"
#include "tp_int.h"
#include "util.h"

/* The receive tables, the source filter and the reassembly table. */
int tp_recv_open(struct tp *tp)
{
	const struct config *cfg = tp->cfg;
	struct tp_rx *rx = &tp->rx;
	size_t mem_limit;
	uint32_t i, rd = cfg->recv_depth;

	rx->wr = calloc(rd, sizeof(*rx->wr));
	rx->sge = calloc(rd, sizeof(*rx->sge));
	rx->free = calloc(rd, sizeof(*rx->free));
	rx->src = calloc(tp->npeers, sizeof(*rx->src));
	for (rx->qmask = 15; rx->qmask < (uint32_t)tp->npeers;)
		rx->qmask = rx->qmask * 2 + 1;
	rx->qhead = malloc((rx->qmask + 1) * sizeof(*rx->qhead));
	/* one budget for every peer's partials, shared (wire.h) */
	mem_limit = cfg->max_message * 16;
	if (mem_limit < ((size_t)64 << 20))
		mem_limit = (size_t)64 << 20;
	rx->reasm = wire_reasm_new(cfg->max_message, mem_limit,
				   cfg->reassembly_timeout_ms);
	if (!rx->wr || !rx->sge || !rx->free || !rx->src || !rx->reasm ||
	    !rx->qhead) {
		tp_recv_close(tp);
		return -ENOMEM;
	}
	memset(rx->qhead, 0xff, (rx->qmask + 1) * sizeof(*rx->qhead));
	for (i = 0; i < rd; i++)
		rx->free[i] = i;
	rx->nfree = rd;
	pthread_rwlock_init(&rx->srclock, NULL);
	pthread_mutex_init(&rx->rlock, NULL);
	rx->locks = 1;
	return 0;
}

/* Free what tp_recv_open made (tolerates a partial one). */
void tp_recv_close(struct tp *tp)
{
	struct tp_rx *rx = &tp->rx;
	int i;

	if (rx->locks) {
		pthread_mutex_destroy(&rx->rlock);
		pthread_rwlock_destroy(&rx->srclock);
		rx->locks = 0;
	}
	wire_reasm_free(rx->reasm);
	rx->reasm = NULL;
	for (i = 0; rx->src && i < tp->npeers; i++)
		free(rx->src[i]);
	free(rx->src);
	free(rx->qhead);
	rx->qhead = NULL;
	free(rx->free);
	free(rx->sge);
	free(rx->wr);
	rx->src = NULL;
	rx->free = NULL;
	rx->sge = NULL;
	rx->wr = NULL;
}

/* Post every receive slot in rfree as one chain; keep them on failure. */
int tp_recv_post(struct tp *tp)
{
	struct ibv_recv_wr *bad = NULL;
	uint32_t i, slot;
	int rc;

	if (!tp->rx.nfree)
		return 0;
	for (i = 0; i < tp->rx.nfree; i++) {
		slot = tp->rx.free[i];
		tp->rx.sge[i].addr =
			(uintptr_t)(tp->rx.buf + (size_t)slot * tp->rx.slot);
		tp->rx.sge[i].length = tp->rx.slot;
		tp->rx.sge[i].lkey = tp->rx.mr->lkey;
		tp->rx.wr[i].wr_id = slot;
		tp->rx.wr[i].sg_list = &tp->rx.sge[i];
		tp->rx.wr[i].num_sge = 1;
		tp->rx.wr[i].next =
			i + 1 < tp->rx.nfree ? &tp->rx.wr[i + 1] : NULL;
	}
	rc = ibv_post_recv(tp->dev.qp, tp->rx.wr, &bad);
	if (rc) {
		/* WRs before bad went in; keep the rest for the next try. */
		uint32_t done = bad ? (uint32_t)(bad - tp->rx.wr) : 0;

		memmove(tp->rx.free, tp->rx.free + done,
			(tp->rx.nfree - done) * sizeof(*tp->rx.free));
		tp->rx.nfree -= done;
		log_warnx(
			"transport: ibv_post_recv: %s (%u receives not posted)",
			strerror(rc), tp->rx.nfree);
		return -rc;
	}
	tp->rx.nfree = 0;
	return 0;
}

/*
 * The source GID of a received datagram.  RoCE v2 over IPv4 puts the IPv4
 * header in the last 20 bytes of the GRH area (the first 20 are zero);
 * tell it from a real GRH/IPv6 header as libibverbs does.
 */
static void tp_recv_sgid(const void *grhbuf, union ibv_gid *sgid)
{
	const struct ibv_grh *grh = grhbuf;
	struct iphdr ip4;
	uint32_t vtf = be32toh(grh->version_tclass_flow);

	memcpy(&ip4,
	       (const uint8_t *)grhbuf + sizeof(struct ibv_grh) - sizeof(ip4),
	       sizeof(ip4));
	if (((vtf >> 28) & 0xf) != 6 && ip4.version == 4) {
		util_v4mapped(sgid->raw, &ip4.saddr);
		return;
	}
	*sgid = grh->sgid;
}

/* Put peer idx on qpn's chain (under rx.srclock, written). */
static void tp_recv_chain(struct tp_rx *rx, int idx, uint32_t qpn)
{
	rx->src[idx]->qnext = rx->qhead[qpn & rx->qmask];
	rx->qhead[qpn & rx->qmask] = idx;
}

/* Take peer idx off qpn's chain (under rx.srclock, written). */
static void tp_recv_unchain(struct tp_rx *rx, int idx, uint32_t qpn)
{
	int *at = &rx->qhead[qpn & rx->qmask];

	while (*at >= 0 && *at != idx)
		at = &rx->src[*at]->qnext;
	if (*at == idx)
		*at = rx->src[idx]->qnext;
}

/*
 * The up (or expected) peer that sent wc, or NULL (under rx.srclock):
 * the one at its QP and GID (or LID) that is the node its header names
 * (src, when the header decoded), so that a peer installed at another's
 * QP and GID takes none of that one's datagrams, whatever the order of
 * the chain.
 */
static struct peer *tp_recv_match(struct tp *tp, const struct ibv_wc *wc,
				  const void *grhbuf, const uint32_t *src,
				  uint64_t now)
{
	union ibv_gid sgid;
	int have_grh = !!(wc->wc_flags & IBV_WC_GRH), i;

	if (have_grh)
		tp_recv_sgid(grhbuf, &sgid);
	for (i = tp->rx.qhead[wc->src_qp & tp->rx.qmask]; i >= 0;
	     i = tp->rx.src[i]->qnext) {
		const struct tp_src *s = tp->rx.src[i];

		if (!s->valid || s->qpn != wc->src_qp ||
		    (s->linger_until && now >= s->linger_until) ||
		    (src && tp->peers[i].id != *src))
			continue;
		if (have_grh) {
			if (memcmp(&s->gid, &sgid, sizeof(sgid)))
				continue;
		} else if (tp->info.link_layer != IBV_LINK_LAYER_ETHERNET &&
			   s->lid && s->lid != wc->slid) {
			continue;
		}
		return &tp->peers[i];
	}
	return NULL;
}

/*
 * The one path around the source filter, for announces only (WIRE_ANN:
 * never data, never reassembled): their senders are not met yet.  One is
 * kept in anns only when its hello names the QP and GID (or LID) it came
 * from; 1 when wc was an announce, kept or dropped.
 */
static int tp_recv_ann(struct tp *tp, const struct ibv_wc *wc,
		       const uint8_t *slot, struct tp_anns *anns)
{
	const size_t grhlen = sizeof(struct ibv_grh);
	int have_grh = !!(wc->wc_flags & IBV_WC_GRH);
	struct ann_msg *m = &anns->m[anns->n];
	union ibv_gid sgid;
	size_t dlen;

	if (wc->byte_len < grhlen + WIRE_HDR_LEN || wc->byte_len > tp->rx.slot)
		return 0;
	dlen = wc->byte_len - grhlen;
	if (wire_peek_type(slot + grhlen, dlen) != WIRE_ANN)
		return 0;
	if (have_grh)
		tp_recv_sgid(slot, &sgid);
	if (ann_datagram_decode(m, slot + grhlen, dlen) ||
	    ann_msg_from(m, wc->src_qp, have_grh ? &sgid : NULL, wc->slid))
		peer_count_drop(NULL, &tp->totals, DROP_ANN_REFUSED);
	else
		anns->n++;
	return 1;
}

/* One receive completion: check, identify, reassemble (under the locks);
 * probes go to pr for after the batch. */
static int tp_recv_one(struct tp *tp, const struct ibv_wc *wc, uint64_t now,
		       struct tp_done *done, struct tp_anns *anns,
		       struct tp_probes *pr)
{
	const size_t grhlen = sizeof(struct ibv_grh);
	uint8_t *slot;
	struct wire_hdr h;
	struct peer *p;
	size_t dlen;
	int rc, bad;

	if (wc->wr_id >= tp->cfg->recv_depth)
		return 0; /* not ours: nothing to repost */
	tp->rx.free[tp->rx.nfree++] = (uint32_t)wc->wr_id;
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR) {
			peer_count_drop(NULL, &tp->totals, DROP_MALFORMED);
			tp_log_wc("receive", wc, &tp->rx.last_err_ms,
				  &tp->rx.err_suppressed);
		}
		return 0;
	}
	slot = tp->rx.buf + (size_t)wc->wr_id * tp->rx.slot;
	if (tp_recv_ann(tp, wc, slot, anns))
		return 0;
	dlen = wc->byte_len - grhlen;
	bad = wc->byte_len < grhlen + WIRE_HDR_LEN ||
	      wc->byte_len > tp->rx.slot ||
	      wire_hdr_decode(&h, slot + grhlen, dlen);
	/* a header that does not decode is its sender's drop, any node's */
	p = tp_recv_match(tp, wc, slot, bad ? NULL : &h.src, now);
	if (!p) {
		peer_count_drop(NULL, &tp->totals, DROP_UNKNOWN_SRC);
		return 0;
	}
	if (bad) {
		peer_count_drop(p, &tp->totals, DROP_MALFORMED);
		return 0;
	}
	if (h.type == WIRE_PING || h.type == WIRE_PONG) {
		tp_probe_take(pr, p, &h);
		return 0;
	}
	if (h.flags & WIRE_FLAG_MCAST) {
		if (p->is_local) {
			/* the group looped our own copy back: the writer
			 * sent itself one by unicast */
			tp_add(&tp->totals.mcast_self_dropped, 1);
			return 0;
		}
		PEER_ADD(p, mcast_rx, 1);
		tp_add(&tp->totals.mcast_rx, 1);
	} else if (tp_peer_reliable(tp, p)) {
		if (!tp->rel.drop_permille || !tp_rel_lose(tp))
			tp_rel_recv(tp, p, &h, slot + grhlen, dlen, now);
		return 0;
	}
	/* the group's msg_ids, apart by their flag, count in p's share */
	rc = wire_reasm_feed_hdr(tp->rx.reasm, p->idx, &h, slot + grhlen, dlen,
				 now, &done->msg);
	if (rc == 1) {
		done->p = p;
		return 1;
	}
	tp_up_count_wire(tp, p, rc);
	return 0;
}

/* Drain the receive CQ in batches; repost each batch as one chain. */
int tp_recv_drain(struct tp *tp)
{
	struct ibv_wc wc[TP_POLL_BATCH];
	struct tp_done done[TP_POLL_BATCH];
	struct tp_anns anns;
	struct tp_probes pr;
	int n, i, nd, total = 0;
	uint64_t now;

	do {
		n = ibv_poll_cq(tp->dev.rcq, TP_POLL_BATCH, wc);
		if (n <= 0) {
			if (n < 0)
				log_warnx("transport: ibv_poll_cq failed");
			break;
		}
		now = util_now_ms();
		nd = 0;
		anns.n = pr.n = 0;
		pthread_rwlock_rdlock(&tp->rx.srclock);
		pthread_mutex_lock(&tp->rx.rlock);
		for (i = 0; i < n; i++)
			nd += tp_recv_one(tp, &wc[i], now, &done[nd], &anns,
					  &pr);
		pthread_mutex_unlock(&tp->rx.rlock);
		pthread_rwlock_unlock(&tp->rx.srclock);
		/* before the repost: an announce's certificate is read
		 * in its receive slot */
		tp_ann_deliver(tp, &anns);
		tp_recv_post(tp);
		tp_probe_deliver(tp, &pr, now);
		for (i = 0; i < nd; i++)
			tp_up_deliver(tp, done[i].p, &done[i].msg);
		/* acks of this batch in one go, windows reopened; then
		 * the readers deliver left are woken */
		if (tp->rel.any)
			tp_rel_service(tp, 0);
		tp_up_announce(tp);
		total += n;
	} while (n == TP_POLL_BATCH);
	return total;
}

/*
 * Drop partial messages past their time, one slice of at most
 * WIRE_REASM_EXPIRE_SLICE, so rx.rlock is held a bounded time; ms until
 * the next one expires (0: more are due now), or -1 when none waits.
 */
int tp_recv_expire(struct tp *tp)
{
	uint64_t now = util_now_ms();
	int next;

	pthread_mutex_lock(&tp->rx.rlock);
	wire_reasm_expire_each(tp->rx.reasm, now, tp_up_count_expired, tp);
	next = wire_reasm_next_timeout(tp->rx.reasm, now);
	pthread_mutex_unlock(&tp->rx.rlock);
	return next;
}

/*
 * The index of a peer other than p that is up at addr's QPN and GID (and
 * LID, where there is no GRH to tell them apart), or -1: one QPN's chain,
 * whatever the number of peers.
 */
int tp_addr_holder(struct tp *tp, const struct peer *p,
		   const struct peer_addr *addr)
{
	int i, held = -1;

	pthread_rwlock_rdlock(&tp->rx.srclock);
	for (i = tp->rx.qhead[addr->qpn & tp->rx.qmask]; i >= 0 && held < 0;
	     i = tp->rx.src[i]->qnext) {
		const struct tp_src *s = tp->rx.src[i];
		struct peer *q = &tp->peers[i];

		if (q == p || !s->valid || s->linger_until ||
		    s->qpn != addr->qpn || s->lid != addr->lid ||
		    memcmp(&s->gid, &addr->gid, sizeof(s->gid)))
			continue;
		pthread_mutex_lock(&q->lock);
		if (q->up)
			held = i;
		pthread_mutex_unlock(&q->lock);
	}
	pthread_rwlock_unlock(&tp->rx.srclock);
	return held;
}

/* Set who may send to us as p; a new address forgets its partials.
 * 0, or -ENOMEM when p's entry, its first, cannot be made. */
int tp_recv_src_set(struct tp *tp, struct peer *p, const struct peer_addr *addr)
{
	struct tp_src *s;
	int changed;

	pthread_rwlock_wrlock(&tp->rx.srclock);
	s = tp->rx.src[p->idx];
	if (!s)
		s = tp->rx.src[p->idx] = calloc(1, sizeof(*s));
	if (!s) {
		pthread_rwlock_unlock(&tp->rx.srclock);
		return -ENOMEM;
	}
	changed = !s->valid || s->qpn != addr->qpn ||
		  memcmp(&s->gid, &addr->gid, sizeof(s->gid));
	if (!s->valid || s->qpn != addr->qpn) {
		if (s->valid)
			tp_recv_unchain(&tp->rx, p->idx, s->qpn);
		tp_recv_chain(&tp->rx, p->idx, addr->qpn);
	}
	s->valid = 1;
	s->linger_until = 0;
	s->qpn = addr->qpn;
	s->lid = addr->lid;
	s->gid = addr->gid;
	pthread_rwlock_unlock(&tp->rx.srclock);
	if (changed) {
		pthread_mutex_lock(&tp->rx.rlock);
		wire_reasm_forget_peer(tp->rx.reasm, p->idx);
		pthread_mutex_unlock(&tp->rx.rlock);
	}
	return 0;
}

/*
 * p's session ended: its datagrams are still accepted for
 * reassembly_timeout, since what it sent last often still waits in our CQ.
 */
void tp_recv_src_linger(struct tp *tp, struct peer *p)
{
	struct tp_src *s;

	pthread_rwlock_wrlock(&tp->rx.srclock);
	s = tp->rx.src[p->idx];
	if (s && s->valid && !s->linger_until)
		s->linger_until =
			util_now_ms() + tp->cfg->reassembly_timeout_ms;
	pthread_rwlock_unlock(&tp->rx.srclock);
}
