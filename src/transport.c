/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verbs engine, on top: one UD QP for every peer, the classic
 * kernel-verbs UD recipe in user space.  This file opens and closes it
 * (tp_open is the recipe's steps in order, tp_close the reverse), runs the
 * progress thread and installs peers as they come up and go down; the
 * parts live in tp_dev.c, tp_ring.c, tp_upcall.c, tp_rel.c and tp_recv.c
 * (see tp_int.h for their layering, the threads and the one lock order).
 *
 * The progress thread sleeps in epoll on the receive CQ's completion
 * channel, the device's async event fd (tp_event.c), a timerfd
 * (reassembly expiry) and an eventfd (stop, reliable sends that want
 * their timers armed, probes started, the probe watch's first send); it
 * wakes for the probes' and the reliable timers' next deadline too, and
 * for nothing else: an idle daemon's progress thread sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#include "log.h"
#include "tp_int.h"
#include "util.h"

/*
 * Completion channel readable: drain, then take the event, re-arm and
 * drain again.  The two system calls of taking and re-arming come after
 * the batch is delivered, off a waiting reader's path (under TCG they
 * were 195 us of every wake-up); a completion that lands between the
 * first drain and the re-arm raises no event, so the second drain (a
 * poll of a user-space ring) takes it.  Only the receive CQ has the
 * channel; epoll is level-triggered, so a second event brings us back.
 */
static void tp_on_chan(struct tp *tp)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	tp_recv_drain(tp);
	if (ibv_get_cq_event(tp->dev.chan, &cq, &cq_ctx)) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			log_warn("transport: ibv_get_cq_event");
		return;
	}
	ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(cq, 0))
		log_warn("transport: ibv_req_notify_cq");
	tp_recv_drain(tp);
}

