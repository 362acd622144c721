/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * MOUNT/all/'s multicast group: [global] multicast and mcast_group made
 * into a membership.  mcast_open joins through rdma_cm (route_join) and
 * attaches the transport's QP (tp_mcast_install); multicast = auto runs
 * on without it (one unicast copy per peer); multicast = yes, and
 * bootstrap = multicast, refuse to start.  A group lost later is joined
 * again by a thread of its own (src/mcast.c says when and how often).
 * mcast_open and mcast_close: main thread only, between route_open and
 * bootstrap_open, since receivers must be members before any peer sends
 * to the group; mcast_gone and mcast_back: the progress thread.
 */
#ifndef IBFS_MCAST_H
#define IBFS_MCAST_H

#include "config.h"
#include "route.h"
#include "transport.h"

struct mcast;

/* Rejoining a lost group: the first wait, the longest, and the failed
 * joins after which all/ falls back to unicast copies. */
#define MCAST_REJOIN_FIRST_MS 1000
#define MCAST_REJOIN_MAX_MS   30000
#define MCAST_REJOIN_TRIES    6

/*
 * Join per cfg->multicast.  0 (joined, or not, as .status then says), or
 * -errno when the join failed and multicast = yes or bootstrap =
 * multicast (which announces on the group) says it must not (the reason
 * logged).
 */
int mcast_open(struct mcast **out, const struct config *cfg, struct tp *tp,
	       struct route *rt);

/* Stop the rejoins, detach the QP, then leave the group; m may be NULL. */
void mcast_close(struct mcast *m);

/*
 * The transport's heal hook (the progress thread; m may be NULL): the
 * device is going, so the QP is detached and the group left (its cm id
 * would hold the device), all/ meanwhile one unicast copy per peer; and
 * it is back, so the group is joined again (blocks, as at start).
 */
void mcast_gone(struct mcast *m, const char *why);
void mcast_back(struct mcast *m);

#endif
