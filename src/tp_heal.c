/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The device removed, then back (mlx5 firmware recovery, devlink reload,
 * PCI error recovery; on rxe `rdma link delete`, then `add`), on the
 * progress thread.
 *
 * Going: mlx5 says DEVICE_FATAL on the async fd; rxe never does (it
 * cannot disassociate a context), and the kernel's removal waits until
 * every holder closed its context.  rdma_cm removes its clients first and
 * says DEVICE_REMOVAL to each cm id bound to the device, so we keep one
 * bound to this node's addr on a channel of our own.  On either,
 * everything of the old device is closed at once, in the reverse of
 * tp_dev_open's steps, after the layers above dropped what they hold on
 * it (the group's cm id, through the heal hook): the removal completes.
 * Every peer is held down with the reason, so that a write waits as for
 * a peer not met yet, or fails at peer_timeout.  Reliable streams end:
 * what waited for an ack fails ENOTCONN, and our next boot id names new
 * sessions, so that nothing of the old ones is delivered twice.
 *
 * Back: a bounded backoff (TP_HEAL_FIRST_MS doubling to TP_HEAL_MAX_MS)
 * looks for the device listed and its port ACTIVE, then opens it as at start
 * (a new QP, QPN and boot id).  No RDMA netlink monitor on the kernels we
 * run on (6.1 has none that iproute2 speaks) and no udev dependency: a
 * device list and a sysfs read, at most every two seconds, cost nothing
 * while the device is away.  The heal hook then rejoins the group and tells
 * every peer met before (a new hello, or an announce), so they replace their
 * AH.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "log.h"
#include "tp_int.h"
#include "util.h"

#define TP_HEAL_FIRST_MS 250  /* first look for the device back */
#define TP_HEAL_MAX_MS	 2000 /* ... doubling to this */

/* Make fd non-blocking, as the epoll loop needs. */
int tp_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* The device's two fds in the progress thread's epoll (or out of it). */
int tp_heal_fds(struct tp *tp, int add)
{
	const int fds[2] = {tp->dev.chan->fd, tp->dev.ctx->async_fd};
	const uint32_t ids[2] = {TP_EV_CHAN, TP_EV_ASYNC};
	struct epoll_event ev;
	int i;

	for (i = 0; i < 2; i++) {
		if (add && tp_nonblock(fds[i]))
			return -errno;
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.u32 = ids[i];
		if (epoll_ctl(tp->prog.epfd,
			      add ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fds[i],
			      &ev) &&
		    add)
			return -errno;
	}
	return 0;
}

/* A cm id bound to this node's addr, on our device, to hear its removal;
 * without one (no rdma_cm, no IP on the port) only DEVICE_FATAL tells. */
static void tp_heal_watch(struct tp *tp)
{
	const struct config_node *me = &tp->cfg->nodes[tp->cfg->local];
	union config_sa ss = me->addr_sa;
	struct tp_heal *h = &tp->heal;

	if (!h->ch || ss.ss_family == AF_UNSPEC)
		return;
	if (ss.ss_family == AF_INET)
		ss.in.sin_port = 0;
	else if (ss.ss_family == AF_INET6)
		ss.in6.sin6_port = 0;
	if (rdma_create_id(h->ch, &h->id, tp, RDMA_PS_UDP)) {
		h->id = NULL;
		return;
	}
	if (rdma_bind_addr(h->id, &ss.sa) || !h->id->verbs ||
	    strcmp(ibv_get_device_name(h->id->verbs->device),
		   tp->info.device)) {
		log_debug("transport: no rdma_cm id on %s (%s): only "
			  "DEVICE_FATAL says it goes",
			  tp->info.device, strerror(errno));
		rdma_destroy_id(h->id);
		h->id = NULL;
	}
}

/* Drop the cm id, so that rdma_cm's removal need not wait for it. */
static void tp_heal_unwatch(struct tp *tp)
{
	if (tp->heal.id)
		rdma_destroy_id(tp->heal.id);
	tp->heal.id = NULL;
}

/* The watch's channel and its id (main, tp_open). */
int tp_heal_open(struct tp *tp)
{
	struct tp_heal *h = &tp->heal;

	h->ch = rdma_create_event_channel();
	if (h->ch && tp_nonblock(h->ch->fd)) {
		rdma_destroy_event_channel(h->ch);
		h->ch = NULL;
	}
	if (!h->ch)
		log_debug("transport: no rdma_cm channel: only DEVICE_FATAL "
			  "says %s goes",
			  tp->info.device);
	tp_heal_watch(tp);
	return 0;
}

/* Pair of tp_heal_open (main, the progress thread stopped). */
void tp_heal_close(struct tp *tp)
{
	tp_heal_unwatch(tp);
	if (tp->heal.ch)
		rdma_destroy_event_channel(tp->heal.ch);
	tp->heal.ch = NULL;
}

/* The device is going (an event said so): closed at the next tick, once
 * the event that said it is acked. */
/* The watch's channel readable: DEVICE_REMOVAL is the one event ours. */
void tp_heal_cm(struct tp *tp)
{
	struct rdma_cm_event *ev;
	int removal;

	while (tp->heal.ch && !rdma_get_cm_event(tp->heal.ch, &ev)) {
		removal = ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL;
		rdma_ack_cm_event(ev);
		if (removal && !atomic_load(&tp->heal.gone))
			tp->heal.pending = 1;
	}
}

/* Set (or, with ops NULL, clear) who heals the layers above. */
void tp_set_heal(struct tp *tp, const struct tp_heal_ops *ops, void *arg)
{
	pthread_mutex_lock(&tp->heal.lock);
	memset(&tp->heal.ops, 0, sizeof(tp->heal.ops));
	if (ops)
		tp->heal.ops = *ops;
	tp->heal.arg = arg;
	pthread_mutex_unlock(&tp->heal.lock);
}

/* The layers above: gone (back 0) or back (1). */
static void tp_heal_hook(struct tp *tp, int back)
{
	void (*fn)(void *);

	pthread_mutex_lock(&tp->heal.lock);
	fn = back ? tp->heal.ops.back : tp->heal.ops.gone;
	if (fn)
		fn(tp->heal.arg);
	pthread_mutex_unlock(&tp->heal.lock);
}

/* Every peer's AH, once no send can use it (the QP is gone). */
void tp_destroy_ahs(struct tp *tp)
{
	int i;

	for (i = 0; i < tp->npeers; i++) {
		struct peer *p = &tp->peers[i];
		struct peer_use *u = peer_used(p);

		if (!u) /* never used: no AH */
			continue;
		pthread_mutex_lock(&p->lock);
		if (u->ah)
			ibv_destroy_ah(u->ah);
		u->ah = NULL;
		p->up = 0;
		tp_probe_stop(p);
		pthread_mutex_unlock(&p->lock);
	}
}

/* No sender in ibv_post_send any more; the QP goes, and with it every
 * WR not completed (counted as dropped). */
static void tp_heal_quiesce(struct tp *tp)
{
	pthread_mutex_lock(&tp->ring.lock);
	while (tp->ring.posting) {
		pthread_mutex_unlock(&tp->ring.lock);
		usleep(1000);
		pthread_mutex_lock(&tp->ring.lock);
	}
	tp_dev_stop(tp);
	tp_add(&tp->totals.drops[DROP_MALFORMED],
	       tp->ring.filled - tp->ring.done);
	tp->ring.done = tp->ring.posted = tp->ring.last_sig = tp->ring.filled;
	pthread_mutex_unlock(&tp->ring.lock);
}

/*
 * Our cm ids are gone; librdmacm still holds a verbs context of its own on
 * the device (opened at the first bind) and closes it only once it finds
 * the device missing from the list it syncs, here: else the removal
 * would wait for it.
 */
static void tp_heal_cm_sync(void)
{
	struct ibv_context **l = rdma_get_devices(NULL);

	if (l)
		rdma_free_devices(l);
}

/* Whether verbs lists the device by its name (one being removed it does
 * not, though sysfs still shows it). */
static int tp_heal_listed(const char *name)
{
	struct ibv_device **l;
	int n = 0, i, found = 0;

	l = ibv_get_device_list(&n);
	for (i = 0; l && i < n && !found; i++)
		found = !strcmp(ibv_get_device_name(l[i]), name);
	if (l)
		ibv_free_device_list(l);
	return found;
}

/* Close everything of the device at once, keep the engine. */
static void tp_heal_down(struct tp *tp)
{
	struct tp_heal *h = &tp->heal;
	char why[PEER_ERROR_MAX];
	int i;

	h->pending = 0;
	h->retell = 0; /* its return tells every peer met, of everything */
	atomic_store(&h->gone, 1);
	h->waiting = tp_probe_met(tp);
	snprintf(why, sizeof(why), "%s is gone", tp->info.device);
	log_info("%s: %d peer%s", why, h->waiting,
		 h->waiting == 1 ? " waits" : "s wait");
	tp_heal_hook(tp, 0);
	tp_probe_hold(tp, 1, why);
	for (i = 0; i < tp->npeers; i++)
		tp_rel_reset(tp, &tp->peers[i], -ENOTCONN, 1);
	tp_rel_unboot(tp);
	tp_mcast_close(tp);
	tp_heal_quiesce(tp);
	/* A resolver that saw the device before gone was set finishes its
	 * AH and its install first; none starts one after (tp_dev_hold). */
	pthread_rwlock_wrlock(&tp->heal.devlock);
	tp_destroy_ahs(tp);
	pthread_mutex_lock(&tp->ring.lock);
	tp_ring_free_retired(tp, 1);
	tp_heal_unwatch(tp);
	tp_heal_fds(tp, 0);
	tp_dev_close(tp);
	memset(&tp->dev, 0, sizeof(tp->dev));
	atomic_fetch_add(&tp->heal.gen, 1);
	pthread_mutex_unlock(&tp->ring.lock);
	pthread_rwlock_unlock(&tp->heal.devlock);
	tp_heal_cm_sync();
	h->backoff_ms = TP_HEAL_FIRST_MS;
	h->retry_at = util_now_ms() + h->backoff_ms;
}

/* Whether the device is there with its port ACTIVE, quietly. */
static int tp_heal_present(struct tp *tp)
{
	char path[256], buf[32];
	FILE *f;
	int ok;

	if (!tp_heal_listed(tp->info.device))
		return 0;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/state",
		 tp->info.device, tp->info.port);
	f = fopen(path, "r");
	if (!f)
		return 0;
	ok = fgets(buf, sizeof(buf), f) && strstr(buf, "ACTIVE");
	fclose(f);
	return ok;
}

