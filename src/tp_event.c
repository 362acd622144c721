/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The device's async events, read on the progress thread from the
 * context's async fd (non-blocking, in its epoll; every 50 ms with
 * busy_poll), each handled by its row of one table and acked:
 *
 *   PORT_ERR           every peer is down, "port N of DEV is down", and
 *                      no longer probed (tp_probe_hold)
 *   PORT_ACTIVE        the port is back: every peer joined is probed
 *                      again, and up once it answers
 *   GID_CHANGE         our GID is read again; when it changed (and is
 *                      not gone: rxe says GID_CHANGE as it is removed),
 *                      every peer met before is told the new one
 *                      (tp_heal.c: peers know us by the GID our hello
 *                      gave them), then it is handled as SM_CHANGE;
 *                      another entry's change (an address on a RoCE
 *                      netdev) only probes the peers not up again
 *   LID_CHANGE         our LID is read again, a new one told as a new
 *                      GID is; then as SM_CHANGE
 *   SM_CHANGE,         the paths may have moved and the subnet manager
 *   CLIENT_REREGISTER  may have forgotten our group membership, as IPoIB
 *                      takes them: every AH is flushed (tp_probe_flush),
 *                      the peers in use are resolved again through
 *                      whoever met them (the need hook), and the group
 *                      is joined again (the rejoin hook, mcast.c)
 *   DEVICE_FATAL       the device is going: tp_heal.c closes it at the
 *                      next tick and opens it again once it is back
 *
 * Each is logged once at info, in words (rate-limited: rxe sends
 * PORT_ACTIVE twice per flap, and a port already up says nothing), and
 * counted in tp->fabric: fabric_events for each taken, fabric_recoveries
 * for each that set something right.  Events of another port, and the
 * rest (QP and CQ errors, which the send and receive paths see in their
 * completions), are logged at debug level only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "tp_int.h"
#include "util.h"

/* One kind of event and what it does (progress thread, no lock held). */
struct tp_event_row {
	enum ibv_event_type type;
	int port; /* an event of a port: only ours is handled */
	void (*fn)(struct tp *tp, const struct ibv_async_event *ev);
};

/* Count an event taken; a recovery too when it set something right. */
static void tp_event_count(struct tp *tp, int recovered)
{
	tp_add(&tp->fabric.fabric_events, 1);
	if (recovered)
		tp_add(&tp->fabric.fabric_recoveries, 1);
	atomic_store(&tp->fabric.last_event, (int64_t)time(NULL));
}

/* The port went down: every peer with it. */
static void tp_event_port_err(struct tp *tp, const struct ibv_async_event *ev)
{
	char why[PEER_ERROR_MAX]; /* it becomes every peer's last_error */
	int was_down = tp->probe.port_down, n;

	snprintf(why, sizeof(why), "port %d of %s is down", tp->info.port,
		 tp->info.device);
	n = tp_probe_hold(tp, 1, why);
	tp_event_count(tp, 0);
	if (!was_down)
		log_rl_info(&tp->event_rl,
			    "port %d of %s is down: %d peer%s for it",
			    tp->info.port, tp->info.device, n,
			    n == 1 ? " waits" : "s wait");
}

/* The port is back: probe every peer again.  rxe says so twice per
 * flap: the second finds the port up and is not logged. */
static void tp_event_port_active(struct tp *tp,
				 const struct ibv_async_event *ev)
{
	int was_down = tp->probe.port_down, n;

	n = tp_probe_hold(tp, 0, NULL);
	tp_event_count(tp, was_down);
	if (was_down)
		log_rl_info(&tp->event_rl,
			    "port %d of %s is active again: probing %d peer%s",
			    tp->info.port, tp->info.device, n,
			    n == 1 ? "" : "s");
}

/*
 * The paths may have moved, and our membership of the group with them:
 * flush every AH, have the peers in use resolved again, rejoin the
 * group.  what names the event in the log line.
 */
static void tp_event_reroute(struct tp *tp, const char *what)
{
	char why[PEER_ERROR_MAX];
	int n, rejoin;

	snprintf(why, sizeof(why),
		 "%s on port %d of %s: resolving the path again", what,
		 tp->info.port, tp->info.device);
	n = tp_probe_flush(tp, why);
	rejoin = tp_mcast_rejoin(tp, what);
	tp_add(&tp->fabric.ah_flushed, (uint64_t)n);
	tp_event_count(tp, 1);
	log_rl_info(&tp->event_rl,
		    "%s on port %d of %s: %d address handle%s flushed%s", what,
		    tp->info.port, tp->info.device, n, n == 1 ? "" : "s",
		    rejoin ? ", rejoining the group" : "");
}

/* Our address changed: the peers met before, counted now (the flush
 * that follows drops their AHs), are told at the next tick (tp_heal.c).
 * Two changes before it tell them once. */
static void tp_event_moved(struct tp *tp)
{
	if (!tp->heal.retell)
		tp->heal.told = tp_probe_met(tp);
	tp->heal.retell = 1;
}

