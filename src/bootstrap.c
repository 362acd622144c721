/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bootstrap: nodes exchange QPN, qkey, LID, GID and MTU over TCP, and the
 * TCP sessions are the peers' liveness.
 *
 * Peers are met on demand, as MPI and UCX wire up: a daemon starts with
 * no session at all.  A send that finds its peer not up asks for it
 * (tp's need hook, bs_need) and waits; this thread dials it (at most
 * BS_DIAL_RATE dials a second and BS_DIAL_INFLIGHT handshakes at once, so
 * that a whole cluster's first writes are no storm), retrying with
 * backoff and jitter while somebody waits.  A peer that dials us is met
 * by its session.  One session serves both directions; it ends after
 * idle_timeout without traffic, with a BYE so that the other side takes
 * the peer as idle and not as down.  The address handle stays cached in
 * the peer, and is used again while the peer comes back at the same QPN
 * and GID.
 *
 * One thread runs one epoll loop over non-blocking sockets: the listener,
 * a wake-up eventfd, the sessions that exist, and route.c's channel of
 * the route resolutions in flight (route_async_run at each turn).  Its
 * timers walk those sessions and the wanted peers, never the whole config,
 * and are deadlines, not a tick: with nothing due it sleeps until an
 * event.  A stalled or garbage client only ever costs its own deadline.
 * This file is that loop, and opening and closing it all; each session's
 * handshake is bootstrap_session.c, the hello it carries
 * bootstrap_hello.c.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "bootstrap.h"
#include "bootstrap_session.h"
#include "log.h"
#include "route.h"
#include "util.h"

/* Start a non-blocking connect to node pi, looking its name up first
 * (a name is looked up at every dial: it may have moved). */
static void bs_out_start(struct bootstrap *b, int pi)
{
	const struct config_node *n = &b->cfg->nodes[pi];
	struct sockaddr_storage sa;
	char err[CONFIG_ERR_MAX];
	struct bs_conn *c;
	socklen_t salen;
	int fd;

	peer_attempt(&b->peers[pi]);
	if (config_node_bootstrap(n, &sa, &salen, err, sizeof(err))) {
		bs_session_fail(b, pi, EHOSTUNREACH, "bootstrap %s", err);
		bs_session_retry(b, pi, 0);
		return;
	}
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0) {
		bs_session_fail(b, pi, errno, "socket: %s", strerror(errno));
		bs_session_retry(b, pi, 0);
		return;
	}
	bs_sockopts(b, fd);
	c = bs_conn_new(b, fd, pi);
	if (!c) {
		bs_session_retry(b, pi, 0);
		return;
	}
	c->outgoing = 1;
	c->st = BS_CONNECTING;
	b->bp[pi]->out = c;
	b->dialing++;
	if (connect(fd, (struct sockaddr *)&sa, salen) &&
	    errno != EINPROGRESS) {
		bs_session_fail(b, pi, errno, "connect: %s", strerror(errno));
		bs_session_retry(b, pi, 0);
		return;
	}
	bs_arm(b, c);
}

/* Free the sessions closed in the last batch (no event points at them). */
static void bs_reap(struct bootstrap *b)
{
	struct bs_conn *c;

	while ((c = TAILQ_FIRST(&b->dead))) {
		TAILQ_REMOVE(&b->dead, c, link);
		free(c);
	}
}

/* Move the senders' requests onto the want list: each waits up to
 * peer_timeout for its peer, and is renewed by every send that fails. */
static void bs_take_needs(struct bootstrap *b, int64_t now)
{
	int i;

	pthread_mutex_lock(&b->need_lock);
	for (i = 0; i < b->nneed; i++) {
		struct bs_peer *bp = bs_peer_get(b, b->needq[i]);

		b->queued[b->needq[i]] = 0;
		if (!bp) /* its sends wait, and fail at peer_timeout */
			continue;
		bp->want_until = now + b->cfg->peer_timeout_ms;
		if (!bp->wanted) {
			bp->wanted = 1;
			TAILQ_INSERT_TAIL(&b->want, bp, want_link);
		}
	}
	b->nneed = 0;
	pthread_mutex_unlock(&b->need_lock);
}

