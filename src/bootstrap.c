/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bootstrap: nodes exchange QPN, qkey, LID, GID and MTU over TCP, and the
 * TCP sessions are the peers' liveness.
 *
 * One thread runs one poll loop over non-blocking sockets: the listener,
 * one outgoing session per other node (connect with backoff, 100 ms
 * doubling to 2 s) and the incoming sessions.  A stalled or garbage client
 * only ever costs its own deadline.  This file is that loop, and opening
 * and closing it all; each session's handshake is bootstrap_session.c,
 * the hello it carries bootstrap_hello.c.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "bootstrap.h"
#include "bootstrap_session.h"
#include "log.h"
#include "route.h"
#include "util.h"

/* Keepalive and user timeout tied to peer_timeout; no Nagle. */
static void bs_sockopts(struct bootstrap *b, int fd)
{
	int one = 1, idle, cnt = 3;
	unsigned int uto = (unsigned int)b->cfg->peer_timeout_ms;

	idle = b->cfg->peer_timeout_ms / 3000;
	if (idle < 1)
		idle = 1;
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof(uto));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Start a non-blocking connect to node pi. */
static void bs_out_start(struct bootstrap *b, int pi)
{
	const struct config_node *n = &b->cfg->nodes[pi];
	struct bs_conn *c = &b->bp[pi].out;
	int fd;

	fd = socket(n->bootstrap_sa.ss_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		bs_session_fail(b, pi, "socket: %s", strerror(errno));
		bs_session_retry(b, pi, 0);
		return;
	}
	bs_sockopts(b, fd);
	c->fd = fd;
	c->outgoing = 1;
	c->peer = pi;
	c->st = BS_CONNECTING;
	c->deadline = util_now_ms() + b->timeout_ms;
	if (connect(fd, (struct sockaddr *)&n->bootstrap_sa,
		    n->bootstrap_len) &&
	    errno != EINPROGRESS) {
		log_debug("bootstrap: connect %s: %s", n->name,
			  strerror(errno));
		bs_session_retry(b, pi, 0);
	}
}

