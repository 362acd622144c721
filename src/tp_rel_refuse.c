/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * delivery = reliable, the receiver's side of refusals (reliable.h,
 * "Refusals"): a whole message its channel queue refuses is consumed and
 * acked with a code, never held, so one full channel stops no other; and
 * once a channel refused for a full queue, later messages to it not
 * flagged retry are refused at once, without being offered, until a
 * retry goes in, so that a channel's messages go in in the order they
 * were written.  Everything here runs under rel.lock, on the progress
 * thread; deliver itself is offered with no lock held (tp_rel_offer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "tp_int.h"
#include "util.h"

_Static_assert(REL_CODE_PLANES == WIRE_REL_PLANES,
	       "the wire carries every bit of a refusal code");

/*
 * Why an entry may go after REL_SACK_BITS psns: the sender learns of a
 * refusal at psn P from an ack covering P, and until then everything it
 * sent lies below una + window <= P + REL_SACK_BITS; once it knows, an
 * honest sender sends that channel only retries.  So no later message
 * not flagged retry needs the entry, and a dishonest sender can only put
 * its own channels out of order.  Each psn notes at most one entry, so
 * the list holds at most REL_SACK_BITS, and every lookup is that short.
 */
static void tp_rel_full_expire(struct tp_rel *r)
{
	uint32_t nxt = rel_rx_next(&r->rx), n = 0;

	while (n < r->nfull && nxt - r->full[n].psn >= REL_SACK_BITS)
		n++;
	if (!n)
		return;
	r->nfull -= n;
	memmove(r->full, r->full + n, r->nfull * sizeof(*r->full));
	if (!r->nfull) { /* a burst is over: its memory goes too */
		free(r->full);
		r->full = NULL;
		r->full_cap = 0;
	}
}

/* Where chan is among r's full channels, or -1. */
static int tp_rel_full_find(const struct tp_rel *r, const char *chan)
{
	uint32_t h = util_fnv1a(chan, strlen(chan), UTIL_FNV1A_INIT), i;

	for (i = 0; i < r->nfull; i++)
		if (r->full[i].hash == h && !strcmp(r->full[i].chan, chan))
			return (int)i;
	return -1;
}

/* Take entry i out, keeping the others in order. */
static void tp_rel_full_remove(struct tp_rel *r, uint32_t i)
{
	r->nfull--;
	memmove(r->full + i, r->full + i + 1,
		(r->nfull - i) * sizeof(*r->full));
}

/* Whether a message to chan, not flagged retry, must wait its turn. */
static int tp_rel_full_has(struct tp_rel *r, const char *chan)
{
	tp_rel_full_expire(r);
	return r->full_all || tp_rel_full_find(r, chan) >= 0;
}

/* chan refused for a full queue: note it, as of now (all, without
 * memory). */
static void tp_rel_full_add(struct tp_rel *r, const char *chan)
{
	static struct log_rl rl;
	struct tp_rel_full *e;
	void *grown;
	uint32_t n;
	int i;

	tp_rel_full_expire(r);
	i = tp_rel_full_find(r, chan);
	if (i >= 0)
		tp_rel_full_remove(r, (uint32_t)i);
	if (r->nfull == r->full_cap) {
		n = r->full_cap ? r->full_cap * 2 : 8;
		grown = realloc(r->full, n * sizeof(*r->full));
		if (!grown) {
			log_rl_warnx(&rl, "no memory to note a full channel: "
					  "every channel waits for its retry");
			r->full_all = 1;
			return;
		}
		r->full = grown;
		r->full_cap = n;
	}
	e = &r->full[r->nfull++];
	e->psn = rel_rx_next(&r->rx);
	e->hash = util_fnv1a(chan, strlen(chan), UTIL_FNV1A_INIT);
	snprintf(e->chan, sizeof(e->chan), "%s", chan);
}

/* A retry to chan went in: its later messages go in as they come. */
static void tp_rel_full_del(struct tp_rel *r, const char *chan)
{
	int i = tp_rel_full_find(r, chan);

	if (i >= 0)
		tp_rel_full_remove(r, (uint32_t)i);
	if (!r->nfull)
		r->full_all = 0;
}

/* The stream ended: no channel waits for a retry of it. */
void tp_rel_full_clear(struct tp_rel *r)
{
	free(r->full);
	r->full = NULL;
	r->nfull = r->full_cap = 0;
	r->full_all = 0;
}

/*
 * The datagram at nxt completed msg: refuse it at once when its channel
 * waits for a retry and this is none (its sender will send it again in
 * turn): 0.  Else hold it, the stream blocked meanwhile: 1, and the
 * caller puts it on the offer list for tp_rel_offer (tp_rel_queue).
 */
int tp_rel_complete(struct tp_rel *r, struct wire_msg *msg, int retry)
{
	if (!retry && tp_rel_full_has(r, msg->chan)) {
		free(msg->data);
		rel_rx_refuse(&r->rx, REL_CODE_FULL);
		return 0;
	}
	r->held = 1;
	r->hretry = retry;
	r->hmsg = *msg;
	rel_rx_block(&r->rx);
	return 1;
}

/*
 * What deliver said of held message m (rc): taken, the stream moves on;
 * refused, it moves on too, the refusal in its acks, and the data goes
 * (the sender has its own copy).  A permanent refusal is counted as its
 * cause's drop; one for a full queue is not (the sender tries again).
 */
void tp_rel_settle(struct tp *tp, struct peer *p, struct tp_rel *r,
		   struct wire_msg *m, int retry, int rc)
{
	enum rel_code code = rel_code_of(rc);

	if (code == REL_CODE_NONE) {
		if (retry)
			tp_rel_full_del(r, m->chan);
		rel_rx_unblock(&r->rx);
		return;
	}
	free(m->data);
	if (code == REL_CODE_FULL)
		tp_rel_full_add(r, m->chan);
	else
		peer_count_drop(p, &tp->totals, rel_drop_of(rc));
	rel_rx_unblock_refused(&r->rx, code);
}
