/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The daemon-wide memory budget (memory_limit): what every channel queue
 * together may hold, shared between the peers whose messages fill them,
 * so that no peer can take another's room.
 *
 * The policy, two rules, each O(1):
 *   - a floor: each of the npeers peers is sure of limit / (2 * npeers).
 *     A take is refused when what would be left after it could no longer
 *     cover the other peers' floors not used yet.  So a peer that sent
 *     nothing yet always finds its floor, however the others filled up
 *     before, and whether or not anyone reads: unread channels never give
 *     back, so a share that only shrinks as new peers come (the second
 *     rule alone) could still leave a late one nothing.
 *   - a share: a peer may hold at most limit / (H + 1), H the peers that
 *     would hold memory after the take (itself included).  The + 1 keeps
 *     room for a newcomer on top of the floors: a lone hog gets half the
 *     budget, not all the pool.
 * Half the budget is thus kept for floors, the rest shared first come;
 * a take is refused with -ENOBUFS, and nothing is charged.
 *
 * Not thread safe on its own: the caller serializes every call (the file
 * system's fs->lock, fs_int.h).  No call blocks, allocates or logs but
 * budget_init and budget_free.
 */
#ifndef IBFS_BUDGET_H
#define IBFS_BUDGET_H

#include <stddef.h>
#include <stdint.h>

struct budget {
	uint64_t limit; /* memory_limit */
	uint64_t floor; /* what each peer is sure of: limit / (2 * npeers) */
	uint64_t total; /* charged now, every peer */
	/* sum over peers of floor - held where held < floor: room that
	 * must stay free for those not holding their floor yet */
	uint64_t unused_floors;
	uint64_t *held; /* per peer */
	int npeers;
	int nholders; /* peers with held > 0 */
};

/* A budget of limit bytes for npeers peers; 0 or -ENOMEM. */
int budget_init(struct budget *b, uint64_t limit, int npeers);

/* Free what budget_init allocated. */
void budget_free(struct budget *b);

/* Charge cost bytes to peer: 0, or -ENOBUFS (nothing charged) when the
 * policy above refuses. */
int budget_take(struct budget *b, int peer, uint64_t cost);

/* Charge cost bytes to peer whatever the policy says: bytes taken back
 * that were charged a moment ago (a refused reply's message). */
void budget_force(struct budget *b, int peer, uint64_t cost);

/* Give back cost bytes peer was charged. */
void budget_give(struct budget *b, int peer, uint64_t cost);

#endif