/* Every receive slot free again, posted on the new QP, armed. */
static int tp_heal_recv(struct tp *tp)
{
	uint32_t i;

	for (i = 0; i < tp->cfg->recv_depth; i++)
		tp->rx.free[i] = i;
	tp->rx.nfree = tp->cfg->recv_depth;
	if (tp_recv_post(tp) || ibv_req_notify_cq(tp->dev.rcq, 0))
		return -EIO;
	return 0;
}

/* Open the device again as at start; 0 once it is back. */
static int tp_heal_up(struct tp *tp)
{
	struct tp_heal *h = &tp->heal;
	int rc;

	if (!tp_heal_present(tp))
		return -ENODEV;
	tp->info.boot = 0; /* a new incarnation: new reliable sessions */
	pthread_mutex_lock(&tp->ring.lock);
	rc = tp_dev_open(tp);
	pthread_mutex_unlock(&tp->ring.lock);
	if (rc)
		return rc;
	rc = tp_heal_recv(tp);
	if (!rc)
		rc = tp_heal_fds(tp, 1);
	if (rc) {
		tp_heal_fds(tp, 0);
		tp_dev_close(tp);
		memset(&tp->dev, 0, sizeof(tp->dev));
		return rc;
	}
	tp_heal_watch(tp);
	atomic_store(&h->gone, 0);
	tp_probe_hold(tp, 0, NULL);
	tp_heal_hook(tp, 1);
	log_info("%s is back: %d peer%s told the new QPN 0x%06x",
		 tp->info.device, h->waiting, h->waiting == 1 ? "" : "s",
		 tp->info.qpn);
	return 0;
}

