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
 *                      our AHs are dropped and every peer met before is
 *                      told the new one (tp_heal.c: peers know us by the
 *                      GID our hello gave them)
 *   LID_CHANGE,        a path may have moved: our LID is read again,
 *   SM_CHANGE,         and the peers not up are probed again; a new LID
 *   CLIENT_REREGISTER  is told as a new GID is
 *   DEVICE_FATAL       the device is going: tp_heal.c closes it at the
 *                      next tick and opens it again once it is back
 *
 * Events of another port, and the rest (QP and CQ errors, which the send
 * and receive paths see in their completions), are logged at debug level
 * only.  AHs are kept: they name the peer's GID or LID, which did not
 * change with our port.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "tp_int.h"
#include "util.h"

/* One kind of event and what it does (progress thread, no lock held). */
struct tp_event_row {
	enum ibv_event_type type;
	int port; /* an event of a port: only ours is handled */
	void (*fn)(struct tp *tp, const struct ibv_async_event *ev);
};

/* The port went down: every peer with it. */
static void tp_event_port_err(struct tp *tp, const struct ibv_async_event *ev)
{
	char why[PEER_ERROR_MAX]; /* it becomes every peer's last_error */

	snprintf(why, sizeof(why), "port %d of %s is down", tp->info.port,
		 tp->info.device);
	log_warnx("%s: every peer is down until it is back", why);
	tp_probe_hold(tp, 1, why);
}

/* The port is back: probe every peer again. */
static void tp_event_port_active(struct tp *tp,
				 const struct ibv_async_event *ev)
{
	log_info("port %d of %s is active again: probing every peer",
		 tp->info.port, tp->info.device);
	tp_probe_hold(tp, 0, NULL);
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
		tp->heal.retell = 1;
	}
	tp_probe_restart(tp);
}

/* The subnet manager moved something: our LID, the paths. */
static void tp_event_path(struct tp *tp, const struct ibv_async_event *ev)
{
	struct ibv_port_attr pa;

	log_info("port %d of %s: %s, probing the peers not up again",
		 tp->info.port, tp->info.device,
		 ibv_event_type_str(ev->event_type));
	if (!ibv_query_port(tp->dev.ctx, tp->info.port, &pa) &&
	    pa.lid != tp->info.lid) {
		log_info("the LID of %s port %d changed from %u to %u: telling "
			 "the peers met before",
			 tp->info.device, tp->info.port, tp->info.lid, pa.lid);
		tp->info.lid = pa.lid;
		tp->heal.retell = 1;
	}
	tp_probe_restart(tp);
}

/* The device is going (mlx5 after a firmware or PCI error): closed once
 * this event is acked, so that its removal can complete (tp_heal.c). */
static void tp_event_fatal(struct tp *tp, const struct ibv_async_event *ev)
{
	log_info("%s reports a fatal error: closing it until it is back",
		 tp->info.device);
	tp->heal.pending = 1;
}

static const struct tp_event_row tp_event_table[] = {
	{IBV_EVENT_PORT_ERR, 1, tp_event_port_err},
	{IBV_EVENT_PORT_ACTIVE, 1, tp_event_port_active},
	{IBV_EVENT_GID_CHANGE, 1, tp_event_gid},
	{IBV_EVENT_LID_CHANGE, 1, tp_event_path},
	{IBV_EVENT_SM_CHANGE, 1, tp_event_path},
	{IBV_EVENT_CLIENT_REREGISTER, 1, tp_event_path},
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
