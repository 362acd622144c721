/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Address resolution: from a peer's config address (and its announced
 * GID/LID) to an ibv_ah.  route = sa asks rdma_cm to resolve address and
 * route — on InfiniBand the SA PathRecord query, on RoCE the IP route —
 * and converts the path record to ibv_ah_attr; route = gid builds the
 * attributes from the exchanged LID/GID alone.  Never on the data path.
 *
 * Threads: route_open and route_close on main.  route_resolve,
 * route_install and route_join block (with a timeout), one at a time
 * (the bootstrap or announce thread, and the group's thread).  The
 * asynchronous resolutions (route_install_start, route_cancel,
 * route_async_fd, route_async_run) are one thread's, the bootstrap
 * thread's: it owns their queue, with no lock.  The device context is
 * the transport's: an AH is made and installed with it held
 * (tp_dev_hold), and a result of a device closed meanwhile is dropped.
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
 * Resolve p, which announced remote, and install it (tp_peer_up), with
 * the device held from the AH's making through its install.  Blocks.  0,
 * or -errno (-ENETDOWN: the device went meanwhile), logging why.
 */
int route_install(struct route *r, struct peer *p,
		  const struct peer_addr *remote);

/*
 * route_install without blocking.  With route = gid there is nothing to
 * wait for: it returns route_install's result.  With route = sa the
 * resolution is queued and -EINPROGRESS returned, *req naming it: at most
 * ROUTE_INFLIGHT_MAX are in flight at once (the gauges route_inflight and
 * route_inflight_max count them), the rest start in order as those end.
 * done(arg, rc) is called once, from route_async_run, when it has ended:
 * 0 once p is installed, or -errno (-ETIMEDOUT after twice the
 * resolution's timeout, -ENETDOWN when the device went meanwhile); *req
 * is freed then.  Other -errno: failed at once, nothing queued.
 */
#define ROUTE_INFLIGHT_MAX 64
struct route_req;
int route_install_start(struct route *r, struct peer *p,
			const struct peer_addr *remote,
			void (*done)(void *arg, int rc), void *arg,
			struct route_req **req);

/* Drop a resolution not ended yet (its done is never called); q may be
 * NULL. */
void route_cancel(struct route *r, struct route_req *q);

/* The descriptor readable when a resolution has news (-1 with route =
 * gid): watch it, and call route_async_run when it is. */
int route_async_fd(const struct route *r);

/*
 * Take the resolutions' events, end those done or past their time (their
 * callbacks run here, with no lock held), and start the queued ones there
 * is room for.  Returns the earliest of wake and the next time it has
 * something to do (now when it has already).
 */
int64_t route_async_run(struct route *r, int64_t now, int64_t wake);

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
