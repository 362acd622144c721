/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The peer table: one struct peer per config node, built once at start-up
 * and shared by the transport (counters, AH, address) and the bootstrap
 * (up/down).  Counters are atomics so readers never take the lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"
#include "util.h"
#include "wire.h"

#define PEER_DROP_NAME(e, name, comment) [DROP_##e] = #name,
const char *const peer_drop_names[DROP_MAX] = {PEER_DROPS(PEER_DROP_NAME)};
#undef PEER_DROP_NAME

/* The fields a restart or a move changes. */
int peer_addr_same(const struct peer_addr *a, const struct peer_addr *b)
{
	return a->qpn == b->qpn && a->qkey == b->qkey && a->lid == b->lid &&
	       a->mtu == b->mtu && a->boot == b->boot &&
	       !memcmp(&a->gid, &b->gid, sizeof(a->gid));
}

/* One peer per node, wire ids derived from names so they survive restarts. */
int peer_table_open(struct peer **out, const struct config *cfg)
{
	struct peer *peers;
	int i;

	if (cfg->nnodes < 1)
		return -EINVAL;
	peers = calloc(cfg->nnodes, sizeof(*peers));
	if (!peers)
		return -ENOMEM;
	for (i = 0; i < cfg->nnodes; i++) {
		struct peer *p = &peers[i];

		p->idx = i;
		p->conf = &cfg->nodes[i];
		p->id = wire_node_id(cfg->nodes[i].name);
		p->is_local = (i == cfg->local);
		pthread_mutex_init(&p->lock, NULL);
	}
	*out = peers;
	return 0;
}

/* The AHs belong to the transport, which released them in tp_close. */
void peer_table_close(struct peer *peers, int n)
{
	int i;

	if (!peers)
		return;
	for (i = 0; i < n; i++) {
		pthread_mutex_destroy(&peers[i].lock);
		free(peer_used(&peers[i]));
	}
	free(peers);
}

/* Made on first use by whichever thread gets there: the loser of the
 * race frees its copy and takes the winner's. */
struct peer_use *peer_use(struct peer *p)
{
	struct peer_use *u = peer_used(p), *none = NULL;

	if (u)
		return u;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	if (atomic_compare_exchange_strong_explicit(&p->use, &none, u,
						    memory_order_acq_rel,
						    memory_order_acquire))
		return u;
	free(u);
	return none;
}

/* A peer never used reads as zeros; nothing writes these. */
static struct peer_counters peer_counts_none;

struct peer_counters *peer_counts(const struct peer *p)
{
	struct peer_use *u = peer_used(p);

	return u ? &u->cnt : &peer_counts_none;
}

/* Drops are counted twice: per peer for .status, and in the totals. */
void peer_count_drop(struct peer *p, struct peer_counters *totals,
		     enum peer_drop r)
{
	if ((unsigned)r >= DROP_MAX)
		return;
	if (p)
		PEER_ADD(p, drops[r], 1);
	if (totals)
		atomic_fetch_add_explicit(&totals->drops[r], 1,
					  memory_order_relaxed);
}

/* Up once probed; joined while probed; otherwise the last failure. */
enum peer_state peer_state(const struct peer *p)
{
	const struct peer_use *u = peer_used(p);

	if (p->up)
		return PEER_UP;
	if (u && u->probe.joined && !u->probe.held)
		return u->probe.unreachable ? PEER_UNREACHABLE : PEER_PROBING;
	return p->last_err ? PEER_DOWN : PEER_IDLE;
}

/* The words .status uses for a state. */
const char *peer_state_name(enum peer_state st)
{
	static const char *const names[] = {
		[PEER_IDLE] = "idle",
		[PEER_UP] = "up",
		[PEER_DOWN] = "down",
		[PEER_PROBING] = "probing",
		[PEER_UNREACHABLE] = "unreachable",
	};

	return (unsigned)st < ARRAY_SIZE(names) ? names[st] : "?";
}

/* The bootstrap thread's record of a failure, read by .status and fs. */
void peer_set_error(struct peer *p, int err, const char *msg)
{
	pthread_mutex_lock(&p->lock);
	peer_set_error_locked(p, err, msg);
	pthread_mutex_unlock(&p->lock);
}

/* The words go in the in-use part, made now for a failure: without
 * memory only the errno is kept. */
void peer_set_error_locked(struct peer *p, int err, const char *msg)
{
	struct peer_use *u = err ? peer_use(p) : peer_used(p);

	p->last_err = err;
	if (u)
		snprintf(u->last_error, sizeof(u->last_error), "%s",
			 err ? msg : "");
}

/* The bootstrap or announce thread stamps it; .status reads it. */
void peer_attempt(struct peer *p)
{
	int64_t ms = util_wall_ms();
	struct peer_use *u = peer_use(p);

	if (!u)
		return;
	pthread_mutex_lock(&p->lock);
	u->last_attempt = ms;
	pthread_mutex_unlock(&p->lock);
}

/* Whether p is up now: its lock, which may be taken under fs->lock. */
int peer_is_up(struct peer *p)
{
	int up;

	pthread_mutex_lock(&p->lock);
	up = p->up;
	pthread_mutex_unlock(&p->lock);
	return up;
}