/* Take every pending connection; beyond max_in they are refused. */
static void bs_accept(struct bootstrap *b)
{
	struct bs_conn *c;
	int fd;

	for (;;) {
		fd = accept4(b->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				log_warn("bootstrap: accept");
			return;
		}
		if (b->nin >= b->max_in) {
			log_warnx("bootstrap: %d sessions open; refusing one",
				  b->nin);
			close(fd);
			continue;
		}
		bs_sockopts(b, fd);
		c = &b->in[b->nin++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->peer = -1;
		c->st = BS_READ_HELLO;
		c->rxwant = HELLO_WIRE_LEN;
		c->deadline = util_now_ms() + b->timeout_ms;
	}
}

/* Forget closed incoming sessions, keeping the array dense. */
static void bs_compact(struct bootstrap *b)
{
	int i, j = 0;

	for (i = 0; i < b->nin; i++)
		if (b->in[i].fd >= 0)
			b->in[j++] = b->in[i];
	b->nin = j;
}

/* Add a session to the poll set with the events its state waits for. */
static void bs_poll_add(struct bootstrap *b, int *n, struct bs_conn *c,
			int64_t now, int64_t *wake)
{
	short ev = c->st == BS_CONNECTING ? POLLOUT : POLLIN;

	if (c->txoff < c->txlen)
		ev |= POLLOUT;
	b->pfd[*n].fd = c->fd;
	b->pfd[*n].events = ev;
	b->pfd[*n].revents = 0;
	b->pconn[*n] = c;
	(*n)++;
	if (c->deadline && c->deadline < *wake)
		*wake = c->deadline;
}

/* Dial every other node whose next attempt is due. */
static void bs_dial_due(struct bootstrap *b, int64_t now)
{
	int i;

	for (i = 0; i < b->cfg->nnodes; i++) {
		struct bs_peer *bp = &b->bp[i];

		if (i != b->cfg->local && bp->out.fd < 0 && now >= bp->next_try)
			bs_out_start(b, i);
	}
}

/*
 * The poll set: the stop eventfd, the listener, then every session.
 * Returns its size; *wake is the earliest deadline or next attempt.
 */
static int bs_poll_set(struct bootstrap *b, int64_t now, int64_t *wake)
{
	int i, n = 0, nc;

	*wake = now + 60000;
	b->pfd[n].fd = b->efd;
	b->pfd[n].events = POLLIN;
	b->pconn[n++] = NULL;
	b->pfd[n].fd = b->lfd;
	b->pfd[n].events = POLLIN;
	b->pconn[n++] = NULL;
	for (i = 0; i < b->cfg->nnodes; i++) {
		struct bs_peer *bp = &b->bp[i];

		if (i == b->cfg->local)
			continue;
		if (bp->out.fd >= 0)
			bs_poll_add(b, &n, &bp->out, now, wake);
		else if (bp->next_try < *wake)
			*wake = bp->next_try;
	}
	nc = b->nin;
	for (i = 0; i < nc; i++)
		bs_poll_add(b, &n, &b->in[i], now, wake);
	return n;
}

/* The bootstrap thread: one poll loop for every socket until stopped. */
static void *bs_thread(void *arg)
{
	struct bootstrap *b = arg;
	int64_t now, wake;
	int i, n, rc;

	for (;;) {
		now = util_now_ms();
		bs_dial_due(b, now);
		bs_compact(b);
		n = bs_poll_set(b, now, &wake);
		rc = poll(b->pfd, n, wake > now ? (int)(wake - now) : 0);
		if (rc < 0 && errno != EINTR) {
			log_warn("bootstrap: poll");
			usleep(100000);
			continue;
		}
		if (b->pfd[0].revents)
			break;
		now = util_now_ms();
		/* Sessions first: accepting may move b->in. */
		for (i = 2; i < n; i++)
			if (b->pconn[i]->fd == b->pfd[i].fd)
				bs_session_event(b, b->pconn[i],
						 b->pfd[i].revents, now);
		if (b->pfd[1].revents)
			bs_accept(b);
	}
	return NULL;
}

/* Our own hello, from what the transport says we are. */
static void bs_make_hello(struct bootstrap *b)
{
	const struct tp_info *ti = tp_info(b->tp);
	const struct config_node *me = &b->cfg->nodes[b->cfg->local];

	memset(&b->me, 0, sizeof(b->me));
	b->me.version = HELLO_VERSION;
	snprintf(b->me.name, sizeof(b->me.name), "%s", me->name);
	b->me.delivery = me->delivery;
	b->me.addr.qpn = ti->qpn;
	b->me.addr.qkey = ti->qkey;
	b->me.addr.lid = ti->lid;
	b->me.addr.mtu = ti->mtu;
	b->me.addr.link_layer = ti->link_layer;
	b->me.addr.gid = ti->gid;
	b->me.addr.max_message = (uint32_t)b->cfg->max_message;
}

/* Listen on the local node's bootstrap address. */
static int bs_listen(struct bootstrap *b)
{
	const struct config_node *me = &b->cfg->nodes[b->cfg->local];
	int one = 1, rc;

	b->lfd = socket(me->bootstrap_sa.ss_family,
			SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (b->lfd < 0)
		return -errno;
	setsockopt(b->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(b->lfd, (struct sockaddr *)&me->bootstrap_sa,
		 me->bootstrap_len) ||
	    listen(b->lfd, BS_LISTEN_BACKLOG)) {
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
	struct ibv_ah *ah;
	int rc;

	rc = route_resolve(b->rt, p->conf, &b->me.addr, &ah);
	if (rc) {
		log_warnx("bootstrap: cannot resolve the local node %s: %s",
			  p->conf->name, strerror(-rc));
		return rc;
	}
	tp_peer_up(b->tp, p, &b->me.addr, ah, b->cfg->route);
	b->bp[li].up = 1;
	b->bp[li].addr = b->me.addr;
	log_info("peer %s up (qpn 0x%06x, local)", p->conf->name,
		 b->me.addr.qpn);
	return 0;
}

/* Release what bootstrap_open built; tolerates a partial open. */
static void bs_free(struct bootstrap *b)
{
	int i;

	if (b->bp) {
		for (i = 0; i < b->cfg->nnodes; i++) {
			if (b->bp[i].out.fd >= 0)
				close(b->bp[i].out.fd);
			if (b->bp[i].up)
				tp_peer_down(b->tp, &b->peers[i]);
		}
	}
	for (i = 0; i < b->nin; i++)
		if (b->in[i].fd >= 0)
			close(b->in[i].fd);
	if (b->lfd >= 0)
		close(b->lfd);
	if (b->efd >= 0)
		close(b->efd);
	free(b->bp);
	free(b->in);
	free(b->pfd);
	free(b->pconn);
	free(b);
}

/* Listen, bring the local peer up, and start dialling everyone else. */
int bootstrap_open(struct bootstrap **out, const struct config *cfg,
		   struct peer *peers, struct tp *tp, struct route *rt)
{
	struct bootstrap *b;
	int i, rc, npfd;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->cfg = cfg;
	b->peers = peers;
	b->tp = tp;
	b->rt = rt;
	b->lfd = b->efd = -1;
	b->timeout_ms = cfg->peer_timeout_ms;
	b->secret = cfg->secret;
	b->secret_len = strlen(cfg->secret);
	if (b->secret_len)
		log_info("bootstrap: sessions are authenticated with the "
			 "shared secret");
	if (b->timeout_ms < BS_HELLO_TIMEOUT_MS)
		b->timeout_ms = BS_HELLO_TIMEOUT_MS;
	b->max_in = 4 * cfg->nnodes + 16;
	npfd = 2 + cfg->nnodes + b->max_in;
	b->bp = calloc(cfg->nnodes, sizeof(*b->bp));
	b->in = calloc(b->max_in, sizeof(*b->in));
	b->pfd = calloc(npfd, sizeof(*b->pfd));
	b->pconn = calloc(npfd, sizeof(*b->pconn));
	if (!b->bp || !b->in || !b->pfd || !b->pconn) {
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < cfg->nnodes; i++) {
		b->bp[i].out.fd = -1;
		b->bp[i].out.peer = i;
		b->bp[i].backoff_ms = BS_BACKOFF_MIN_MS;
	}
	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->efd < 0) {
		rc = -errno;
		goto fail;
	}
	bs_make_hello(b);
	rc = bs_listen(b);
	if (rc)
		goto fail;
	rc = bs_local_up(b);
	if (rc)
		goto fail;
	rc = pthread_create(&b->thr, NULL, bs_thread, b);
	if (rc) {
		rc = -rc;
		goto fail;
	}
	b->thr_started = 1;
	*out = b;
	return 0;
fail:
	bs_free(b);
	return rc;
}

/* Stop the thread, close every session and take every peer down. */
void bootstrap_close(struct bootstrap *b)
{
	uint64_t one = 1;

	if (!b)
		return;
	if (b->thr_started) {
		if (write(b->efd, &one, sizeof(one)) < 0)
			log_warn("bootstrap: eventfd");
		pthread_join(b->thr, NULL);
	}
	bs_free(b);
}
