/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One bootstrap session: a TCP connection between two daemons, the dialer
 * D (the outgoing side) and the listener L, and its handshake:
 *
 *   D -> L  hello(D)    L validates it and accepts D's datagrams already
 *                       (tp_peer_expect), then
 *   L -> D  hello(L)    D validates, resolves L, marks L up, then
 *   D -> L  READY       L resolves D and marks D up.
 *
 * So whoever sees the other up first is already known to it: the first
 * datagram after "up" is never dropped as from an unknown source.  A peer
 * is up while at least one of its sessions (either direction) is; a hello
 * with a new QPN (the peer restarted) is resolved again and installed.
 * Session bytes after the handshake are ignored but for a BYE (below).
 *
 * With a shared secret K both hellos carry HELLO_F_AUTH and a fresh random
 * 16-byte nonce (nD, nL), and the handshake grows to five steps:
 *
 *   D -> L  hello(D, nD)
 *   L -> D  hello(L, nL)   nothing accepted yet: D is a stranger so far
 *   D -> L  proofD = HMAC-SHA256(K, "ibfs bootstrap v2 D->L" || nL ||
 *                                hello(D) || hello(L))
 *                          L checks proofD; only then tp_peer_expect(D)
 *   L -> D  proofL = HMAC-SHA256(K, "ibfs bootstrap v2 L->D" || nD ||
 *                                hello(D) || hello(L))
 *                          D checks proofL, resolves L, marks L up
 *   D -> L  READY          L resolves D and marks D up.
 *
 * The hellos are MACed exactly as sent, so nobody can change a QPN, qkey or
 * GID in flight; each proof covers the other side's fresh nonce, so a
 * recorded session does not replay; the labels differ by direction, so a
 * proof reflected back (or borrowed from a session where the roles are
 * swapped) fails.  L proves only after D did, so an unauthenticated client
 * gets no proof to study.  The order keeps the rule above: L expects D's
 * datagrams before D can see L up, and L marks D up only after D has L up.
 * A node with a secret refuses one without, and the other way round, and a
 * wrong proof closes the session; both are logged as "peer NAME:
 * authentication failed: why" (once per reason).  Only an authenticated
 * session ever reaches tp_peer_expect or tp_peer_up, so the transport's
 * source filter admits nobody else.
 *
 * With a ca (node certificates) both hellos carry HELLO_F_CERT and a
 * nonce too, and each proof's message ends with the sender's certificate
 * and its signature over both nonces, both boot ids and its own QPN, GID
 * and LID (bootstrap_cert.c): L checks D's before it expects D's
 * datagrams, D checks L's before it marks L up, each for the node the
 * hello names.  With a secret too, both the HMAC and the certificate must
 * hold; without one, the message is the certificate step alone.  A
 * refusal is "peer NAME: authentication failed: certificate names gamma,
 * not beta" (cert.h's reasons), logged once per reason and kept as the
 * peer's last_error.
 *
 * Sessions never block: every step reads or writes what the socket takes
 * and returns to the epoll loop (bootstrap.c), which calls bs_session_event
 * again when there is more.  "Resolves" above is route.c's asynchronous
 * resolution: the session parks (BS_RESOLVING) until its callback,
 * bs_resolved, so that many newcomers resolve at once.  A session that fails is
 * closed, and an outgoing one dialled again with backoff and jitter while a
 * send still waits for its peer (bs_session_retry).  After the handshake the
 * only bytes are a BYE: the other side is closing for want of traffic, and the
 * peer goes idle rather than down.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <openssl/rand.h>

#include "bootstrap.h"
#include "bootstrap_session.h"
#include "cert.h"
#include "log.h"
#include "route.h"
#include "util.h"

/*
 * Keepalive and user timeout tied to peer_timeout; no Nagle.  A session
 * is silent but for keepalives, and on a lossy wire (20 % each way, 36 %
 * of probe exchanges fail) three probes in a row fail often enough to
 * drop a live peer: probes go every tenth of peer_timeout, ten of them,
 * and the user timeout (peer_timeout) decides.
 */
