/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bootstrap = multicast on the transport's side (announce.h): sending
 * one announce datagram, to the group or to one peer, and handing the
 * announces a poll batch took (tp_recv.c, before the source filter) to
 * announce.c's hook.  The engine never judges an announce beyond its
 * source: what it means is announce.c's business.
 *
 * Threads: tp_ann_send, tp_ann_send_to and tp_ah_retire on the announce
 * thread; tp_ann_deliver on the
 * progress thread, under ann_lock alone (a leaf), like the need hook.
 */
#include <errno.h>

#include "tp_int.h"

/* Set (or, with fn NULL, clear) who takes announces. */
void tp_set_announce(struct tp *tp,
		     void (*fn)(void *arg, const struct ann_msg *m), void *arg)
{
	pthread_mutex_lock(&tp->ann_lock);
	tp->ann = fn;
	tp->ann_arg = arg;
	pthread_mutex_unlock(&tp->ann_lock);
}

/* Hand a batch's announces over; without a taker they are refused. */
void tp_ann_deliver(struct tp *tp, struct tp_anns *anns)
{
	int i;

	if (!anns->n)
		return;
	pthread_mutex_lock(&tp->ann_lock);
	for (i = 0; i < anns->n; i++) {
		if (tp->ann)
			tp->ann(tp->ann_arg, &anns->m[i]);
		else
			peer_count_drop(NULL, &tp->totals, DROP_ANN_REFUSED);
	}
	pthread_mutex_unlock(&tp->ann_lock);
	anns->n = 0;
}

/*
 * One datagram to d (p's, joined or up, the group's, or fixed: p NULL
 * and fixed set), posted at once: announces are rare, no reason to wait
 * for a doorbell.
 */
static int tp_ann_post(struct tp *tp, struct peer *p, struct tp_dest *d,
		       int fixed, const struct ann_msg *m)
{
	uint8_t dg[WIRE_HDR_LEN + ANN_MSG_MAX];
	size_t len = ann_datagram_build(dg, tp->self_id, m);
	int rc;

	rc = tp_ring_send_one(tp, p, d, fixed ? TP_ONE_FIXED : 0, dg, len);
	if (rc)
		return rc;
	tp_add(&tp->totals.ann_tx, 1);
	if (p)
		PEER_ADD(p, ann_tx, 1);
	return 0;
}

/* To the group, or to p as installed. */
int tp_ann_send(struct tp *tp, struct peer *p, const struct ann_msg *m)
{
	struct tp_dest d;

	return tp_ann_post(tp, p, &d, 0, m);
}

/* To a node that is not up, through the caller's AH. */
int tp_ann_send_to(struct tp *tp, struct ibv_ah *ah,
		   const struct peer_addr *addr, const struct ann_msg *m)
{
	struct tp_dest d = {
		.ah = ah,
		.qpn = addr->qpn,
		.qkey = addr->qkey,
		.mtu = tp->info.mtu_bytes,
	};

	if (tp_addr_mtu(addr) && tp_addr_mtu(addr) < d.mtu)
		d.mtu = tp_addr_mtu(addr);
	return tp_ann_post(tp, NULL, &d, 1, m);
}

/* tp_ring_retire_ah for callers outside the ring. */
void tp_ah_retire(struct tp *tp, struct ibv_ah *ah)
{
	if (!ah)
		return;
	pthread_mutex_lock(&tp->ring.lock);
	tp_ring_retire_ah(tp, ah);
	pthread_mutex_unlock(&tp->ring.lock);
}
