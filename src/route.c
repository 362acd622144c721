/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Address resolution: from a node's config address and its hello to an AH
 * on the transport's PD.
 *
 *   route = sa:  an RDMA_PS_UDP cm_id on a private event channel is used
 *                only to resolve: rdma_resolve_addr (bound to our own
 *                address, so rdma_cm picks our device and port) then
 *                rdma_resolve_route; on InfiniBand that is the SA PathRecord
 *                query, on RoCE the IP route and neighbour.  The path record
 *                becomes ibv_ah_attr here (librdmacm has no public helper)
 *                and the AH is made on our PD, not rdma_cm's.
 *   route = gid: the attributes come from the exchanged LID/GID alone.
 *
 * Never on the data path.  route_resolve, route_install and route_join
 * block (with a timeout), one at a time on r->ch (r->lock).  The
 * bootstrap thread resolves without blocking instead (route_install_start):
 * each resolution is a cm id on a channel of its own, r->ach, that its
 * epoll loop watches and pumps (route_async_run), at most
 * ROUTE_INFLIGHT_MAX in flight and the rest queued in order, so that an
 * incast of newcomers costs about one resolution's time, not one each.
 * A node's addr that is a host name is looked up (config_node_addr) at
 * each resolution.
 *
 * The device context is the transport's (tp_dev_hold, transport.h): the
 * path is resolved without it, then the AH is made, and installed, with
 * it held, in the device generation the resolution began in; a device
 * closed meanwhile (tp_heal.c) drops the result (-ENETDOWN), and its
 * DEVICE_REMOVAL ends the cm ids in flight, which are destroyed at once
 * so that the removal need not wait for them.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <infiniband/ib.h>
#include <sys/queue.h>
#include <rdma/rdma_cma.h>

#include "log.h"
#include "route.h"
#include "util.h"

#define ROUTE_HOP_LIMIT 64 /* RoCE/global default when none is given */

/* One resolution in progress: what the event handlers read and write. */
struct route_wait {
	struct route *r;
	struct rdma_event_channel *ch; /* the channel id's events come on */
	struct rdma_cm_id *id;
	int done;
	int rc;
	struct ibv_ah_attr *attr; /* a join: the group's, from its event */
};

/* One asynchronous resolution: queued, in flight, or done and waiting
 * for its callback (route_async_run); the owner thread's alone. */
struct route_req {
	TAILQ_ENTRY(route_req) link;
	struct route_reqq *q; /* the list it is on */
	struct route_wait w;  /* w.id while in flight */
	struct peer *p;
	struct peer_addr remote;
	uint64_t gen;	  /* the device generation it began in */
	int64_t deadline; /* ms, once in flight */
	void (*done)(void *arg, int rc);
	void *arg;
};

TAILQ_HEAD(route_reqq, route_req);

struct route {
	struct tp *tp;
	const struct config *cfg;
	struct rdma_event_channel *ch; /* route = sa only */
	int is_roce;
	uint8_t port;
	int gid_tbl_len;
	int timeout_ms;
	/* One blocking resolution or join at a time: they share ch, and an
	 * event of another's id is acked and lost (the bootstrap or announce
	 * thread resolves, the progress thread rejoins after a device
	 * reset). */
	pthread_mutex_t lock;
	/* The asynchronous resolutions (route = sa only): ach, the lists and
	 * ninflight are the thread's that calls route_install_start and
	 * route_async_run (the bootstrap thread), no lock. */
	struct rdma_event_channel *ach;
	struct route_reqq queued;   /* waiting for room, in order */
	struct route_reqq inflight; /* their cm ids resolving */
	struct route_reqq done;	    /* ended, their callbacks due */
	int ninflight;
};

/* The SA fields as the verbs AH wants them; pure, hence unit-tested. */
void route_path_to_ah_attr(const struct ibv_sa_path_rec *path, uint8_t port,
			   uint8_t sgid_index, int is_roce,
			   struct ibv_ah_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->port_num = port;
	attr->sl = path->sl;
	attr->static_rate = path->rate;
	if (!is_roce) {
		/* RoCE has no LIDs: whatever the record says is not one. */
		attr->dlid = be16toh(path->dlid);
		/* The LMC is unknown here; path bits 0 take the base LID. */
		attr->src_path_bits = 0;
	}
	if (is_roce || path->hop_limit > 1) {
		attr->is_global = 1;
		attr->grh.dgid = path->dgid;
		attr->grh.flow_label = be32toh(path->flow_label) & 0xfffff;
		attr->grh.hop_limit = path->hop_limit;
		if (is_roce && !attr->grh.hop_limit)
			attr->grh.hop_limit = ROUTE_HOP_LIMIT;
		attr->grh.traffic_class = path->traffic_class;
		attr->grh.sgid_index = sgid_index;
	}
}