/* Our GID may have changed: read it again, say so, probe again. */
static void tp_event_gid(struct tp *tp, const struct ibv_async_event *ev)
{
	char was[UTIL_GID_STRLEN], now[UTIL_GID_STRLEN];
	static const union ibv_gid zero;
	union ibv_gid gid;

	if (ibv_query_gid(tp->dev.ctx, tp->info.port, tp->info.gid_index,
			  &gid)) {
		log_warn("gid_index %d of %s: reading the GID table",
			 tp->info.gid_index, tp->info.device);
		return;
	}
	if (memcmp(&gid, &tp->info.gid, sizeof(gid)) &&
	    memcmp(&gid, &zero, sizeof(gid))) {
		log_info("the GID of %s port %d (gid_index %d) changed from "
			 "%s to %s: telling the peers met before",
			 tp->info.device, tp->info.port, tp->info.gid_index,
			 util_gid_str(&tp->info.gid, was, sizeof(was)),
			 util_gid_str(&gid, now, sizeof(now)));
		tp->info.gid = gid;
		tp_dev_show(tp);
		tp_event_moved(tp);
		tp_event_reroute(tp, "the GID changed");
		return;
	}
	/* another entry of the table (an address came or went on a RoCE
	 * netdev): our paths did not move */
	tp_event_count(tp, 0);
	log_rl_info(&tp->event_rl,
		    "the GID table of %s port %d changed, not our entry (%d): "
		    "probing the peers not up again",
		    tp->info.device, tp->info.port, tp->info.gid_index);
	tp_probe_restart(tp);
}

/* Our LID may have changed: read it again; the paths with it. */
static void tp_event_lid(struct tp *tp, const struct ibv_async_event *ev)
{
	struct ibv_port_attr pa;

	if (!ibv_query_port(tp->dev.ctx, tp->info.port, &pa) &&
	    pa.lid != tp->info.lid) {
		log_info("the LID of %s port %d changed from %u to %u: telling "
			 "the peers met before",
			 tp->info.device, tp->info.port, tp->info.lid, pa.lid);
		tp->info.lid = pa.lid;
		tp_dev_show(tp);
		tp_event_moved(tp);
	}
	tp_event_reroute(tp, "the LID changed");
}

/* The subnet manager changed, or asks us to register again. */
static void tp_event_sm(struct tp *tp, const struct ibv_async_event *ev)
{
	tp_event_reroute(tp, ev->event_type == IBV_EVENT_SM_CHANGE
				     ? "the subnet manager changed"
				     : "the subnet manager asked us to "
				       "register again");
}

/* The device is going (mlx5 after a firmware or PCI error): closed once
 * this event is acked, so that its removal can complete (tp_heal.c). */
static void tp_event_fatal(struct tp *tp, const struct ibv_async_event *ev)
{
	tp_event_count(tp, 0);
	log_info("%s reports a fatal error: closing it until it is back",
		 tp->info.device);
	tp->heal.pending = 1;
}

static const struct tp_event_row tp_event_table[] = {
	{IBV_EVENT_PORT_ERR, 1, tp_event_port_err},
	{IBV_EVENT_PORT_ACTIVE, 1, tp_event_port_active},
	{IBV_EVENT_GID_CHANGE, 1, tp_event_gid},
	{IBV_EVENT_LID_CHANGE, 1, tp_event_lid},
	{IBV_EVENT_SM_CHANGE, 1, tp_event_sm},
	{IBV_EVENT_CLIENT_REREGISTER, 1, tp_event_sm},
	{IBV_EVENT_DEVICE_FATAL, 0, tp_event_fatal},
};

/* The row for ev, NULL when it is not ours to handle. */
static const struct tp_event_row *
tp_event_find(struct tp *tp, const struct ibv_async_event *ev)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tp_event_table); i++) {
		const struct tp_event_row *r = &tp_event_table[i];

		if (r->type != ev->event_type)
			continue;
		if (r->port && ev->element.port_num != tp->info.port)
			return NULL;
		return r;
	}
	return NULL;
}

/* What one event does, by its row; 1 when it was ours to handle. */
int tp_event_handle(struct tp *tp, const struct ibv_async_event *ev)
{
	const struct tp_event_row *r = tp_event_find(tp, ev);

	if (!r) {
		log_debug("%s: event %s", tp->info.device,
			  ibv_event_type_str(ev->event_type));
		return 0;
	}
	r->fn(tp, ev);
	return 1;
}

/* Take every pending event: ack it (a handler never needs the event's
 * object, only its type and port, copied here), then handle it. */
void tp_event_drain(struct tp *tp)
{
	struct ibv_async_event ev, copy;

	while (!ibv_get_async_event(tp->dev.ctx, &ev)) {
		copy = ev;
		ibv_ack_async_event(&ev);
		tp_event_handle(tp, &copy);
	}
}