void bs_sockopts(struct bootstrap *b, int fd)
{
	int one = 1, idle, intvl, cnt = 10;
	unsigned int uto = (unsigned int)b->cfg->peer_timeout_ms;

	idle = b->cfg->peer_timeout_ms / 3000;
	if (idle < 1)
		idle = 1;
	intvl = b->cfg->peer_timeout_ms / 10000;
	if (intvl < 1)
		intvl = 1;
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof(uto));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Register c's fd for the events its state waits for. */
void bs_arm(struct bootstrap *b, struct bs_conn *c)
{
	struct epoll_event ev = {.data.ptr = c};

	ev.events = c->st == BS_CONNECTING  ? EPOLLOUT
		    : c->st == BS_RESOLVING ? EPOLLERR /* and HUP: no read */
					    : EPOLLIN;
	if (c->txoff < c->txlen)
		ev.events |= EPOLLOUT;
	if (c->fd < 0 || ev.events == c->armed)
		return;
	if (epoll_ctl(b->ep, c->armed ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd,
		      &ev))
		log_warn("bootstrap: epoll_ctl");
	c->armed = ev.events;
}

/* An address as 16 bytes, IPv4 as ::ffff:a.b.c.d; 0, or -EAFNOSUPPORT. */
int bs_addr16(const void *sa, uint8_t out[16])
{
	const struct sockaddr *ss = sa;
	const struct sockaddr_in *s4 = sa;
	const struct sockaddr_in6 *s6 = sa;

	if (ss->sa_family == AF_INET6) {
		memcpy(out, &s6->sin6_addr, 16);
		return 0;
	}
	if (ss->sa_family != AF_INET)
		return -EAFNOSUPPORT;
	util_v4mapped(out, &s4->sin_addr);
	return 0;
}

/* A source address as text, for log lines. */
const char *bs_src_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	uint8_t a[16];

	if (bs_addr16(ss, a)) {
		snprintf(buf, len, "a non-IP source");
		return buf;
	}
	if (!memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12))
		inet_ntop(AF_INET, a + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, a, buf, (socklen_t)len);
	return buf;
}

/* A stranger's handshake ended or came up: it holds no stranger slot. */
void bs_stranger_drop(struct bootstrap *b, struct bs_conn *c)
{
	if (!c->stranger)
		return;
	TAILQ_REMOVE(&b->strangers, c, slink);
	c->stranger = 0;
	b->nstrangers--;
}

/* A refusal is a config to fix, worth a warning once per reason;
 * the rest (refused, timed out, unreachable) a down peer repeats. */
static int bs_is_refusal(int err)
{
	return err == EACCES || err == EPROTO || err == EPERM;
}

/*
 * Record why meeting a peer failed, as its last_error; log it once, not
 * per retry, since a dead peer repeats it at will (a stranger never gets
 * here: strict_source refuses it before, bootstrap_admit.c).
 */
void bootstrap_note(struct tp *tp, struct peer *p, int err, const char *prefix,
		    const char *msg)
{
	const char *name = p->conf->name;
	uint32_t h = util_fnv1a(msg, strlen(msg), UTIL_FNV1A_INIT);
	struct peer_use *u = peer_use(p); /* NULL: no memory, said anyway */
	int said = 1, first = 1;

	pthread_mutex_lock(&p->lock);
	if (bs_is_refusal(err) && (!u || u->refused != h)) {
		if (u)
			u->refused = h;
		said = 0;
	}
	if (u)
		first = u->fails++ == 0;
	pthread_mutex_unlock(&p->lock);
	if (!said)
		log_warnx("%s %s: %s", prefix, name, msg);
	else if (first)
		log_info("peer %s: first failure: %s (retried while a write "
			 "waits; %s/.status has the latest: man ibfs)",
			 name, msg, name);
	else
		log_debug("%s %s: %s", prefix, name, msg);
	peer_set_error(p, err ? err : EIO, msg);
	tp_peer_failed(tp, p);
}

