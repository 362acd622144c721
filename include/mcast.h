/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * MOUNT/all/'s multicast group: [global] multicast and mcast_group made
 * into a membership.  mcast_open joins through rdma_cm (route_join) and
 * attaches the transport's QP (tp_mcast_install); multicast = auto runs
 * on without it (one unicast copy per peer); multicast = yes, and
 * bootstrap = multicast, refuse to start.  Main thread, between route_open
 * and bootstrap_open, since receivers must be members before any peer sends to
 * the group; but mcast_gone and mcast_back, on the progress thread.
 */
#ifndef IBFS_MCAST_H
#define IBFS_MCAST_H

#include "config.h"
#include "route.h"
#include "transport.h"

struct mcast;

/*
 * Join per cfg->multicast.  0 (joined, or not, as .status then says), or
 * -errno when the join failed and multicast = yes or bootstrap =
 * multicast (which announces on the group) says it must not (the reason
 * logged).
 */
int mcast_open(struct mcast **out, const struct config *cfg, struct tp *tp,
	       struct route *rt);

/* Detach the QP, then leave the group; m may be NULL. */
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
