/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sender's wait lists of delivery = reliable (see reliable.h,
 * "Refusals"): messages the receiver refused for a full channel queue,
 * per channel, in the order they were first queued, each channel trying
 * its oldest again after a backoff; and the refusal codes, the one table
 * between a deliver's errno, the wire's code and a writer's errno.  Pure
 * logic, as reliable.c.
 *
 * reliable.c alone calls it (rel_int.h), and it calls nothing back: what
 * goes back on the stream, or is done, it hands to its caller.
 */
#include <errno.h>
#include <string.h>

#include "rel_int.h"

/*
 * The one table of deliver's refusals (fs.h's fs_deliver lists them): the
 * errno, the wire's code for it, and the drop it counts as.  The first row
 * of a code gives the errno a writer gets for it.  An errno the receiver
 * did not name is refused for good, as a message refused (the last row):
 * a sender must not retry what no reader will make room for.
 */
static const struct rel_refusal {
	int err;
	enum rel_code code;
	enum peer_drop drop;
} rel_refusals[] = {
	{EAGAIN, REL_CODE_FULL, DROP_QUEUE_FULL},
	{ENOMEM, REL_CODE_FULL, DROP_MEMORY_LIMIT},
	{ENOBUFS, REL_CODE_FULL, DROP_MEMORY_LIMIT},
	{ENOSPC, REL_CODE_NOSPC, DROP_MAX_CHANNELS},
	{EMSGSIZE, REL_CODE_MSGSIZE, DROP_QUEUE_FULL},
	{EINVAL, REL_CODE_INVAL, DROP_BAD_NAME},
};
#define REL_REFUSALS (sizeof(rel_refusals) / sizeof(*rel_refusals))

/* The row of refusal err (-errno): its own, or the last one. */
static const struct rel_refusal *rel_refusal_of(int err)
{
	size_t i;

	for (i = 0; i < REL_REFUSALS - 1; i++)
		if (rel_refusals[i].err == -err)
			break;
	return &rel_refusals[i];
}

enum rel_code rel_code_of(int err)
{
	return err ? rel_refusal_of(err)->code : REL_CODE_NONE;
}

enum peer_drop rel_drop_of(int err)
{
	return rel_refusal_of(err)->drop;
}

int rel_code_errno(enum rel_code c)
{
	size_t i;

	if (c == REL_CODE_NONE)
		return 0;
	for (i = 0; i < REL_REFUSALS; i++)
		if (rel_refusals[i].code == c)
			return -rel_refusals[i].err;
	return -EINVAL; /* a code this build does not know */
}

enum rel_code rel_codes_get(const rel_codes *c, uint32_t ack, uint32_t psn)
{
	uint32_t i = psn - (ack - REL_SACK_BITS);
	unsigned code = 0;
	int j;

	for (j = 0; j < REL_CODE_PLANES; j++)
		code |= (unsigned)rel_bit(&c->plane[j], i) << j;
	return (enum rel_code)code;
}

/* The link that holds chan's head, or NULL when chan does not wait. */
static struct rel_msg **rel_wait_find(struct rel_tx *tx, const char *chan)
{
	struct rel_msg **l;

	for (l = &tx->waiting; *l; l = &(*l)->rchan)
		if (!strcmp((*l)->chan, chan))
			return l;
	return NULL;
}

int rel_wait_has(const struct rel_tx *tx, const char *chan)
{
	return rel_wait_find((struct rel_tx *)tx, chan) != NULL;
}

/* m heads its channel's list now: it goes again at now + backoff. */
static void rel_wait_head(struct rel_msg *m, uint64_t now, uint32_t backoff)
{
	m->backoff = backoff;
	m->due = now + backoff;
	m->out = 0;
}

/* m waits for room: into its channel's list, in first-queued order (a
 * new channel heads the list of channels). */
static void rel_wait_add(struct rel_tx *tx, struct rel_msg *m, uint64_t now)
{
	struct rel_msg **l = rel_wait_find(tx, m->chan), *h, **at;

	tx->nwaiting++;
	m->rnext = NULL;
	if (!l) {
		rel_wait_head(m, now, REL_RETRY_MIN_MS);
		m->rchan = tx->waiting;
		tx->waiting = m;
		return;
	}
	h = *l;
	if (m->order < h->order && !h->out) {
		/* older than the head (cannot be: refusals come in psn
		 * order), yet keep the order */
		rel_wait_head(m, now, h->backoff);
		m->rchan = h->rchan;
		m->rnext = h;
		*l = m;
		return;
	}
	for (at = &h->rnext; *at && (*at)->order < m->order; at = &(*at)->rnext)
		;
	m->rnext = *at;
	*at = m;
}

int rel_wait_join(struct rel_tx *tx, struct rel_msg *m, uint64_t now)
{
	if (!rel_wait_find(tx, m->chan))
		return 0;
	rel_wait_add(tx, m, now);
	return 1;
}

/* Head h leaves its list (taken, or failed): the next one goes now. */
static void rel_wait_pop(struct rel_tx *tx, struct rel_msg *h, uint64_t now)
{
	struct rel_msg **l = rel_wait_find(tx, h->chan), *nx = h->rnext;

	if (!l || *l != h)
		return; /* cannot be: a retry heads its list */
	tx->nwaiting--;
	h->retry = 0;
	if (!nx) {
		*l = h->rchan;
		return;
	}
	nx->rchan = h->rchan;
	rel_wait_head(nx, now, REL_RETRY_MIN_MS);
	nx->due = now;
	*l = nx;
}

int rel_wait_settle(struct rel_tx *tx, struct rel_msg *m, enum rel_code code,
		    uint64_t now)
{
	uint32_t b;

	if (code == REL_CODE_FULL) {
		tx->refused++;
		if (!m->retry) {
			rel_wait_add(tx, m, now);
			return 1;
		}
		b = m->backoff * 2;
		rel_wait_head(m, now,
			      b > REL_RETRY_MAX_MS ? REL_RETRY_MAX_MS : b);
		return 1;
	}
	if (m->retry)
		rel_wait_pop(tx, m, now);
	return 0;
}

int rel_wait_tick(struct rel_tx *tx, uint64_t now, struct rel_msg **due)
{
	struct rel_msg *h, **tail = due;
	int64_t next = -1, left;

	for (h = tx->waiting; h; h = h->rchan) {
		if (h->out)
			continue;
		if (now >= h->due) {
			h->out = 1;
			h->retry = 1;
			*tail = h; /* off the stream: next is free */
			tail = &h->next;
			continue;
		}
		left = (int64_t)(h->due - now);
		if (next < 0 || left < next)
			next = left;
	}
	*tail = NULL;
	return (int)next;
}

struct rel_msg *rel_wait_fail(struct rel_msg *waiting)
{
	struct rel_msg *h, *m, *nh, *nx, *fail = NULL, **tail = &fail;

	for (h = waiting; h; h = nh) {
		nh = h->rchan;
		for (m = h; m; m = nx) {
			nx = m->rnext;
			if (m == h && h->out)
				continue; /* on the stream: failed there */
			m->retry = 0;
			*tail = m; /* off the stream: next is free */
			tail = &m->next;
		}
	}
	*tail = NULL;
	return fail;
}