/* The failures end: the up line follows or came just before. */
void bootstrap_recovered(struct peer *p)
{
	struct peer_use *u = peer_used(p);
	unsigned n;

	if (!u) /* never failed */
		return;
	pthread_mutex_lock(&p->lock);
	n = u->fails;
	u->fails = 0;
	u->refused = 0;
	pthread_mutex_unlock(&p->lock);
	if (n)
		log_info("peer %s: recovered after %u failed attempt%s",
			 p->conf->name, n, n == 1 ? "" : "s");
}

/* bootstrap_note for peer pi. */
static void bs_note(struct bootstrap *b, int pi, int err, const char *prefix,
		    const char *msg)
{
	bootstrap_note(b->tp, &b->peers[pi], err, prefix, msg);
}

/* A bootstrap failure of peer pi ("bootstrap: NAME: why"). */
void bs_session_fail(struct bootstrap *b, int pi, int err, const char *fmt, ...)
{
	char msg[PEER_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	bs_note(b, pi, err, "bootstrap:", msg);
}

/* Authentication refused: "peer NAME: authentication failed: why". */
static void bs_auth_fail(struct bootstrap *b, int pi, const char *why)
{
	char msg[PEER_ERROR_MAX];

	snprintf(msg, sizeof(msg), "authentication failed: %.100s", why);
	bs_note(b, pi, EACCES, "peer", msg);
}

/* Queue bytes and try to write them at once (they are small). */
static int bs_queue(struct bs_conn *c, const void *buf, size_t len)
{
	ssize_t n;

	memcpy(c->tx, buf, len);
	c->txlen = len;
	c->txoff = 0;
	n = send(c->fd, c->tx, len, MSG_NOSIGNAL);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return -errno;
	}
	c->txoff = (size_t)n;
	return 0;
}