/* Refill the dial bucket: BS_DIAL_RATE a second, BS_DIAL_BURST at most. */
static void bs_tokens(struct bootstrap *b, int64_t now)
{
	b->tokens += (double)(now - b->tokens_ms) * BS_DIAL_RATE / 1000.0;
	if (b->tokens > BS_DIAL_BURST)
		b->tokens = BS_DIAL_BURST;
	b->tokens_ms = now;
}

/*
 * A peer we installed whose AH a fabric event flushed (the subnet manager
 * moved the paths, tp_peer_flushed): its path is resolved again and it
 * is installed again at the address it had, its session kept.  1 when bp
 * was such a one, or is the local node (never dialled).
 */
static int bs_reroute(struct bootstrap *b, struct bs_peer *bp)
{
	int pi = bp->idx;
	struct peer *p = &b->peers[pi];
	int rc;

	if (!bp->up || !tp_peer_flushed(b->tp, p))
		return p->is_local;
	rc = bootstrap_peer_up(b->tp, b->rt, p, &bp->addr, b->cfg->route);
	if (rc < 0)
		log_info("peer %s: resolving its path again: %s", p->conf->name,
			 strerror(-rc));
	return 1;
}

/*
 * Dial the wanted peers whose next attempt is due, as the bucket and the
 * cap on handshakes allow; forget those met or no longer waited for.
 * Returns the earliest time this has more to do.
 */
static int64_t bs_dial_due(struct bootstrap *b, int64_t now, int64_t wake)
{
	struct bs_peer *bp, *tmp;

	bs_tokens(b, now);
	for (bp = TAILQ_FIRST(&b->want); bp; bp = tmp) {
		tmp = TAILQ_NEXT(bp, want_link);
		if (bs_reroute(b, bp) || bp->live ||
		    (now >= bp->want_until && !bp->out)) {
			TAILQ_REMOVE(&b->want, bp, want_link);
			bp->wanted = 0;
			continue;
		}
		if (bp->out)
			continue;
		if (now < bp->next_try) {
			wake = bp->next_try < wake ? bp->next_try : wake;
			continue;
		}
		if (b->tokens < 1 || b->dialing >= BS_DIAL_INFLIGHT) {
			wake = now + 1000 / BS_DIAL_RATE < wake
				       ? now + 1000 / BS_DIAL_RATE
				       : wake;
			continue;
		}
		b->tokens -= 1;
		bs_out_start(b, bp->idx);
	}
	return wake;
}

/* Whether c's peer has had no traffic for idle_timeout; notes any. */
static int bs_idle(struct bootstrap *b, struct bs_conn *c, int64_t now,
		   int64_t *wake)
{
	struct bs_peer *bp = b->bp[c->peer];
	struct peer_counters *k = peer_counts(&b->peers[c->peer]);
	uint64_t seen = atomic_load(&k->msgs_tx) + atomic_load(&k->msgs_rx);
	int64_t due;

	if (!b->cfg->idle_timeout_ms)
		return 0;
	if (seen != bp->seen || atomic_load(&k->rel_inflight)) {
		bp->seen = seen;
		bp->active_ms = now;
	}
	due = bp->active_ms + b->cfg->idle_timeout_ms;
	if (now < due) {
		if (due < *wake)
			*wake = due;
		return 0;
	}
	return 1;
}

