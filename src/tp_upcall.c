/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The upcalls and the counters of what arrived: the one place the engine
 * calls its user.  Every function here runs with no lock of the engine
 * held, so a callback may call the engine back (tp_send, tp_send_async):
 * deliver and announce on the progress thread; done wherever a reliable
 * message finishes (see tp_int.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "tp_int.h"
#include "util.h"

/* wire.c's reasons, in the peer counters' terms. */
static const enum peer_drop tp_up_wire_drops[] = {
	[WIRE_DROP_MALFORMED] = DROP_MALFORMED,
	[WIRE_DROP_DUPLICATE] = DROP_DUPLICATE,
	[WIRE_DROP_TOO_BIG] = DROP_TOO_BIG,
	[WIRE_DROP_NO_MEMORY] = DROP_REASM_BUDGET,
	[WIRE_DROP_SHARE] = DROP_REASM_SHARE,
};

/* Count what a wire.c function refused (-WIRE_DROP_*) against p. */
void tp_up_count_wire(struct tp *tp, struct peer *p, int rc)
{
	if (rc < 0 && -rc < (int)ARRAY_SIZE(tp_up_wire_drops))
		peer_count_drop(p, &tp->totals, tp_up_wire_drops[-rc]);
}

/* A whole message was taken into a channel queue. */
static void tp_up_count_rx(struct tp *tp, struct peer *p, size_t len)
{
	PEER_ADD(p, msgs_rx, 1);
	PEER_ADD(p, bytes_rx, len);
	tp_add(&tp->totals.msgs_rx, 1);
	tp_add(&tp->totals.bytes_rx, len);
}

/* Offer a whole message to deliver: 0 when taken (it owns the data),
 * else the refusal, and the data is still the caller's. */
int tp_up_offer(struct tp *tp, struct peer *p, struct wire_msg *m)
{
	size_t len = m->len;
	int rc = -EAGAIN;

	if (tp->ops.deliver)
		rc = tp->ops.deliver(tp->arg, p, m->chan, m->data, len);
	if (!rc)
		tp_up_count_rx(tp, p, len);
	return rc;
}

/* Hand a datagram-mode message over; its refusal is a drop, by cause. */
void tp_up_deliver(struct tp *tp, struct peer *p, struct wire_msg *m)
{
	int rc = tp_up_offer(tp, p, m);

	if (!rc)
		return;
	free(m->data);
	peer_count_drop(p, &tp->totals, rel_drop_of(rc));
}

/* Wake the readers deliver left (after the acks went). */
void tp_up_announce(struct tp *tp)
{
	if (tp->ops.announce)
		tp->ops.announce(tp->arg);
}

/* Call done for finished reliable messages, oldest first, and free them. */
void tp_up_done(struct tp *tp, struct peer *p, struct rel_msg *m)
{
	struct rel_msg *next;

	for (; m; m = next) {
		next = m->next;
		if (!m->status) {
			PEER_ADD(p, msgs_tx, 1);
			PEER_ADD(p, bytes_tx, m->len);
			tp_add(&tp->totals.msgs_tx, 1);
			tp_add(&tp->totals.bytes_tx, m->len);
		}
		if (m->done)
			m->done(m->arg, m->status, m->len);
		free(m->data);
		free(m);
	}
}

/* Count one message that never completed against the peer that sent it
 * (wire_reasm_expire_each's callback, under rx.rlock: it only counts). */
void tp_up_count_expired(void *arg, int peer)
{
	struct tp *tp = arg;

	peer_count_drop(peer >= 0 && peer < tp->npeers ? &tp->peers[peer]
						       : NULL,
			&tp->totals, DROP_REASM_TIMEOUT);
}