/* Write what is still queued (POLLOUT). */
static int bs_flush(struct bs_conn *c)
{
	ssize_t n;

	while (c->txoff < c->txlen) {
		n = send(c->fd, c->tx + c->txoff, c->txlen - c->txoff,
			 MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		c->txoff += (size_t)n;
	}
	return 0;
}

/* Read toward rxwant; 1 when complete, 0 for more, -errno/-EPIPE on EOF. */
static int bs_fill(struct bs_conn *c)
{
	ssize_t n;

	while (c->rxlen < c->rxwant) {
		n = recv(c->fd, c->rx + c->rxlen, c->rxwant - c->rxlen, 0);
		if (n == 0)
			return -EPIPE;
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c->rxlen += (size_t)n;
	}
	return 1;
}

/* The cached AH when p came back at the same QPN and GID, else a fresh
 * route resolution (blocking). */
int bootstrap_peer_up(struct tp *tp, struct route *rt, struct peer *p,
		      const struct peer_addr *addr, enum config_route route)
{
	int rc;

	if (!tp_peer_up(tp, p, addr, NULL, route))
		return 0;
	rc = route_install(rt, p, addr);
	return rc ? rc : 1;
}

/* The peer is up at the address c->h announced: say so. */
static void bs_installed(struct bootstrap *b, struct bs_conn *c, int fresh)
{
	struct bs_peer *bp = b->bp[c->peer];
	struct peer *p = &b->peers[c->peer];

	if (!fresh) {
		log_info("peer %s up (qpn 0x%06x)", p->conf->name,
			 c->h.addr.qpn);
		log_debug("peer %s: its address handle, cached", p->conf->name);
	} else {
		log_info("peer %s %s (qpn 0x%06x)", p->conf->name,
			 bp->up ? "moved" : "up", c->h.addr.qpn);
	}
	bootstrap_recovered(p);
	bp->addr = c->h.addr;
	bp->up = 1;
}

/* The handshake is over and the peer installed: the session is live, and
 * waits for a BYE; the dialer tells the listener READY. */
static int bs_session_live(struct bootstrap *b, struct bs_conn *c)
{
	struct bs_peer *bp = b->bp[c->peer];
	struct peer_counters *k = peer_counts(&b->peers[c->peer]);
	uint8_t ready[BS_READY_LEN];

	if (c->outgoing)
		b->dialing--;
	else
		bs_stranger_drop(b, c); /* authenticated: no stranger now */
	c->live = 1;
	bp->live++;
	bp->active_ms = util_now_ms();
	bp->seen = atomic_load(&k->msgs_tx) + atomic_load(&k->msgs_rx);
	bp->backoff_ms = BS_BACKOFF_MIN_MS;
	c->st = BS_UP;
	c->deadline = 0;
	c->rxlen = 0;
	c->rxwant = BS_READY_LEN;
	if (!c->outgoing)
		return 0;
	util_put32(ready, BS_READY_MAGIC);
	return bs_queue(c, ready, BS_READY_LEN);
}

/* A session failed with rc: an outgoing one is dialled again (with
 * backoff), an incoming one closed. */
static void bs_session_end(struct bootstrap *b, struct bs_conn *c, int rc,
			   int was_up)
{
	if (c->outgoing) {
		if (rc != -EPIPE && was_up)
			log_debug("bootstrap: session to %s: %s",
				  b->cfg->nodes[c->peer].name, strerror(-rc));
		bs_session_retry(b, c->peer, was_up);
	} else {
		bs_conn_close(b, c);
	}
}

/* route.c's callback: c's peer is installed (rc 0), or could not be. */
static void bs_resolved(void *arg, int rc)
{
	struct bs_conn *c = arg;
	struct bootstrap *b = c->b;

	c->rq = NULL;
	if (rc) {
		bs_session_fail(b, c->peer, EHOSTUNREACH,
				"route resolution failed: %s", strerror(-rc));
	} else {
		bs_installed(b, c, 1);
		rc = bs_session_live(b, c);
	}
	if (rc)
		bs_session_end(b, c, rc, 0);
	else
		bs_arm(b, c);
}

/*
 * A session finished its handshake with the hello in c->h: make sure the
 * peer is up at that address (resolving again when it moved), and wait
 * for a BYE on it.  A resolution that must wait for the fabric leaves the
 * session BS_RESOLVING until bs_resolved.
 */
static int bs_session_up(struct bootstrap *b, struct bs_conn *c)
{
	struct bs_peer *bp = b->bp[c->peer];
	struct peer *p = &b->peers[c->peer];
	int rc;

	if (bp->up && peer_addr_same(&bp->addr, &c->h.addr))
		return bs_session_live(b, c);
	if (!tp_peer_up(b->tp, p, &c->h.addr, NULL, b->cfg->route)) {
		bs_installed(b, c, 0);
		return bs_session_live(b, c);
	}
	rc = route_install_start(b->rt, p, &c->h.addr, bs_resolved, c, &c->rq);
	if (rc == -EINPROGRESS) {
		c->st = BS_RESOLVING;
		c->deadline = 0; /* the resolution's own */
		return 0;
	}
	if (rc) {
		bs_session_fail(b, c->peer, EHOSTUNREACH,
				"route resolution failed: %s", strerror(-rc));
		return rc;
	}
	bs_installed(b, c, 1);
	return bs_session_live(b, c);
}

/* The last live session of pi ended: the peer is idle after a BYE, else
 * down ("session closed"). */
static void bs_peer_gone(struct bootstrap *b, int pi, int bye)
{
	struct peer *p = &b->peers[pi];

	tp_peer_down(b->tp, p);
	b->bp[pi]->up = 0;
	if (bye) {
		tp_peer_idle(b->tp, p);
		peer_set_error(p, 0, NULL);
		log_info("peer %s idle (no traffic for %d ms)", p->conf->name,
			 b->cfg->idle_timeout_ms);
	} else {
		peer_set_error(p, ECONNRESET, "its session closed");
		log_info("peer %s down", p->conf->name);
	}
}

/* A new session on fd, in b->conns; NULL without memory (fd closed). */
struct bs_conn *bs_conn_new(struct bootstrap *b, int fd, int pi)
{
	size_t room = b->cert ? BS_MSG_MAX : HELLO_WIRE_LEN;
	struct bs_conn *c = calloc(1, sizeof(*c) + 2 * room);

	if (!c) {
		close(fd);
		return NULL;
	}
	c->tx = (uint8_t *)(c + 1);
	c->rx = c->tx + room;
	c->fd = fd;
	c->b = b;
	c->peer = pi;
	c->deadline = util_now_ms() + b->timeout_ms;
	TAILQ_INSERT_TAIL(&b->conns, c, link);
	return c;
}

/* Close a session (freed after the event batch); the last live one of
 * a peer takes the peer down, or idle after a BYE. */
void bs_conn_close(struct bootstrap *b, struct bs_conn *c)
{
	struct bs_peer *bp = c->peer >= 0 ? b->bp[c->peer] : NULL;

	if (c->fd < 0)
		return;
	route_cancel(b->rt, c->rq);
	c->rq = NULL;
	close(c->fd);
	c->fd = -1;
	TAILQ_REMOVE(&b->conns, c, link);
	TAILQ_INSERT_TAIL(&b->dead, c, link);
	if (c->outgoing) {
		if (c->st != BS_UP)
			b->dialing--;
		bp->out = NULL;
	} else {
		b->nin--;
		bs_stranger_drop(b, c);
	}
	if (c->live) {
		c->live = 0;
		if (--bp->live == 0 && bp->up)
			bs_peer_gone(b, c->peer, c->bye);
	}
}

/* End an outgoing session and schedule the next attempt: backoff with
 * jitter (0.5 to 1.5 times), so that peers that failed together do not
 * come back together. */
void bs_session_retry(struct bootstrap *b, int pi, int was_up)
{
	struct bs_peer *bp = b->bp[pi];
	int j;

	if (bp->out)
		bs_conn_close(b, bp->out);
	if (was_up)
		bp->backoff_ms = BS_BACKOFF_MIN_MS;
	j = bp->backoff_ms / 2 + (int)(rand_r(&b->seed) % (bp->backoff_ms + 1));
	bp->next_try = util_now_ms() + j;
	bp->backoff_ms *= 2;
	if (bp->backoff_ms > BS_BACKOFF_MAX_MS)
		bp->backoff_ms = BS_BACKOFF_MAX_MS;
}

/* Our hello for one session: with a secret or a ca, flagged and a fresh
 * nonce. */
static int bs_my_hello(struct bootstrap *b, struct bs_conn *c)
{
	struct hello h = b->me;

	if (b->secret_len)
		h.flags |= HELLO_F_AUTH;
	if (b->cert)
		h.flags |= HELLO_F_CERT;
	if (h.flags) {
		if (RAND_bytes(h.nonce, HELLO_NONCE_LEN) != 1) {
			log_warnx("bootstrap: RAND_bytes failed; no nonce");
			return -EIO;
		}
	}
	memcpy(c->nonce, h.nonce, HELLO_NONCE_LEN);
	hello_encode(&h, c->mine);
	return 0;
}

/* Wait for len more bytes in state st, within the handshake deadline (an
 * incoming session's hello has BS_UNAUTH_MS from its accept; once a node
 * said hello from its address, each step has the dialer's deadline). */
static void bs_await(struct bootstrap *b, struct bs_conn *c, enum bs_state st,
		     size_t len)
{
	c->st = st;
	c->rxlen = 0;
	c->rxwant = len;
	c->deadline = util_now_ms() + b->timeout_ms;
}

/* Outgoing connect finished: send our hello, await theirs. */
static int bs_out_connected(struct bootstrap *b, struct bs_conn *c)
{
	int err = 0, rc;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	if (err) {
		bs_session_fail(b, c->peer, err, "connect: %s", strerror(err));
		return -err;
	}
	rc = bs_my_hello(b, c);
	if (rc)
		return rc;
	bs_await(b, c, BS_READ_HELLO, HELLO_WIRE_LEN);
	return bs_queue(c, c->mine, HELLO_WIRE_LEN);
}

/*
 * Which node an incoming hello speaks for: its index, or -EPERM when it
 * is no other node of the config, or (strict_source) says it from an
 * address that is not that node's.  Refused before the node's own state
 * is touched, so a stranger cannot fail a writer waiting for it.
 */
static int bs_hello_node(struct bootstrap *b, struct bs_conn *c)
{
	static struct log_rl rl_name, rl_source;
	char s[INET6_ADDRSTRLEN + 8];
	int pi = config_node_index(b->cfg, c->h.name);

	if (pi < 0 || pi == b->cfg->local) {
		log_rl_warnx(&rl_name, "bootstrap: hello from %s (%s), %s",
			     bs_src_str(&c->src, s, sizeof(s)), c->h.name,
			     pi < 0 ? "which is not in the config"
				    : "which is our own name");
		return -EPERM;
	}
	if (!b->source_ok(b, c, pi)) {
		log_rl_warnx(&rl_source,
			     "bootstrap: %s said hello as %s, which is not "
			     "at that address in the config: refused "
			     "(strict_source; see its addr and bootstrap)",
			     bs_src_str(&c->src, s, sizeof(s)), c->h.name);
		return -EPERM;
	}
	return pi;
}

/*
 * Whether the QP and GID a hello from node pi announces may be its: no
 * other node up holds them, else its datagrams would be taken for the
 * claimant's (the source check, b->source_ok, ties a RoCE GID to the
 * node's address).  0, or -EADDRINUSE, noted as pi's last_error.
 */
static int bs_check_place(struct bootstrap *b, struct bs_conn *c, int pi)
{
	const struct peer_addr *a = &c->h.addr;
	int holder = tp_addr_holder(b->tp, &b->peers[pi], a);

	if (holder < 0)
		return 0;
	bs_session_fail(b, pi, EADDRINUSE, "its QP 0x%06x is %s's, which is up",
			a->qpn, b->cfg->nodes[holder].name);
	return -EADDRINUSE;
}

/* Decode a hello and check it against what the config says of node pi. */
static int bs_check_hello(struct bootstrap *b, struct bs_conn *c, int pi)
{
	static struct log_rl rl_bad;
	char why[PEER_ERROR_MAX];
	const struct config_node *n;
	char s[INET6_ADDRSTRLEN + 8];
	int rc;

	rc = hello_decode(&c->h, c->rx, c->rxlen);
	if (rc) {
		if (pi >= 0)
			bs_session_fail(b, pi, -rc, "bad hello: %s",
					strerror(-rc));
		else
			log_rl_warnx(&rl_bad,
				     "bootstrap: bad hello from %s: %s",
				     bs_src_str(&c->src, s, sizeof(s)),
				     strerror(-rc));
		return rc;
	}
	if (pi < 0) {
		pi = bs_hello_node(b, c);
		if (pi < 0 || !bs_peer_get(b, pi))
			return pi < 0 ? pi : -ENOMEM;
		c->peer = pi;
		peer_attempt(&b->peers[pi]);
	} else if (strcmp(c->h.name, b->cfg->nodes[pi].name)) {
		bs_session_fail(b, pi, EPERM,
				"answered as %s (check its bootstrap address)",
				c->h.name);
		return -EPERM;
	}
	n = &b->cfg->nodes[pi];
	if (hello_refusal(&c->h, n->delivery, b->cfg->qkey, why, sizeof(why))) {
		bs_note(b, pi, EPROTO, "peer", why);
		return -EPROTO;
	}
	if (!(c->h.flags & HELLO_F_AUTH) != !b->secret_len) {
		bs_auth_fail(b, pi,
			     b->secret_len ? "it has no secret, we have one"
					   : "it has a secret, we have none");
		return -EACCES;
	}
	if (!(c->h.flags & HELLO_F_CERT) != !b->cert) {
		bs_auth_fail(b, pi,
			     b->cert ? "it has no certificate, we have a ca"
				     : "it has a ca, we have none");
		return -EACCES;
	}
	rc = bs_check_place(b, c, pi);
	if (rc)
		return rc;
	memcpy(c->theirs, c->rx, HELLO_WIRE_LEN);
	return 0;
}

/* Dialer: the listener is accepted; mark it up and tell it READY
 * (bs_session_live, once it is installed). */
static int bs_dialer_done(struct bootstrap *b, struct bs_conn *c)
{
	return bs_session_up(b, c);
}

/*
 * Check the other side's proof: the HMAC with a secret, the certificate
 * step with a ca, both when both are set.  A refusal is logged and kept
 * as the peer's last_error.  1 while a certificate is still coming.
 */
static int bs_check_proof(struct bootstrap *b, struct bs_conn *c)
{
	const uint8_t *hd = c->outgoing ? c->mine : c->theirs;
	const uint8_t *hl = c->outgoing ? c->theirs : c->mine;
	char why[CERT_WHY_MAX] = "";
	int rc;

	rc = bs_cert_more(b, c);
	if (rc)
		return rc;
	if (b->secret_len) {
		rc = bootstrap_proof_check(b->secret, b->secret_len,
					   c->outgoing ? BS_ROLE_LISTENER
						       : BS_ROLE_DIALER,
					   c->nonce, hd, hl, c->rx);
		if (rc == -EACCES)
			bs_auth_fail(b, c->peer,
				     "wrong proof (a different secret?)");
		if (rc)
			return rc;
	}
	if (!b->cert)
		return 0;
	rc = bs_cert_check(b, c, why, sizeof(why));
	if (rc == -EACCES)
		bs_auth_fail(b, c->peer, why);
	else if (rc) /* libcrypto failed us: not the peer's fault */
		bs_session_fail(b, c->peer, -rc, "certificate not checked: %s",
				why[0] ? why : strerror(-rc));
	return rc;
}

/* Our proof, answering the nonce in the other side's hello: the HMAC
 * with a secret, then the certificate step with a ca. */
static int bs_send_proof(struct bootstrap *b, struct bs_conn *c)
{
	const uint8_t *hd = c->outgoing ? c->mine : c->theirs;
	const uint8_t *hl = c->outgoing ? c->theirs : c->mine;
	uint8_t msg[BS_MSG_MAX];
	size_t len = 0, n;
	int rc;

	if (b->secret_len) {
		rc = bootstrap_proof(b->secret, b->secret_len,
				     c->outgoing ? BS_ROLE_DIALER
						 : BS_ROLE_LISTENER,
				     c->h.nonce, hd, hl, msg);
		if (rc)
			return rc;
		len = BS_PROOF_LEN;
	}
	if (b->cert) {
		rc = bs_cert_make(b, c, msg + len, &n);
		if (rc)
			return rc;
		len += n;
	}
	return bs_queue(c, msg, len);
}

/* The dialer's side of the handshake: their hello, then their proof. */
static int bs_dialer_step(struct bootstrap *b, struct bs_conn *c)
{
	int rc;

	if (c->st == BS_READ_HELLO) {
		rc = bs_check_hello(b, c, c->peer);
		if (rc)
			return rc;
		if (!bs_proof_want(b))
			return bs_dialer_done(b, c);
		bs_await(b, c, BS_READ_PROOF, bs_proof_want(b));
		return bs_send_proof(b, c);
	}
	rc = bs_check_proof(b, c);
	if (rc)
		return rc > 0 ? 0 : rc;
	return bs_dialer_done(b, c);
}

/* The listener's side: their hello, their proof, then READY. */
static int bs_listener_step(struct bootstrap *b, struct bs_conn *c)
{
	static struct log_rl rl_garbage;
	int rc;

	if (c->st == BS_READ_HELLO) {
		rc = bs_check_hello(b, c, -1);
		if (rc)
			return rc;
		rc = bs_my_hello(b, c);
		if (rc)
			return rc;
		if (bs_proof_want(b)) {
			/* A stranger until its proof checks out. */
			bs_await(b, c, BS_READ_PROOF, bs_proof_want(b));
			return bs_queue(c, c->mine, HELLO_WIRE_LEN);
		}
		/* Accept its datagrams before it can see us up. */
		tp_peer_expect(b->tp, &b->peers[c->peer], &c->h.addr);
		bs_await(b, c, BS_READ_READY, BS_READY_LEN);
		return bs_queue(c, c->mine, HELLO_WIRE_LEN);
	}
	if (c->st == BS_READ_PROOF) {
		rc = bs_check_proof(b, c);
		if (rc)
			return rc > 0 ? 0 : rc;
		/* Authenticated: accept its datagrams before it sees us up. */
		tp_peer_expect(b->tp, &b->peers[c->peer], &c->h.addr);
		bs_await(b, c, BS_READ_READY, BS_READY_LEN);
		return bs_send_proof(b, c);
	}
	if (c->st == BS_READ_READY) {
		if (util_get32(c->rx) != BS_READY_MAGIC) {
			log_rl_warnx(&rl_garbage,
				     "bootstrap: %s sent garbage after its "
				     "hello",
				     c->h.name);
			return -EBADMSG;
		}
		return bs_session_up(b, c);
	}
	return -EPROTO;
}

/* Bytes on a session that is up: only a BYE means something. */
static int bs_up_readable(struct bs_conn *c)
{
	int rc;

	for (;;) {
		rc = bs_fill(c);
		if (rc <= 0)
			return rc;
		if (util_get32(c->rx) == BS_BYE_MAGIC)
			c->bye = 1;
		c->rxlen = 0;
	}
}

/* Bytes arrived on a session: advance its handshake. */
static int bs_readable(struct bootstrap *b, struct bs_conn *c)
{
	int rc;

	if (c->st == BS_UP)
		return bs_up_readable(c);
	rc = bs_fill(c);
	if (rc <= 0)
		return rc;
	if (c->outgoing && (c->st == BS_READ_HELLO || c->st == BS_READ_PROOF))
		return bs_dialer_step(b, c);
	return bs_listener_step(b, c);
}

/* An event (or a deadline) on a session; close it on any error. */
void bs_session_event(struct bootstrap *b, struct bs_conn *c, short re,
		      int64_t now)
{
	static struct log_rl rl_silent;
	char s[INET6_ADDRSTRLEN + 8];
	int rc = 0, was_up = c->st == BS_UP;

	if (c->st == BS_CONNECTING) {
		if (re & (POLLOUT | POLLERR | POLLHUP))
			rc = bs_out_connected(b, c);
	} else if (c->st == BS_RESOLVING) {
		if (re & POLLOUT)
			rc = bs_flush(c);
		if (!rc && (re & (POLLERR | POLLHUP)))
			rc = -EPIPE; /* its resolution is cancelled */
	} else {
		if (!rc && (re & POLLOUT))
			rc = bs_flush(c);
		if (!rc && (re & (POLLIN | POLLERR | POLLHUP)))
			rc = bs_readable(b, c);
	}
	if (!rc && c->deadline && now >= c->deadline) {
		if (c->peer >= 0 && c->outgoing)
			bs_session_fail(b, c->peer, ETIMEDOUT,
					"no answer within %d ms",
					b->timeout_ms);
		else
			log_rl_warnx(&rl_silent,
				     "bootstrap: %s sent no %s within %d ms",
				     bs_src_str(&c->src, s, sizeof(s)),
				     c->st == BS_READ_READY   ? "READY"
				     : c->st == BS_READ_PROOF ? "proof"
							      : "hello",
				     c->st == BS_READ_HELLO ? BS_UNAUTH_MS
							    : b->timeout_ms);
		rc = -ETIMEDOUT;
	}
	if (!rc)
		return;
	/* Refusals are logged by the refusing side (and by ours when it
	 * dials us); only a debug line here. */
	if (c->outgoing && rc == -EPIPE && !was_up && c->st != BS_CONNECTING)
		bs_session_fail(b, c->peer, ECONNRESET,
				"it closed the session in the handshake (it "
				"refused us: see its log)");
	bs_session_end(b, c, rc, was_up);
}