/*
 * Our GID or LID changed: the event flushed every AH we made, which
 * named the old source (tp_probe_flush, through tp_event_reroute), and
 * the heal hook now tells every peer met before our new address, as
 * after a device reset, but on the same QP.  Nothing is flushed again
 * here: a path resolved since the event is the new one.
 */
static void tp_heal_retell(struct tp *tp)
{
	int n = tp->heal.told;

	tp->heal.retell = 0;
	tp_heal_hook(tp, 1);
	log_info("%s port %d: our address changed: %d peer%s told it",
		 tp->info.device, tp->info.port, n, n == 1 ? "" : "s");
}

/* Close the device an event said is going; while it is gone, look for
 * it back when due.  Returns the ms until the next look (-1: none). */
int tp_heal_tick(struct tp *tp, uint64_t now)
{
	struct tp_heal *h = &tp->heal;

	if (h->pending)
		tp_heal_down(tp);
	else if (h->retell && !atomic_load(&h->gone))
		tp_heal_retell(tp);
	if (!atomic_load(&h->gone))
		return -1;
	now = util_now_ms();
	if (now < h->retry_at)
		return (int)(h->retry_at - now);
	if (!tp_heal_up(tp))
		return -1;
	h->backoff_ms *= 2;
	if (h->backoff_ms > TP_HEAL_MAX_MS)
		h->backoff_ms = TP_HEAL_MAX_MS;
	h->retry_at = now + h->backoff_ms;
	return (int)h->backoff_ms;
}