/* The expiry timer fired: tp_expire arms it again if anything waits. */
static void tp_on_timer(struct tp *tp)
{
	uint64_t v;

	if (read(tp->prog.tfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("transport: timerfd");
	tp->prog.timer_armed = 0;
}

/* Woken: to stop, or by a reliable send that wants its timers armed. */
static void tp_on_wake(struct tp *tp)
{
	uint64_t v;

	if (read(tp->prog.efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("transport: eventfd");
}

/* What the progress thread sleeps on, by epoll data.u32 (tp_int.h). */
static void (*const tp_on_event[TP_EV_MAX])(struct tp *) = {
	[TP_EV_CHAN] = tp_on_chan, [TP_EV_TIMER] = tp_on_timer,
	[TP_EV_WAKE] = tp_on_wake, [TP_EV_ASYNC] = tp_event_drain,
	[TP_EV_CM] = tp_heal_cm,
};

/* The sooner of two waits in ms, -1 being none. */
static int tp_wait_min(int a, int b)
{
	if (a < 0)
		return b;
	return b < 0 || a < b ? a : b;
}

/* Drop expired partial messages and arm the timer for the next. */
static void tp_expire(struct tp *tp)
{
	struct itimerspec its;
	int next = tp_recv_expire(tp);

	if (next < 0 || tp->prog.timer_armed || tp->prog.tfd < 0)
		return;
	/* A little slack so one expiry pass covers several messages. */
	next += 10;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = next / 1000;
	its.it_value.tv_nsec = (long)(next % 1000) * 1000000;
	if (!timerfd_settime(tp->prog.tfd, 0, &its, NULL))
		tp->prog.timer_armed = 1;
}

/* busy_poll = 1: spin on both CQs instead of sleeping on events. */
static void tp_busy_loop(struct tp *tp)
{
	uint64_t next_expire = 0, now;

	while (!atomic_load(&tp->prog.stop)) {
		if (tp->heal.pending || atomic_load(&tp->heal.gone)) {
			tp_heal_tick(tp, util_now_ms());
			usleep(50000); /* nothing to spin on meanwhile */
			continue;
		}
		tp_recv_drain(tp);
		if (!pthread_mutex_trylock(&tp->ring.lock)) {
			tp_ring_reap(tp);
			tp_ring_push(tp);
			pthread_mutex_unlock(&tp->ring.lock);
		}
		now = util_now_ms();
		if (now >= next_expire) {
			tp_recv_expire(tp); /* no timerfd in this mode */
			tp_event_drain(tp);
			tp_heal_cm(tp);
			next_expire = now + 50;
		}
		tp_probe_tick(tp, now);
		if (tp->rel.any) {
			tp->probe.rel_busy |= tp_rel_service(tp, 1);
			tp_up_announce(tp);
		}
	}
}

/* The progress thread: sleeps until a completion, a timer or stop. */
static void *tp_progress(void *arg)
{
	struct tp *tp = arg;
	struct epoll_event ev[TP_EV_MAX];
	int n, i, wait_ms = -1;

	pthread_setname_np(pthread_self(), "ibfs-progress");
	if (tp->cfg->busy_poll) {
		tp_busy_loop(tp);
		return NULL;
	}
	while (!atomic_load(&tp->prog.stop)) {
		n = epoll_wait(tp->prog.epfd, ev, TP_EV_MAX, wait_ms);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_warn("transport: epoll_wait");
			break;
		}
		for (i = 0; i < n; i++)
			if (ev[i].data.u32 < TP_EV_MAX)
				tp_on_event[ev[i].data.u32](tp);
		tp_expire(tp);
		wait_ms = tp->rel.any ? tp_rel_tick(tp) : -1;
		tp->probe.rel_busy |= wait_ms >= 0; /* the watch looks */
		wait_ms =
			tp_wait_min(wait_ms, tp_probe_tick(tp, util_now_ms()));
		wait_ms = tp_wait_min(wait_ms, tp_heal_tick(tp, util_now_ms()));
	}
	return NULL;
}

/* Close the progress thread's descriptors (those that were opened). */
static void tp_prog_close_fds(struct tp *tp)
{
	if (tp->prog.epfd >= 0)
		close(tp->prog.epfd);
	if (tp->prog.tfd >= 0)
		close(tp->prog.tfd);
	if (tp->prog.efd >= 0)
		close(tp->prog.efd);
	tp->prog.epfd = tp->prog.tfd = tp->prog.efd = -1;
}

/* epoll over the expiry timer, the wake fd, the device removal watch,
 * and the device's completion channel and async events (tp_heal_fds). */
static int tp_prog_fds(struct tp *tp)
{
	int fds[TP_EV_MAX], i;
	struct epoll_event ev;

	tp->prog.epfd = epoll_create1(EPOLL_CLOEXEC);
	tp->prog.tfd =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	tp->prog.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (tp->prog.epfd < 0 || tp->prog.tfd < 0 || tp->prog.efd < 0)
		return -errno;
	fds[TP_EV_CHAN] = fds[TP_EV_ASYNC] = -1;
	fds[TP_EV_TIMER] = tp->prog.tfd;
	fds[TP_EV_WAKE] = tp->prog.efd;
	fds[TP_EV_CM] = tp->heal.ch ? tp->heal.ch->fd : -1;
	for (i = 0; i < TP_EV_MAX; i++) {
		if (fds[i] < 0)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.u32 = i;
		if (epoll_ctl(tp->prog.epfd, EPOLL_CTL_ADD, fds[i], &ev))
			return -errno;
	}
	return tp_heal_fds(tp, 1);
}

/* Receives posted and armed, then the progress thread. */
static int tp_prog_open(struct tp *tp)
{
	int rc;

	rc = tp_recv_post(tp);
	if (rc)
		return rc;
	if (ibv_req_notify_cq(tp->dev.rcq, 0)) {
		log_warn("transport: ibv_req_notify_cq");
		return -EIO;
	}
	rc = tp_prog_fds(tp);
	if (rc) {
		log_warnx("transport: epoll/timerfd/eventfd: %s",
			  strerror(-rc));
		goto err;
	}
	rc = -pthread_create(&tp->prog.thr, NULL, tp_progress, tp);
	if (rc)
		goto err;
	tp->prog.started = 1;
	return 0;
err:
	tp_prog_close_fds(tp);
	return rc;
}

/* Stop the progress thread and close its descriptors. */
static void tp_prog_close(struct tp *tp)
{
	uint64_t one = 1;

	atomic_store(&tp->prog.stop, 1);
	if (tp->prog.started) {
		if (write(tp->prog.efd, &one, sizeof(one)) < 0)
			log_warn("transport: eventfd");
		pthread_join(tp->prog.thr, NULL);
		tp->prog.started = 0;
	}
	tp_prog_close_fds(tp);
}

/* A new engine with what it was given and a random msg_id per peer (a
 * restarted sender reuses no recent ids). */
static struct tp *tp_new(const struct config *cfg, struct peer *peers,
			 const struct tp_ops *ops, void *arg)
{
	struct tp *tp = calloc(1, sizeof(*tp));
	int i;

	if (!tp)
		return NULL;
	tp->cfg = cfg;
	tp->peers = peers;
	tp->npeers = cfg->nnodes;
	if (ops)
		tp->ops = *ops;
	tp->arg = arg;
	tp->self_id = wire_node_id(cfg->nodes[cfg->local].name);
	tp->prog.epfd = tp->prog.tfd = tp->prog.efd = -1;
	pthread_mutex_init(&tp->need_lock, NULL);
	pthread_mutex_init(&tp->ann_lock, NULL);
	pthread_mutex_init(&tp->mcast.rejoin_lock, NULL);
	pthread_mutex_init(&tp->mcast.info_lock, NULL);
	pthread_mutex_init(&tp->heal.lock, NULL);
	pthread_mutex_init(&tp->info_lock, NULL);
	pthread_rwlock_init(&tp->heal.devlock, NULL);
	tp->msg_ids = calloc(tp->npeers, sizeof(*tp->msg_ids));
	if (!tp->msg_ids) {
		free(tp);
		return NULL;
	}
	for (i = 0; i < tp->npeers; i++) {
		atomic_init(&tp->msg_ids[i], util_random32((uint32_t)i));
	}
	atomic_init(&tp->mcast.msg_id, util_random32((uint32_t)tp->npeers));
	return tp;
}

/* Free what tp_new made. */
static void tp_free(struct tp *tp)
{
	free((void *)tp->msg_ids);
	pthread_mutex_destroy(&tp->need_lock);
	pthread_mutex_destroy(&tp->ann_lock);
	pthread_mutex_destroy(&tp->mcast.rejoin_lock);
	pthread_mutex_destroy(&tp->mcast.info_lock);
	pthread_mutex_destroy(&tp->heal.lock);
	pthread_mutex_destroy(&tp->info_lock);
	pthread_rwlock_destroy(&tp->heal.devlock);
	free(tp);
}

/* Before the device goes: fail every writer still waiting, then the QP
 * and with it every AH, installed or retiring. */
static void tp_peers_close(struct tp *tp)
{
	int i;

	for (i = 0; i < tp->npeers; i++)
		tp_rel_reset(tp, &tp->peers[i], -ENOTCONN, 1);
	tp_mcast_close(tp);
	tp_dev_stop(tp);
	tp_destroy_ahs(tp);
	tp_ring_free_retired(tp, 1);
}

/* The engine's parts in the order they come up; tp_close undoes them in
 * reverse. */
static const struct tp_step tp_steps[] = {
	{tp_ring_open, tp_ring_close}, {tp_recv_open, tp_recv_close},
	{tp_rel_open, tp_rel_close},   {tp_dev_open, tp_dev_close},
	{tp_heal_open, tp_heal_close}, {NULL, tp_peers_close},
	{tp_prog_open, tp_prog_close},
};

/* Open the engine: its parts in order; on failure undo in reverse, as
 * ud_pingpong does. */
int tp_open(struct tp **out, const struct config *cfg, struct peer *peers,
	    const struct tp_ops *ops, void *arg)
{
	struct tp *tp;
	int rc;

	if (cfg->local < 0 || cfg->local >= cfg->nnodes)
		return -EINVAL;
	tp = tp_new(cfg, peers, ops, arg);
	if (!tp)
		return -ENOMEM;
	rc = tp_steps_open(tp, tp_steps, ARRAY_SIZE(tp_steps));
	if (rc) {
		tp_free(tp);
		return rc;
	}
	log_info(
		"transport: %s port %d (%s) gid index %d, qpn 0x%06x, mtu %zu, "
		"inline %u, recv %u, send %u",
		tp->info.device, tp->info.port,
		tp->info.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB",
		tp->info.gid_index, tp->info.qpn, tp->info.mtu_bytes,
		tp->dev.max_inline, cfg->recv_depth, cfg->send_depth);
	*out = tp;
	return 0;
}

/* Let queued sends leave, then undo tp_open's steps in reverse. */
void tp_close(struct tp *tp)
{
	if (!tp)
		return;
	tp_ring_drain(tp);
	tp_steps_close(tp, tp_steps, ARRAY_SIZE(tp_steps));
	tp_free(tp);
}

/* What this node is, for the hello and for .status. */
const struct tp_info *tp_info(const struct tp *tp)
{
	return &tp->info;
}

/* The copy tp_dev_show made last. */
void tp_info_get(struct tp *tp, struct tp_info *out)
{
	pthread_mutex_lock(&tp->info_lock);
	*out = tp->shown;
	pthread_mutex_unlock(&tp->info_lock);
}

/* The device's generation now (tp_heal.c bumps it at each close). */
uint64_t tp_dev_gen(const struct tp *tp)
{
	return atomic_load(&tp->heal.gen);
}

/* The device context's read side, while the device is the one of gen. */
int tp_dev_hold(struct tp *tp, uint64_t gen)
{
	pthread_rwlock_rdlock(&tp->heal.devlock);
	if (atomic_load(&tp->heal.gone) || atomic_load(&tp->heal.gen) != gen) {
		pthread_rwlock_unlock(&tp->heal.devlock);
		return -ENETDOWN;
	}
	return 0;
}

/* Pair of tp_dev_hold. */
void tp_dev_release(struct tp *tp)
{
	pthread_rwlock_unlock(&tp->heal.devlock);
}

/* The device context route.c queries GIDs on; NULL while it is gone. */
struct ibv_context *tp_context(const struct tp *tp)
{
	return atomic_load(&tp->heal.gone) ? NULL : tp->dev.ctx;
}

/* The PD every AH must be made on; NULL while the device is gone. */
struct ibv_pd *tp_pd(const struct tp *tp)
{
	return atomic_load(&tp->heal.gone) ? NULL : tp->dev.pd;
}

/* Counters over all peers plus drops that matched none. */
struct peer_counters *tp_totals(struct tp *tp)
{
	return &tp->totals;
}

/* The fabric's events, node-wide. */
struct fabric_counters *tp_fabric(struct tp *tp)
{
	return &tp->fabric;
}

/* Accept p's datagrams before it is up (handshake, first half); without
 * memory for its source entry they wait for tp_peer_up, which says so. */
void tp_peer_expect(struct tp *tp, struct peer *p, const struct peer_addr *addr)
{
	tp_rel_attach(tp, p, addr);
	(void)tp_recv_src_set(tp, p, addr);
}

/* Whether p's AH was made for addr: the same QP at the same place. */
static int tp_ah_fits(const struct peer_use *u, const struct peer_addr *addr)
{
	return u->ah && u->addr.qpn == addr->qpn && u->addr.lid == addr->lid &&
	       !memcmp(&u->addr.gid, &addr->gid, sizeof(addr->gid));
}

/*
 * Install p at addr through ah (under ring.lock and p->lock): joined,
 * and probed until it answers (tp_probe.c), unless it is up at that
 * very address already; the AH it replaces, to retire.  *up: it is.
 */
static struct ibv_ah *tp_peer_install(struct tp *tp, struct peer *p,
				      struct peer_use *u,
				      const struct peer_addr *addr,
				      struct ibv_ah *ah,
				      enum config_route route, int *up)
{
	struct ibv_ah *old = u->ah;

	*up = p->up && old == ah && peer_addr_same(&u->addr, addr);
	u->ah = ah;
	u->addr = *addr;
	u->route_used = route;
	if (!*up) {
		p->up = 0;
		u->since = time(NULL);
		tp_probe_start(tp, p, util_now_ms());
	}
	if (!u->probe.held) /* else our port's reason stays */
		peer_set_error_locked(p, 0, NULL);
	return old != ah ? old : NULL;
}

/*
 * Whether ah, made in the device's generation gen, is of the device open
 * now; else it is dropped: destroyed while its context is still open,
 * else left (that context is closed: nothing of it may be touched).
 * Under ring.lock, which tp_heal_down holds to close the device.
 */
static int tp_ah_current(struct tp *tp, struct ibv_ah *ah, uint64_t gen)
{
	if (!atomic_load(&tp->heal.gone) && atomic_load(&tp->heal.gen) == gen &&
	    ah->pd == tp->dev.pd)
		return 1;
	if (atomic_load(&tp->heal.gen) == gen && tp->dev.pd)
		ibv_destroy_ah(ah);
	return 0;
}

int tp_peer_up(struct tp *tp, struct peer *p, const struct peer_addr *addr,
	       struct ibv_ah *ah, enum config_route route)
{
	return tp_peer_up_gen(tp, p, addr, ah, route, tp_dev_gen(tp));
}

/* Install a freshly resolved AH, or the cached one (ah NULL); the old
 * one retires once unused. */
int tp_peer_up_gen(struct tp *tp, struct peer *p, const struct peer_addr *addr,
		   struct ibv_ah *ah, enum config_route route, uint64_t gen)
{
	struct peer_use *u = peer_use(p);
	struct ibv_ah *old;
	int up, stale;

	if (!u)
		return -ENOMEM;
	pthread_mutex_lock(&tp->ring.lock);
	stale = ah && !tp_ah_current(tp, ah, gen);
	pthread_mutex_unlock(&tp->ring.lock);
	if (stale)
		return -ENETDOWN;
	pthread_mutex_lock(&p->lock);
	if (!ah && !tp_ah_fits(u, addr)) {
		pthread_mutex_unlock(&p->lock);
		return -ESTALE;
	}
	pthread_mutex_unlock(&p->lock);
	/* A new incarnation (boot id): what was pending for the old one
	 * fails, and its streams start again in their new sessions. */
	tp_rel_attach(tp, p, addr);
	if (tp_recv_src_set(tp, p, addr))
		return -ENOMEM;
	pthread_mutex_lock(&tp->ring.lock);
	/* checked again where the install is: the device may have gone
	 * since, and tp_destroy_ahs passed p */
	if (ah && !tp_ah_current(tp, ah, gen)) {
		pthread_mutex_unlock(&tp->ring.lock);
		return -ENETDOWN;
	}
	pthread_mutex_lock(&p->lock);
	old = tp_peer_install(tp, p, u, addr, ah ? ah : u->ah, route, &up);
	pthread_mutex_unlock(&p->lock);
	tp_mcast_fit(tp, addr);
	if (old)
		tp_ring_retire_ah(tp, old);
	pthread_mutex_unlock(&tp->ring.lock);
	if (ah) {
		PEER_ADD(p, ah_resolutions, 1);
		tp_add(&tp->totals.ah_resolutions, 1);
	}
	if (!up)
		tp_probe_kick(tp);
	else if (tp->ops.peer_up)
		tp->ops.peer_up(tp->arg, p);
	return 0;
}

/*
 * Refuse sends to p.  Its datagrams are still accepted for a while: the
 * session often ends (the peer finished and exited) while what it sent
 * last still waits in our CQ.  Its partial messages expire on their own,
 * or go at once when a new address is installed.  The AH stays (the
 * route cache): sends check up first, and tp_peer_up retires it when the
 * peer comes back elsewhere.
 */
void tp_peer_down(struct tp *tp, struct peer *p)
{
	struct peer_use *u = peer_used(p);
	int was_up;

	pthread_mutex_lock(&p->lock);
	was_up = p->up || (u && u->probe.joined);
	p->up = 0;
	tp_probe_stop(p);
	if (was_up)
		u->since = time(NULL);
	pthread_mutex_unlock(&p->lock);

	tp_rel_reset(tp, p, -ENOTCONN, 0);
	if (was_up)
		tp_mcast_left(tp);

	tp_recv_src_linger(tp, p);
}

/* The streams are the progress thread's: it lets them go. */
void tp_peer_idle(struct tp *tp, struct peer *p)
{
	tp_rel_idle(tp, p);
}

/* p's AH went with a fabric event while it was installed. */
int tp_peer_flushed(struct tp *tp, struct peer *p)
{
	struct peer_use *u = peer_used(p);
	int flushed;

	pthread_mutex_lock(&p->lock);
	flushed = !p->up && (!u || (!u->ah && !u->probe.joined));
	pthread_mutex_unlock(&p->lock);
	return flushed;
}

/* Tell whoever waits for p to be tried that it failed. */
void tp_peer_failed(struct tp *tp, struct peer *p)
{
	if (tp->ops.peer_failed)
		tp->ops.peer_failed(tp->arg, p);
}