/* route = gid: the LID on InfiniBand, a GRH on RoCE or without a LID. */
void route_gid_to_ah_attr(const struct peer_addr *remote, uint8_t port,
			  uint8_t sgid_index, int is_roce,
			  struct ibv_ah_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->port_num = port;
	if (!is_roce)
		attr->dlid = remote->lid;
	if (is_roce || !remote->lid) {
		attr->is_global = 1;
		attr->grh.dgid = remote->gid;
		attr->grh.hop_limit = ROUTE_HOP_LIMIT;
		attr->grh.sgid_index = sgid_index;
	}
}

/*
 * The configured sl and traffic_class win over what the route gave (the
 * SA's path record, the group's join, or route = gid's 0); an unset key
 * (-1) keeps the route's.  A traffic class lives in the GRH, so a route
 * without one (InfiniBand by LID) has none to set.
 */
void route_fabric_attr(const struct config *cfg, struct ibv_ah_attr *attr)
{
	if (cfg->sl >= 0)
		attr->sl = (uint8_t)cfg->sl;
	if (cfg->traffic_class >= 0 && attr->is_global)
		attr->grh.traffic_class = (uint8_t)cfg->traffic_class;
}

/* A cm event channel, non-blocking; NULL on failure (logged). */
static struct rdma_event_channel *route_new_channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	int fl;

	if (!ch) {
		log_warn("rdma_create_event_channel (is rdma_ucm loaded?)");
		return NULL;
	}
	fl = fcntl(ch->fd, F_GETFL);
	if (fl < 0 || fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		log_warn("route: fcntl");
		rdma_destroy_event_channel(ch);
		return NULL;
	}
	return ch;
}

/* Set up what every resolution shares; the cm channel only for sa. */
int route_open(struct route **out, struct tp *tp, const struct config *cfg)
{
	const struct tp_info *ti = tp_info(tp);
	struct ibv_port_attr pa;
	struct route *r;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->tp = tp;
	r->cfg = cfg;
	pthread_mutex_init(&r->lock, NULL);
	r->port = (uint8_t)ti->port;
	r->is_roce = ti->link_layer == IBV_LINK_LAYER_ETHERNET;
	r->timeout_ms = cfg->peer_timeout_ms / 2;
	if (r->timeout_ms < 2000)
		r->timeout_ms = 2000;
	if (ibv_query_port(tp_context(tp), r->port, &pa)) {
		log_warn("route: ibv_query_port");
		free(r);
		return -EIO;
	}
	r->gid_tbl_len = pa.gid_tbl_len;
	TAILQ_INIT(&r->queued);
	TAILQ_INIT(&r->inflight);
	TAILQ_INIT(&r->done);
	if (cfg->route == ROUTE_SA && (!(r->ch = route_new_channel()) ||
				       !(r->ach = route_new_channel()))) {
		log_warnx("route = sa needs rdma_cm (route = gid does not)");
		route_close(r);
		return -ENODEV;
	}
	*out = r;
	return 0;
}

