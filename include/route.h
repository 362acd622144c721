/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Address resolution: from a peer's config address (and its announced
 * GID/LID) to an ibv_ah.  route = sa asks rdma_cm to resolve address and
 * route — on InfiniBand the SA PathRecord query, on RoCE the IP route —
 * and converts the path record to ibv_ah_attr; route = gid builds the
 * attributes from the exchanged LID/GID alone.  Resolution blocks: it runs
 * on the bootstrap thread, never on the data path.
 */
#ifndef IBFS_ROUTE_H
#define IBFS_ROUTE_H

#include <infiniband/verbs.h>
#include <infiniband/sa.h>

#include "config.h"
#include "peer.h"
#include "transport.h"

struct route;

int route_open(struct route **out, struct tp *tp, const struct config *cfg);
void route_close(struct route *r);

/*
 * Make an AH on tp's PD that reaches node, which announced remote.
 * Uses cfg->route; returns 0 with *ah set, or -errno (-ETIMEDOUT,
 * -EHOSTUNREACH, ...), logging why.
 */
int route_resolve(struct route *r, const struct config_node *node,
		  const struct peer_addr *remote, struct ibv_ah **ah);

/*
 * Join the multicast group (a numeric IPv4 or IPv6 sockaddr) through
 * rdma_cm, from our own addr.  0 with *id (the membership, until
 * route_leave) and *attr (the group's AH attributes, from the join
 * event); or -errno, with the reason in why.  Blocks, with a timeout.
 */
struct rdma_cm_id;
int route_join(struct route *r, const struct sockaddr *group,
	       struct rdma_cm_id **id, struct ibv_ah_attr *attr, char *why,
	       size_t whylen);

/* Leave group, which route_join joined as id; id may be NULL. */
void route_leave(struct route *r, struct rdma_cm_id *id,
		 const struct sockaddr *group);

/* The membership's event descriptor, readable when rdma_cm has news of
 * it (poll it, then route_join_lost). */
int route_join_fd(struct rdma_cm_id *id);

/* Take the membership's events, without blocking: 1 when the group is
 * lost (RDMA_CM_EVENT_MULTICAST_ERROR), the reason in why; else 0. */
int route_join_lost(struct rdma_cm_id *id, char *why, size_t whylen);

/*
 * The conversion librdmacm has no public helper for: a path record to
 * ibv_ah_attr.  sgid_index is the index of path->sgid in the port's GID
 * table; is_roce forces a GRH and ignores the path's DLID.  Pure logic.
 */
void route_path_to_ah_attr(const struct ibv_sa_path_rec *path, uint8_t port,
			   uint8_t sgid_index, int is_roce,
			   struct ibv_ah_attr *attr);

/* AH attributes straight from the exchanged LID/GID (route = gid). */
void route_gid_to_ah_attr(const struct peer_addr *remote, uint8_t port,
			  uint8_t sgid_index, int is_roce,
			  struct ibv_ah_attr *attr);

/* Put the configured sl and traffic_class (when set) over what the route
 * gave in attr: config wins, unset keys keep the route's.  Pure logic. */
void route_fabric_attr(const struct config *cfg, struct ibv_ah_attr *attr);

#endif