/* Say BYE and close: the other side will take the peer as idle too. */
static void bs_bye(struct bootstrap *b, struct bs_conn *c)
{
	uint8_t bye[BS_READY_LEN];

	util_put32(bye, BS_BYE_MAGIC);
	if (send(c->fd, bye, sizeof(bye), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_debug("bootstrap: BYE to %s: %s",
			  b->cfg->nodes[c->peer].name, strerror(errno));
	c->bye = 1;
	if (c->outgoing)
		bs_session_retry(b, c->peer, 1);
	else
		bs_conn_close(b, c);
}

/*
 * Handshake deadlines and idle sessions, over the sessions that exist
 * (never the whole config).  Returns the earliest time due.
 */
static int64_t bs_timers(struct bootstrap *b, int64_t now, int64_t wake)
{
	struct bs_conn *c, *tmp;

	for (c = TAILQ_FIRST(&b->conns); c; c = tmp) {
		tmp = TAILQ_NEXT(c, link);
		if (c->st == BS_UP) {
			if (bs_idle(b, c, now, &wake))
				bs_bye(b, c);
		} else if (c->deadline && now >= c->deadline) {
			/* what arrived is read first: a listener slowed by an
			 * incast must not blame the dialer for its own delay
			 * (at 1,024 nodes it closed hundreds of sessions whose
			 * hello sat unread in their buffers) */
			bs_session_event(b, c, POLLIN, now);
		} else if (c->deadline && c->deadline < wake) {
			wake = c->deadline;
		}
	}
	return wake;
}

/* epoll's events as the poll(2) bits bs_session_event reads. */
static short bs_revents(uint32_t ev)
{
	short re = 0;

	re |= ev & EPOLLIN ? POLLIN : 0;
	re |= ev & EPOLLOUT ? POLLOUT : 0;
	re |= ev & EPOLLERR ? POLLERR : 0;
	re |= ev & EPOLLHUP ? POLLHUP : 0;
	return re;
}

/* One batch of events; 1 when told to stop. */
static int bs_events(struct bootstrap *b, struct epoll_event *ev, int n)
{
	int64_t now = util_now_ms();
	uint64_t v;
	int i;

	for (i = 0; i < n; i++) {
		struct bs_conn *c = ev[i].data.ptr;

		if (ev[i].data.ptr == &b->efd) {
			if (read(b->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				log_warn("bootstrap: eventfd");
			if (atomic_load(&b->stop))
				return 1;
		} else if (ev[i].data.ptr == &b->lfd) {
			bs_accept(b, now);
		} else if (ev[i].data.ptr == b->rt) {
			continue; /* route_async_run, at the loop's top */
		} else if (c->fd >= 0) {
			bs_session_event(b, c, bs_revents(ev[i].events), now);
			bs_arm(b, c);
		}
	}
	return 0;
}

static int bs_local_up(struct bootstrap *b);

/* Our hello, from the transport's address as it is now, whole. */
static void bs_hello_make(struct bootstrap *b)
{
	struct tp_info ti;

	tp_info_get(b->tp, &ti);
	hello_make(&b->me, b->cfg, &ti);
}

/* The device came back (bootstrap_retell): a new hello, the local node
 * at it, and every session ended, those in their handshake too (they
 * sent the old hello); each peer of one is dialled again on a new one,
 * wanted for peer_timeout as a send would want it. */
static void bs_retell(struct bootstrap *b, int64_t now)
{
	struct bs_conn *c, *tmp;
	struct bs_peer *bp;

	bs_hello_make(b);
	bs_local_up(b);
	for (c = TAILQ_FIRST(&b->conns); c; c = tmp) {
		tmp = TAILQ_NEXT(c, link);
		bp = c->peer >= 0 ? b->bp[c->peer] : NULL;
		bs_conn_close(b, c);
		if (!bp)
			continue;
		bp->want_until = now + b->cfg->peer_timeout_ms;
		bp->next_try = now;
		if (!bp->wanted) {
			bp->wanted = 1;
			TAILQ_INSERT_TAIL(&b->want, bp, want_link);
		}
	}
}

/* The heal hook's half (bootstrap.h). */
void bootstrap_retell(struct bootstrap *b)
{
	uint64_t one = 1;

	atomic_store(&b->retell, 1);
	if (write(b->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("bootstrap: eventfd");
}

/* The bootstrap thread: one epoll loop for every socket until stopped. */
static void *bs_thread(void *arg)
{
	struct bootstrap *b = arg;
	struct epoll_event ev[BS_EVENTS];
	int64_t now, wake;
	int n;

	pthread_setname_np(pthread_self(), "ibfs-bootstrap");
	for (;;) {
		now = util_now_ms();
		if (atomic_exchange(&b->retell, 0))
			bs_retell(b, now);
		bs_take_needs(b, now);
		wake = route_async_run(b->rt, now, INT64_MAX);
		wake = bs_dial_due(b, now, wake);
		wake = bs_timers(b, now, wake);
		wake = bs_accept_timer(b, now, wake);
		bs_reap(b);
		n = epoll_wait(b->ep, ev, BS_EVENTS, util_wait_ms(now, wake));
		if (n < 0) {
			if (errno != EINTR) {
				log_warn("bootstrap: epoll_wait");
				usleep(100000);
			}
			continue;
		}
		if (bs_events(b, ev, n))
			break;
		bs_reap(b);
	}
	return NULL;
}

/*
 * tp's need hook, on a sender's thread: queue pi for the bootstrap thread
 * and wake it (once per batch).  Never blocks.
 */
static void bs_need(void *arg, struct peer *p)
{
	struct bootstrap *b = arg;
	uint64_t one = 1;
	int wake;

	pthread_mutex_lock(&b->need_lock);
	wake = !b->nneed;
	if (!b->queued[p->idx]) {
		b->queued[p->idx] = 1;
		b->needq[b->nneed++] = p->idx;
	}
	pthread_mutex_unlock(&b->need_lock);
	if (wake && write(b->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("bootstrap: eventfd");
}

/*
 * The listen queue: room for every node of the config to dial at once
 * (a gather's incast), which the kernel trims to net.core.somaxconn.
 * At 128, a gather of 1,024 nodes had thousands of SYNs dropped, each
 * dialer then waiting out SYN retransmits of 1, 3 and 7 s.
 */
static int bs_backlog(const struct config *cfg)
{
	return cfg->nnodes > BS_LISTEN_BACKLOG ? cfg->nnodes
					       : BS_LISTEN_BACKLOG;
}

/* Listen on the local node's bootstrap address. */
static int bs_listen(struct bootstrap *b)
{
	const struct config_node *me = &b->cfg->nodes[b->cfg->local];
	union config_sa bsa;
	int one = 1, rc;

	config_node_bootstrap_sa(me, &bsa);
	b->lfd = socket(bsa.ss_family,
			SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (b->lfd < 0)
		return -errno;
	setsockopt(b->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(b->lfd, (struct sockaddr *)&bsa, me->bootstrap_len) ||
	    listen(b->lfd, bs_backlog(b->cfg))) {
		rc = -errno;
		log_warn("bootstrap: listen on %s port %u", me->bootstrap_host,
			 me->bootstrap_port);
		return rc;
	}
	return 0;
}

/* The local peer: resolved like any other, sends loop through the HCA. */
static int bs_local_up(struct bootstrap *b)
{
	int li = b->cfg->local;
	struct peer *p = &b->peers[li];
	struct bs_peer *bp = bs_peer_get(b, li);
	int rc;

	if (!bp)
		return -ENOMEM;
	rc = bootstrap_peer_up(b->tp, b->rt, p, &b->me.addr, b->cfg->route);
	if (rc < 0) {
		log_warnx("bootstrap: cannot resolve the local node %s: %s",
			  p->conf->name, strerror(-rc));
		return rc;
	}
	bp->up = 1;
	bp->addr = b->me.addr;
	log_info("peer %s up (qpn 0x%06x, local)", p->conf->name,
		 b->me.addr.qpn);
	return 0;
}

/* Release what bootstrap_open built; tolerates a partial open. */
static void bs_free(struct bootstrap *b)
{
	struct bs_conn *c;
	int i;

	while ((c = TAILQ_FIRST(&b->conns))) {
		TAILQ_REMOVE(&b->conns, c, link);
		route_cancel(b->rt, c->rq);
		if (c->fd >= 0)
			close(c->fd);
		free(c);
	}
	bs_reap(b);
	bs_admit_close(b);
	for (i = 0; b->bp && i < b->cfg->nnodes; i++) {
		if (b->bp[i] && b->bp[i]->up)
			tp_peer_down(b->tp, &b->peers[i]);
		free(b->bp[i]);
	}
	if (b->lfd >= 0)
		close(b->lfd);
	if (b->efd >= 0)
		close(b->efd);
	if (b->ep >= 0)
		close(b->ep);
	pthread_mutex_destroy(&b->need_lock);
	free(b->bp);
	free(b->needq);
	free(b->queued);
	free(b);
}

/* Watch the wake-up eventfd and the listener (tagged by their fields),
 * and the route resolutions' channel (tagged by the route). */
static int bs_epoll(struct bootstrap *b)
{
	struct epoll_event ev = {.events = EPOLLIN};

	b->ep = epoll_create1(EPOLL_CLOEXEC);
	if (b->ep < 0)
		return -errno;
	ev.data.ptr = &b->efd;
	if (epoll_ctl(b->ep, EPOLL_CTL_ADD, b->efd, &ev))
		return -errno;
	ev.data.ptr = &b->lfd;
	if (epoll_ctl(b->ep, EPOLL_CTL_ADD, b->lfd, &ev))
		return -errno;
	ev.data.ptr = b->rt;
	if (route_async_fd(b->rt) >= 0 &&
	    epoll_ctl(b->ep, EPOLL_CTL_ADD, route_async_fd(b->rt), &ev))
		return -errno;
	return 0;
}

/* A bootstrap with nothing open yet: -ENOMEM or 0. */
static int bs_new(struct bootstrap **out, const struct config *cfg,
		  struct peer *peers, struct tp *tp, struct route *rt)
{
	struct bootstrap *b;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->cfg = cfg;
	b->peers = peers;
	b->tp = tp;
	b->rt = rt;
	b->lfd = b->efd = b->ep = b->spare_fd = -1;
	TAILQ_INIT(&b->conns);
	TAILQ_INIT(&b->dead);
	TAILQ_INIT(&b->want);
	TAILQ_INIT(&b->strangers);
	pthread_mutex_init(&b->need_lock, NULL);
	b->timeout_ms = cfg->peer_timeout_ms;
	if (b->timeout_ms < BS_HELLO_TIMEOUT_MS)
		b->timeout_ms = BS_HELLO_TIMEOUT_MS;
	b->secret = cfg->secret;
	b->secret_len = strlen(cfg->secret);
	b->max_in = 4 * cfg->nnodes + 16;
	b->max_strangers = b->max_in / 2 < BS_STRANGERS_MAX ? b->max_in / 2
							    : BS_STRANGERS_MAX;
	b->tokens = BS_DIAL_BURST;
	b->tokens_ms = util_now_ms();
	b->seed = util_random32((uint32_t)getpid());
	*out = b;
	b->bp = calloc(cfg->nnodes, sizeof(*b->bp));
	b->needq = calloc(cfg->nnodes, sizeof(*b->needq));
	b->queued = calloc(cfg->nnodes, sizeof(*b->queued));
	if (!b->bp || !b->needq || !b->queued)
		return -ENOMEM;
	return bs_admit_open(b);
}

/*
 * Listen and bring the local peer up; every other peer is met when a send
 * first wants it, or when it dials us.  No per-node work here.
 */
int bootstrap_open(struct bootstrap **out, const struct config *cfg,
		   struct peer *peers, struct cert *cert, struct tp *tp,
		   struct route *rt)
{
	struct bootstrap *b = NULL;
	int rc;

	rc = bs_new(&b, cfg, peers, tp, rt);
	if (rc)
		goto fail;
	b->cert = cert;
	if (b->secret_len)
		log_info("bootstrap: sessions are authenticated with the "
			 "shared secret");
	if (b->cert)
		log_info("bootstrap: peers prove who they are with "
			 "certificates of the cluster CA");
	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->efd < 0) {
		rc = -errno;
		goto fail;
	}
	bs_hello_make(b);
	rc = bs_listen(b);
	if (!rc)
		rc = bs_epoll(b);
	if (!rc)
		rc = bs_local_up(b);
	if (rc)
		goto fail;
	rc = -pthread_create(&b->thr, NULL, bs_thread, b);
	if (rc)
		goto fail;
	b->thr_started = 1;
	tp_set_need(tp, bs_need, b);
	*out = b;
	return 0;
fail:
	if (b)
		bs_free(b);
	return rc;
}

/* Stop taking needs, stop the thread, close every session and take every
 * peer down. */
void bootstrap_close(struct bootstrap *b)
{
	uint64_t one = 1;

	if (!b)
		return;
	tp_set_need(b->tp, NULL, NULL);
	if (b->thr_started) {
		atomic_store(&b->stop, 1);
		if (write(b->efd, &one, sizeof(one)) < 0)
			log_warn("bootstrap: eventfd");
		pthread_join(b->thr, NULL);
	}
	bs_free(b);
}