/* Pair of route_open: resolutions not ended are dropped, no callback. */
void route_close(struct route *r)
{
	struct route_req *q;

	if (!r)
		return;
	while ((q = TAILQ_FIRST(&r->queued)))
		route_cancel(r, q);
	while ((q = TAILQ_FIRST(&r->inflight)))
		route_cancel(r, q);
	while ((q = TAILQ_FIRST(&r->done)))
		route_cancel(r, q);
	if (r->ach)
		rdma_destroy_event_channel(r->ach);
	if (r->ch)
		rdma_destroy_event_channel(r->ch);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* Address known: go on to the route (the PathRecord query on IB). */
static void route_on_addr(struct route_wait *w, struct rdma_cm_event *ev)
{
	if (rdma_resolve_route(w->id, w->r->timeout_ms)) {
		w->rc = -errno;
		w->done = 1;
		log_warn("rdma_resolve_route");
	}
}

/* Route known: the path record is in id->route. */
static void route_on_route(struct route_wait *w, struct rdma_cm_event *ev)
{
	w->rc = 0;
	w->done = 1;
}

/* Joined: the event carries the group's AH attributes. */
static void route_on_join(struct route_wait *w, struct rdma_cm_event *ev)
{
	if (w->attr)
		*w->attr = ev->param.ud.ah_attr;
	w->rc = w->attr ? 0 : -EPROTO;
	w->done = 1;
}

/* Any failure event ends the resolution with its status. */
static void route_on_error(struct route_wait *w, struct rdma_cm_event *ev)
{
	w->rc = ev->status < 0 ? ev->status : -EHOSTUNREACH;
	w->done = 1;
	log_warnx("route: %s: %s", rdma_event_str(ev->event), strerror(-w->rc));
}

typedef void (*route_handler)(struct route_wait *, struct rdma_cm_event *);

/* What each rdma_cm event means to a resolution; others are ignored. */
static const route_handler route_handlers[] = {
	[RDMA_CM_EVENT_ADDR_RESOLVED] = route_on_addr,
	[RDMA_CM_EVENT_ADDR_ERROR] = route_on_error,
	[RDMA_CM_EVENT_ROUTE_RESOLVED] = route_on_route,
	[RDMA_CM_EVENT_ROUTE_ERROR] = route_on_error,
	[RDMA_CM_EVENT_UNREACHABLE] = route_on_error,
	[RDMA_CM_EVENT_DEVICE_REMOVAL] = route_on_error,
	[RDMA_CM_EVENT_MULTICAST_JOIN] = route_on_join,
	[RDMA_CM_EVENT_MULTICAST_ERROR] = route_on_error,
};

/* Pump the cm channel until the resolution is done or time runs out. */
static int route_wait_events(struct route_wait *w)
{
	int64_t deadline = util_now_ms() + 2 * (int64_t)w->r->timeout_ms;
	struct rdma_cm_event *ev;
	struct pollfd pfd;
	int64_t left;
	int n;

	while (!w->done) {
		left = deadline - util_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		pfd.fd = w->ch->fd;
		pfd.events = POLLIN;
		n = poll(&pfd, 1, (int)left);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			continue;
		while (!w->done && !rdma_get_cm_event(w->ch, &ev)) {
			route_handler h = NULL;

			if ((unsigned)ev->event < ARRAY_SIZE(route_handlers))
				h = route_handlers[ev->event];
			if (ev->id == w->id && h)
				h(w, ev);
			else
				log_debug("route: ignored %s",
					  rdma_event_str(ev->event));
			rdma_ack_cm_event(ev);
		}
	}
	return w->rc;
}

/* Index of gid in our port's table (a RoCE v2 entry preferred), or -1. */
static int route_find_sgid(struct route *r, const union ibv_gid *gid)
{
	const struct tp_info *ti = tp_info(r->tp);
	struct ibv_context *ctx = tp_context(r->tp);
	struct ibv_gid_entry e;
	union ibv_gid g;
	int i, first = -1;

	if (!memcmp(&ti->gid, gid, sizeof(*gid)))
		return ti->gid_index;
	for (i = 0; i < r->gid_tbl_len; i++) {
		if (ibv_query_gid(ctx, r->port, i, &g) ||
		    memcmp(&g, gid, sizeof(g)))
			continue;
		if (!r->is_roce)
			return i;
		if (!ibv_query_gid_ex(ctx, r->port, i, &e, 0) &&
		    e.gid_type == IBV_GID_TYPE_ROCE_V2)
			return i;
		if (first < 0)
			first = i;
	}
	return first;
}

/*
 * A node's addr as a sockaddr, a host name looked up again each time, so
 * a peer that cannot be reached is found where its name now points.  A
 * gid: addr (AF_IB) carries the P_Key the SA's path query is made in:
 * the configured pkey, else the default 0xffff config_addr put there.
 */
static int route_node_addr(const struct route *r, const struct config_node *n,
			   struct sockaddr_storage *ss)
{
	struct sockaddr_ib *sib = (struct sockaddr_ib *)ss;
	char err[CONFIG_ERR_MAX];
	socklen_t len;

	if (config_node_addr(n, ss, &len, err, sizeof(err))) {
		log_warnx("node %s: addr %s", n->name, err);
		return -EHOSTUNREACH;
	}
	if (ss->ss_family == AF_IB && r->cfg->pkey >= 0)
		sib->sib_pkey = htobe16((uint16_t)r->cfg->pkey);
	return 0;
}

/* rdma_cm chose the device and port of our own addr: they must be ours. */
static int route_check_dev(struct route *r, struct rdma_cm_id *id,
			   const char *what)
{
	const struct config_node *me = &r->cfg->nodes[r->cfg->local];
	const struct tp_info *ti = tp_info(r->tp);

	if (id->verbs &&
	    !strcmp(ibv_get_device_name(id->verbs->device), ti->device) &&
	    id->port_num == r->port)
		return 0;
	log_warnx("%s is reached through %s port %u, not our %s port %d "
		  "(check addr of node %s)",
		  what,
		  id->verbs ? ibv_get_device_name(id->verbs->device) : "?",
		  id->port_num, ti->device, ti->port, me->name);
	return -EHOSTUNREACH;
}

/* route = sa, its first step: an id on ch (context: ctx) resolving the
 * address of node from ours; the route follows (route_on_addr). */
static int route_sa_start(struct route *r, const struct config_node *node,
			  struct rdma_event_channel *ch, void *ctx,
			  struct rdma_cm_id **idp)
{
	const struct config_node *me = &r->cfg->nodes[r->cfg->local];
	struct sockaddr_storage src, dst;
	int rc;

	if (route_node_addr(r, me, &src) || route_node_addr(r, node, &dst))
		return -EHOSTUNREACH;
	if (rdma_create_id(ch, idp, ctx, RDMA_PS_UDP)) {
		rc = -errno;
		*idp = NULL;
		log_warn("route: rdma_create_id");
		return rc;
	}
	if (rdma_resolve_addr(*idp, (struct sockaddr *)&src,
			      (struct sockaddr *)&dst, r->timeout_ms)) {
		rc = -errno;
		log_warn("route: rdma_resolve_addr %s -> %s", me->addr,
			 node->addr);
		return rc;
	}
	return 0;
}

/* route = sa, the last step: the path id resolved, as AH attributes.
 * Reads the device's GID table: with the device held. */
static int route_sa_attr(struct route *r, const struct config_node *node,
			 struct rdma_cm_id *id, struct ibv_ah_attr *attr)
{
	const struct tp_info *ti = tp_info(r->tp);
	struct ibv_sa_path_rec *path;
	char sg[INET6_ADDRSTRLEN], dg[INET6_ADDRSTRLEN];
	int rc, idx;

	if (!id->verbs || id->route.num_paths < 1 || !id->route.path_rec) {
		log_warnx("route: %s: rdma_cm returned no path", node->name);
		return -EHOSTUNREACH;
	}
	rc = route_check_dev(r, id, node->name);
	if (rc)
		return rc;
	path = &id->route.path_rec[0];
	idx = route_find_sgid(r, &path->sgid);
	if (idx < 0) {
		log_warnx("route: path source GID %s is not in %s's GID table",
			  util_gid_str(&path->sgid, sg, sizeof(sg)),
			  ti->device);
		return -EADDRNOTAVAIL;
	}
	route_path_to_ah_attr(path, r->port, (uint8_t)idx, r->is_roce, attr);
	log_debug("route: %s: %d path(s), sgid %s (index %d) dgid %s dlid %u "
		  "sl %u hop %u flow 0x%x",
		  node->name, id->route.num_paths,
		  util_gid_str(&path->sgid, sg, sizeof(sg)), idx,
		  util_gid_str(&path->dgid, dg, sizeof(dg)),
		  be16toh(path->dlid), path->sl, path->hop_limit,
		  be32toh(path->flow_label));
	return 0;
}

/* The node-wide gauges (peer.h): a resolution of route = sa began (d 1)
 * or ended (-1), blocking or not, on whichever thread. */
static void route_gauge(struct route *r, int d)
{
	struct fabric_counters *fc = tp_fabric(r->tp);
	uint_fast64_t n, max;

	if (d < 0) {
		atomic_fetch_sub(&fc->route_inflight, 1);
		return;
	}
	n = atomic_fetch_add(&fc->route_inflight, 1) + 1;
	max = atomic_load(&fc->route_inflight_max);
	while (n > max &&
	       !atomic_compare_exchange_weak(&fc->route_inflight_max, &max, n))
		;
}

/* route = sa, blocking: the path resolved into id (on r->ch). */
static int route_sa_wait(struct route *r, const struct config_node *node,
			 struct rdma_cm_id **idp)
{
	struct route_wait w = {.r = r, .ch = r->ch};
	int rc;

	route_gauge(r, 1);
	rc = route_sa_start(r, node, r->ch, NULL, &w.id);
	*idp = w.id;
	if (!rc) {
		rc = route_wait_events(&w);
		if (rc)
			log_warnx("route: resolving %s (%s): %s", node->name,
				  node->addr, strerror(-rc));
	}
	route_gauge(r, -1);
	return rc;
}

/*
 * The AH to node, from the path in id (route = sa) or from what it
 * announced (route = gid), made with the device held in generation gen,
 * in *ah; it is installed with that generation (route_up), which drops
 * it when the device went since.
 */
static int route_finish(struct route *r, const struct config_node *node,
			const struct peer_addr *remote, struct rdma_cm_id *id,
			uint64_t gen, struct ibv_ah **ah)
{
	const struct tp_info *ti = tp_info(r->tp);
	struct ibv_ah_attr attr;
	struct ibv_ah *made = NULL;
	int rc = 0;

	if (tp_dev_hold(r->tp, gen))
		return -ENETDOWN; /* the device went meanwhile (tp_heal.c) */
	if (id)
		rc = route_sa_attr(r, node, id, &attr);
	else
		route_gid_to_ah_attr(remote, r->port, (uint8_t)ti->gid_index,
				     r->is_roce, &attr);
	if (!rc) {
		route_fabric_attr(r->cfg, &attr);
		made = ibv_create_ah(tp_pd(r->tp), &attr);
		if (!made) {
			rc = errno ? -errno : -EIO;
			log_warn("route: ibv_create_ah for %s", node->name);
		}
	}
	tp_dev_release(r->tp);
	*ah = made;
	return rc;
}

/* Install p at remote through ah, made in generation gen (no lock held:
 * a new incarnation's pending messages fail through their upcalls). */
static int route_up(struct route *r, struct peer *p,
		    const struct peer_addr *remote, struct ibv_ah *ah,
		    uint64_t gen)
{
	return tp_peer_up_gen(r->tp, p, remote, ah, r->cfg->route, gen);
}

/* Whether node speaks our link layer; -EPROTO, logged, when not. */
static int route_same_link(struct route *r, const struct config_node *node,
			   const struct peer_addr *remote)
{
	if (remote->link_layer == tp_info(r->tp)->link_layer)
		return 0;
	log_warnx("route: %s is on %s, we are on %s", node->name,
		  remote->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE"
								: "InfiniBand",
		  r->is_roce ? "RoCE" : "InfiniBand");
	return -EPROTO;
}

/* route_resolve's and route_install's AH, begun in generation gen:
 * blocking, on r->ch. */
static int route_blocking(struct route *r, const struct config_node *node,
			  const struct peer_addr *remote, uint64_t gen,
			  struct ibv_ah **ah)
{
	struct rdma_cm_id *id = NULL;
	int rc;

	rc = route_same_link(r, node, remote);
	if (rc)
		return rc;
	pthread_mutex_lock(&r->lock);
	if (r->cfg->route == ROUTE_SA)
		rc = route_sa_wait(r, node, &id);
	if (!rc)
		rc = route_finish(r, node, remote, id, gen, ah);
	if (id)
		rdma_destroy_id(id);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

int route_resolve(struct route *r, const struct config_node *node,
		  const struct peer_addr *remote, struct ibv_ah **ah)
{
	return route_blocking(r, node, remote, tp_dev_gen(r->tp), ah);
}

int route_install(struct route *r, struct peer *p,
		  const struct peer_addr *remote)
{
	uint64_t gen = tp_dev_gen(r->tp);
	struct ibv_ah *ah;
	int rc;

	rc = route_blocking(r, p->conf, remote, gen, &ah);
	return rc ? rc : route_up(r, p, remote, ah, gen);
}

/*
 * Join group as rdma_cm does for mckey: an RDMA_PS_UDP id bound to our own
 * addr (so rdma_cm takes our device and port), then rdma_join_multicast;
 * on InfiniBand the SA makes the group and programs the switches, on
 * RoCE the host joins the IP group (IGMP).  The id is the membership: it
 * is kept until route_leave, on an event channel of its own, so that the
 * group's thread may wait for its MULTICAST_ERROR (route_join_fd) while
 * the bootstrap thread resolves on r's.  why gets the reason of a
 * failure.
 */
static int route_join_locked(struct route *r, const struct sockaddr *group,
			     struct rdma_cm_id **idp, struct ibv_ah_attr *attr,
			     char *why, size_t whylen)
{
	const struct config_node *me = &r->cfg->nodes[r->cfg->local];
	struct route_wait w = {.r = r, .attr = attr};
	struct sockaddr_storage src;
	const char *step;
	int rc;

	if (route_node_addr(r, me, &src)) {
		snprintf(why, whylen, "addr of node %s does not resolve",
			 me->name);
		return -EHOSTUNREACH;
	}
	w.ch = route_new_channel();
	if (!w.ch) {
		snprintf(why, whylen, "no rdma_cm event channel");
		return -ENODEV;
	}
	if (rdma_create_id(w.ch, &w.id, NULL, RDMA_PS_UDP)) {
		step = "rdma_create_id";
		goto fail_errno;
	}
	if (rdma_bind_addr(w.id, (struct sockaddr *)&src)) {
		step = "rdma_bind_addr (addr of this node)";
		goto fail_errno;
	}
	if (rdma_join_multicast(w.id, (struct sockaddr *)group, NULL)) {
		step = "rdma_join_multicast";
		goto fail_errno;
	}
	rc = route_wait_events(&w);
	if (!rc)
		rc = route_check_dev(r, w.id, "the group");
	if (rc) {
		snprintf(why, whylen, "join: %s", strerror(-rc));
		route_leave(r, w.id, group);
		return rc;
	}
	route_fabric_attr(r->cfg, attr);
	*idp = w.id;
	return 0;
fail_errno:
	rc = errno ? -errno : -EIO;
	snprintf(why, whylen, "%s: %s", step, strerror(-rc));
	if (w.id)
		rdma_destroy_id(w.id);
	rdma_destroy_event_channel(w.ch);
	return rc;
}

int route_join(struct route *r, const struct sockaddr *group,
	       struct rdma_cm_id **idp, struct ibv_ah_attr *attr, char *why,
	       size_t whylen)
{
	int rc;

	pthread_mutex_lock(&r->lock);
	rc = route_join_locked(r, group, idp, attr, why, whylen);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* Leave the group (SA or IGMP), then drop the id and its channel:
 * librdmacm frees its record of the join only in rdma_leave_multicast. */
void route_leave(struct route *r, struct rdma_cm_id *id,
		 const struct sockaddr *group)
{
	struct rdma_event_channel *ch;

	if (!id)
		return;
	ch = id->channel;
	if (rdma_leave_multicast(id, (struct sockaddr *)group))
		log_debug("rdma_leave_multicast: %s", strerror(errno));
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

/* The descriptor that is readable when the membership id has an event. */
int route_join_fd(struct rdma_cm_id *id)
{
	return id->channel->fd;
}

/*
 * Take the membership's pending events (non-blocking): 1 when one says
 * the group is lost (MULTICAST_ERROR: the SA dropped it, or the port
 * went), its words in why; else 0.
 */
int route_join_lost(struct rdma_cm_id *id, char *why, size_t whylen)
{
	struct rdma_cm_event *ev;
	int lost = 0;

	while (!rdma_get_cm_event(id->channel, &ev)) {
		if (ev->event == RDMA_CM_EVENT_MULTICAST_ERROR) {
			snprintf(why, whylen,
				 "rdma_cm reports a multicast "
				 "error (status %d)",
				 ev->status);
			lost = 1;
		} else {
			log_debug("multicast: %s", rdma_event_str(ev->event));
		}
		rdma_ack_cm_event(ev);
	}
	return lost;
}

/* Move q to list to (NULL: off every list). */
static void route_req_move(struct route *r, struct route_req *q,
			   struct route_reqq *to)
{
	if (q->q) {
		TAILQ_REMOVE(q->q, q, link);
		if (q->q == &r->inflight) {
			r->ninflight--;
			route_gauge(r, -1);
		}
	}
	q->q = to;
	if (to) {
		TAILQ_INSERT_TAIL(to, q, link);
		if (to == &r->inflight) {
			r->ninflight++;
			route_gauge(r, 1);
		}
	}
}

/* Its cm id gone (the device's removal waits for none), q ends, failed
 * with rc, or resolved when rc is 0: its callback is due. */
static void route_req_end(struct route *r, struct route_req *q, int rc)
{
	struct ibv_ah *ah;

	/* Another session of the peer may have installed it at this very
	 * address meanwhile: its AH serves, and none is made again. */
	if (!rc && tp_peer_up(r->tp, q->p, &q->remote, NULL, r->cfg->route)) {
		rc = route_finish(r, q->p->conf, &q->remote, q->w.id, q->gen,
				  &ah);
		if (!rc)
			rc = route_up(r, q->p, &q->remote, ah, q->gen);
	}
	if (q->w.id)
		rdma_destroy_id(q->w.id);
	q->w.id = NULL;
	q->w.done = 1;
	q->w.rc = rc;
	route_req_move(r, q, &r->done);
}

/* Start the queued resolutions there is room for, in order. */
static void route_start_queued(struct route *r, int64_t now)
{
	struct route_req *q;
	int rc;

	while (r->ninflight < ROUTE_INFLIGHT_MAX &&
	       (q = TAILQ_FIRST(&r->queued))) {
		route_req_move(r, q, &r->inflight);
		q->deadline = now + 2 * (int64_t)r->timeout_ms;
		rc = route_sa_start(r, q->p->conf, r->ach, q, &q->w.id);
		if (rc)
			route_req_end(r, q, rc);
	}
}

int route_install_start(struct route *r, struct peer *p,
			const struct peer_addr *remote,
			void (*done)(void *arg, int rc), void *arg,
			struct route_req **reqp)
{
	struct route_req *q;
	int rc;

	*reqp = NULL;
	if (r->cfg->route != ROUTE_SA)
		return route_install(r, p, remote); /* nothing to wait for */
	rc = route_same_link(r, p->conf, remote);
	if (rc)
		return rc;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->w.r = r;
	q->w.ch = r->ach;
	q->p = p;
	q->remote = *remote;
	q->gen = tp_dev_gen(r->tp);
	q->done = done;
	q->arg = arg;
	route_req_move(r, q, &r->queued);
	route_start_queued(r, util_now_ms());
	*reqp = q;
	return -EINPROGRESS;
}

/* Off its list, its cm id destroyed, freed. */
void route_cancel(struct route *r, struct route_req *q)
{
	if (!q)
		return;
	route_req_move(r, q, NULL);
	if (q->w.id)
		rdma_destroy_id(q->w.id);
	free(q);
}

int route_async_fd(const struct route *r)
{
	return r->ach ? r->ach->fd : -1;
}

/* Take every event on ach, each to the resolution its id is of. */
static void route_async_events(struct route *r)
{
	struct rdma_cm_event *ev;
	struct route_req *q;
	route_handler h;

	while (!rdma_get_cm_event(r->ach, &ev)) {
		q = ev->id ? ev->id->context : NULL;
		h = (unsigned)ev->event < ARRAY_SIZE(route_handlers)
			    ? route_handlers[ev->event]
			    : NULL;
		if (q && h && q->q == &r->inflight && !q->w.done)
			h(&q->w, ev);
		else
			log_debug("route: ignored %s",
				  rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
	}
}

int64_t route_async_run(struct route *r, int64_t now, int64_t wake)
{
	struct route_req *q, *tmp;
	int rc;

	if (!r->ach)
		return wake;
	route_async_events(r);
	for (q = TAILQ_FIRST(&r->inflight); q; q = tmp) {
		tmp = TAILQ_NEXT(q, link);
		rc = q->w.done ? q->w.rc : now >= q->deadline ? -ETIMEDOUT : 1;
		if (rc < 0)
			log_warnx("route: resolving %s (%s): %s",
				  q->p->conf->name, q->p->conf->addr,
				  strerror(-rc));
		if (rc <= 0)
			route_req_end(r, q, rc);
	}
	route_start_queued(r, now);
	/* A callback may cancel another request, or start one. */
	while ((q = TAILQ_FIRST(&r->done))) {
		route_req_move(r, q, NULL);
		q->done(q->arg, q->w.rc);
		free(q);
	}
	TAILQ_FOREACH (q, &r->inflight, link)
		if (q->w.done || q->deadline < wake)
			wake = q->w.done ? now : q->deadline;
	return wake;
}
