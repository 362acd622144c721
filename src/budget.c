/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The daemon-wide memory budget: a floor for each peer and a share of
 * the rest (the policy and the lock rule: include/budget.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "budget.h"

/* A budget of limit bytes for npeers peers, nothing charged. */
int budget_init(struct budget *b, uint64_t limit, int npeers)
{
	b->limit = limit;
	b->npeers = npeers;
	b->floor = npeers > 0 ? limit / (2 * (uint64_t)npeers) : 0;
	b->total = 0;
	b->nholders = 0;
	b->unused_floors = b->floor * (uint64_t)npeers;
	b->held = calloc(npeers > 0 ? npeers : 1, sizeof(*b->held));
	return b->held ? 0 : -ENOMEM;
}

/* Free what budget_init allocated. */
void budget_free(struct budget *b)
{
	free(b->held);
	b->held = NULL;
}

/* What of its floor a peer holding held leaves unused. */
static uint64_t budget_unused(const struct budget *b, uint64_t held)
{
	return held < b->floor ? b->floor - held : 0;
}

/* Move peer's charge from its old value to now (no policy). */
static void budget_set(struct budget *b, int peer, uint64_t now)
{
	uint64_t was = b->held[peer];

	b->unused_floors += budget_unused(b, now);
	b->unused_floors -= budget_unused(b, was);
	b->total = b->total - was + now;
	b->nholders += (now > 0) - (was > 0);
	b->held[peer] = now;
}

/* Charge cost to peer if the floors and the share allow it. */
int budget_take(struct budget *b, int peer, uint64_t cost)
{
	uint64_t was = b->held[peer], now = was + cost;
	uint64_t others = b->unused_floors - budget_unused(b, was);
	int holders = b->nholders + (was == 0);

	if (now < was || b->total + cost > b->limit ||
	    b->limit - b->total - cost < others)
		return -ENOBUFS;
	/* the share is never below the floor: holders + 1 <= 2 * npeers */
	if (now > b->limit / ((uint64_t)holders + 1))
		return -ENOBUFS;
	budget_set(b, peer, now);
	return 0;
}

/* Charge cost to peer whatever the policy says. */
void budget_force(struct budget *b, int peer, uint64_t cost)
{
	budget_set(b, peer, b->held[peer] + cost);
}

/* Give back cost of what peer was charged. */
void budget_give(struct budget *b, int peer, uint64_t cost)
{
	uint64_t was = b->held[peer];

	budget_set(b, peer, was > cost ? was - cost : 0);
}
