/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bootstrap: nodes exchange QPN, qkey, LID, GID and MTU over TCP, and the
 * TCP sessions are the peers' liveness.
 *
 * One thread runs one poll loop over non-blocking sockets: the listener,
 * one outgoing session per other node (connect with backoff, 100 ms
 * doubling to 2 s) and the incoming sessions.  A stalled or garbage client
 * only ever costs its own deadline.  Each session is a three-step
 * handshake, dialer D and listener L:
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
 * Session bytes after the handshake are ignored (room for keepalives).
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
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "bootstrap.h"
#include "log.h"
#include "util.h"

#define BS_READY_MAGIC	    0x49424852u /* "IBHR": dialer has us up */
#define BS_READY_LEN	    4
#define BS_BACKOFF_MIN_MS   100
#define BS_BACKOFF_MAX_MS   2000
#define BS_HELLO_TIMEOUT_MS 5000 /* at least; peer_timeout if longer */
#define BS_LISTEN_BACKLOG   64

/* Hello field offsets: the fixed big-endian wire layout. */
enum {
	HO_MAGIC = 0,	   /* u32 HELLO_MAGIC */
	HO_VERSION = 4,	   /* u16 */
	HO_DELIVERY = 6,   /* u8 enum config_delivery */
	HO_LINK_LAYER = 7, /* u8 IBV_LINK_LAYER_* */
	HO_NAME = 8,	   /* CONFIG_NAME_MAX bytes, NUL-padded */
	HO_QPN = HO_NAME + CONFIG_NAME_MAX, /* 72: u32 */
	HO_QKEY = HO_QPN + 4,		    /* 76: u32 */
	HO_LID = HO_QKEY + 4,		    /* 80: u16 */
	HO_MTU = HO_LID + 2,		    /* 82: u8 enum ibv_mtu */
	HO_PAD = HO_MTU + 1,		    /* 83: u8, zero */
	HO_GID = HO_PAD + 1,		    /* 84: 16 bytes */
	HO_FLAGS = HO_GID + 16,	   /* 100: u32 HELLO_F_*, others zero */
	HO_MAX_MSG = HO_FLAGS + 4, /* 104: u32 its max_message, 0 = not said */
	HO_RESERVED = HO_MAX_MSG + 4, /* 108: 4 bytes, zero (ignored) */
	HO_NONCE = HO_RESERVED + 4,   /* 112: 16 bytes, zero without AUTH */
	HO_END = HO_NONCE + HELLO_NONCE_LEN, /* 128 */
};

/* Direction labels of the proofs; equal length, so the input is unambiguous. */
static const char bs_label_d[] = "ibfs bootstrap v2 D->L";
static const char bs_label_l[] = "ibfs bootstrap v2 L->D";
#define BS_LABEL_LEN (sizeof(bs_label_d) - 1)
_Static_assert(sizeof(bs_label_d) == sizeof(bs_label_l), "label lengths");

_Static_assert(HO_END == HELLO_WIRE_LEN, "hello layout and length differ");

enum bs_state {
	BS_IDLE,       /* outgoing: waiting for the next attempt */
	BS_CONNECTING, /* outgoing: connect in progress */
	BS_READ_HELLO, /* either: our hello queued, theirs awaited */
	BS_READ_PROOF, /* either, with a secret: the other's proof awaited */
	BS_READ_READY, /* incoming: our hello queued, READY awaited */
	BS_UP,	       /* handshake done; EOF ends the session */
};

/* One TCP session, outgoing or incoming. */
struct bs_conn {
	int fd;
	int outgoing;
	int peer; /* node index; -1 until an incoming hello */
	enum bs_state st;
	int live;	  /* counted in its peer's live sessions */
	int64_t deadline; /* ms; 0 = none */
	uint8_t tx[HELLO_WIRE_LEN];
	size_t txlen, txoff;
	uint8_t rx[HELLO_WIRE_LEN];
	size_t rxlen, rxwant;
	struct hello h;			/* what the other side announced */
	uint8_t mine[HELLO_WIRE_LEN];	/* our hello, as sent */
	uint8_t theirs[HELLO_WIRE_LEN]; /* theirs, as received */
	uint8_t nonce[HELLO_NONCE_LEN]; /* our challenge in this session */
};

/* Bootstrap's view of one node. */
struct bs_peer {
	struct bs_conn out; /* our session to it (unused for local) */
	int64_t next_try;
	int backoff_ms;
	int live;	       /* sessions that reached BS_UP */
	int up;		       /* we called tp_peer_up */
	struct peer_addr addr; /* what is installed */
	char last_err[160];    /* repeated failures are logged once */
};

struct bootstrap {
	const struct config *cfg;
	struct peer *peers;
	struct tp *tp;
	struct route *rt;
	struct hello me;
	const char *secret; /* "" = no authentication */
	size_t secret_len;
	int lfd, efd;
	int timeout_ms;
	struct bs_peer *bp;
	struct bs_conn *in; /* incoming sessions */
	int nin, max_in;
	struct pollfd *pfd;
	struct bs_conn **pconn; /* the session of each pfd entry */
	pthread_t thr;
	int thr_started;
};

/* One fixed layout on every host, whatever struct hello looks like. */
size_t hello_encode(const struct hello *h, void *buf)
{
	uint8_t *b = buf;

	memset(b, 0, HELLO_WIRE_LEN);
	util_put32(b + HO_MAGIC, HELLO_MAGIC);
	util_put16(b + HO_VERSION, h->version);
	b[HO_DELIVERY] = h->delivery;
	b[HO_LINK_LAYER] = h->addr.link_layer;
	memcpy(b + HO_NAME, h->name, strnlen(h->name, CONFIG_NAME_MAX - 1));
	util_put32(b + HO_QPN, h->addr.qpn);
	util_put32(b + HO_QKEY, h->addr.qkey);
	util_put16(b + HO_LID, h->addr.lid);
	b[HO_MTU] = h->addr.mtu;
	memcpy(b + HO_GID, h->addr.gid.raw, 16);
	util_put32(b + HO_FLAGS, h->flags);
	util_put32(b + HO_MAX_MSG, h->addr.max_message);
	if (h->flags & HELLO_F_AUTH)
		memcpy(b + HO_NONCE, h->nonce, HELLO_NONCE_LEN);
	return HELLO_WIRE_LEN;
}

/* Parse a hello; everything a peer could get wrong is refused here. */
int hello_decode(struct hello *h, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	struct hello t;

	if (!buf || len < HELLO_WIRE_LEN)
		return -EBADMSG;
	if (util_get32(b + HO_MAGIC) != HELLO_MAGIC)
		return -EBADMSG;
	memset(&t, 0, sizeof(t));
	t.version = util_get16(b + HO_VERSION);
	if (t.version != HELLO_VERSION)
		return -EPROTO;
	if (!memchr(b + HO_NAME, '\0', CONFIG_NAME_MAX))
		return -EBADMSG;
	memcpy(t.name, b + HO_NAME, CONFIG_NAME_MAX);
	if (util_name_problem(t.name))
		return -EBADMSG;
	t.delivery = b[HO_DELIVERY];
	if (t.delivery != DELIVERY_DATAGRAM && t.delivery != DELIVERY_RELIABLE)
		return -EBADMSG;
	t.addr.link_layer = b[HO_LINK_LAYER];
	t.addr.qpn = util_get32(b + HO_QPN);
	if (!t.addr.qpn || t.addr.qpn > 0xffffff)
		return -EBADMSG;
	t.addr.qkey = util_get32(b + HO_QKEY);
	t.addr.lid = util_get16(b + HO_LID);
	t.addr.mtu = b[HO_MTU];
	if (t.addr.mtu < IBV_MTU_256 || t.addr.mtu > IBV_MTU_4096)
		return -EBADMSG;
	memcpy(t.addr.gid.raw, b + HO_GID, 16);
	t.flags = util_get32(b + HO_FLAGS);
	/* Older daemons sent zero here: then nothing is known. */
	t.addr.max_message = util_get32(b + HO_MAX_MSG);
	if (t.flags & ~HELLO_F_AUTH)
		return -EBADMSG;
	if (t.flags & HELLO_F_AUTH)
		memcpy(t.nonce, b + HO_NONCE, HELLO_NONCE_LEN);
	*h = t;
	return 0;
}

/* One HMAC over label || nonce || both hellos, through libcrypto only. */
int bootstrap_proof(const void *secret, size_t secret_len, enum bs_role who,
		    const uint8_t *nonce, const uint8_t *hello_d,
		    const uint8_t *hello_l, uint8_t proof[BS_PROOF_LEN])
{
	uint8_t msg[BS_LABEL_LEN + HELLO_NONCE_LEN + 2 * HELLO_WIRE_LEN];
	unsigned int len = 0;
	uint8_t *m = msg;

	if (!secret || !secret_len || secret_len > INT_MAX || !nonce ||
	    !hello_d || !hello_l || !proof)
		return -EINVAL;
	memcpy(m, who == BS_ROLE_DIALER ? bs_label_d : bs_label_l,
	       BS_LABEL_LEN);
	m += BS_LABEL_LEN;
	memcpy(m, nonce, HELLO_NONCE_LEN);
	m += HELLO_NONCE_LEN;
	memcpy(m, hello_d, HELLO_WIRE_LEN);
	m += HELLO_WIRE_LEN;
	memcpy(m, hello_l, HELLO_WIRE_LEN);
	if (!HMAC(EVP_sha256(), secret, (int)secret_len, msg, sizeof(msg),
		  proof, &len) ||
	    len != BS_PROOF_LEN)
		return -EIO;
	return 0;
}

/* Recompute and compare in constant time, so timing leaks nothing. */
int bootstrap_proof_check(const void *secret, size_t secret_len,
			  enum bs_role who, const uint8_t *nonce,
			  const uint8_t *hello_d, const uint8_t *hello_l,
			  const uint8_t proof[BS_PROOF_LEN])
{
	uint8_t want[BS_PROOF_LEN];
	int rc;

	rc = bootstrap_proof(secret, secret_len, who, nonce, hello_d, hello_l,
			     want);
	if (!rc && CRYPTO_memcmp(want, proof, BS_PROOF_LEN))
		rc = -EACCES;
	OPENSSL_cleanse(want, sizeof(want));
	return rc;
}

/* Record why a peer failed; log only when the reason changes. */
static void bs_note(struct bootstrap *b, int pi, const char *prefix,
		    const char *msg)
{
	struct bs_peer *bp = &b->bp[pi];
	const char *name = b->cfg->nodes[pi].name;

	if (strcmp(msg, bp->last_err)) {
		log_warnx("%s %s: %s", prefix, name, msg);
		snprintf(bp->last_err, sizeof(bp->last_err), "%s", msg);
	} else {
		log_debug("%s %s: %s", prefix, name, msg);
	}
}

/* The config word for a delivery (hello_decode checked it is one). */
static const char *bs_delivery_name(unsigned d)
{
	return d == DELIVERY_RELIABLE ? "reliable" : "datagram";
}

/* A bootstrap failure of peer pi ("bootstrap: NAME: why"). */
static void bs_fail(struct bootstrap *b, int pi, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void bs_fail(struct bootstrap *b, int pi, const char *fmt, ...)
{
	char msg[sizeof(b->bp[pi].last_err)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	bs_note(b, pi, "bootstrap:", msg);
}

/* Authentication refused: "peer NAME: authentication failed: why". */
static void bs_auth_fail(struct bootstrap *b, int pi, const char *why)
{
	char msg[sizeof(b->bp[pi].last_err)];

	snprintf(msg, sizeof(msg), "authentication failed: %s", why);
	bs_note(b, pi, "peer", msg);
}

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

/* Whether two announced addresses name the same QP. */
static int bs_same_addr(const struct peer_addr *a, const struct peer_addr *b)
{
	return a->qpn == b->qpn && a->qkey == b->qkey && a->lid == b->lid &&
	       a->mtu == b->mtu && !memcmp(&a->gid, &b->gid, sizeof(a->gid));
}

/*
 * A session finished its handshake with the hello in c->h: make sure the
 * peer is up at that address (resolving again when it moved).
 */
static int bs_session_up(struct bootstrap *b, struct bs_conn *c)
{
	struct bs_peer *bp = &b->bp[c->peer];
	struct peer *p = &b->peers[c->peer];
	struct ibv_ah *ah;
	int rc;

	if (!bp->up || !bs_same_addr(&bp->addr, &c->h.addr)) {
		rc = route_resolve(b->rt, p->conf, &c->h.addr, &ah);
		if (rc) {
			bs_fail(b, c->peer, "route resolution failed: %s",
				strerror(-rc));
			return rc;
		}
		tp_peer_up(b->tp, p, &c->h.addr, ah, b->cfg->route);
		log_info("peer %s %s (qpn 0x%06x)", p->conf->name,
			 bp->up ? "moved" : "up", c->h.addr.qpn);
		bp->addr = c->h.addr;
		bp->up = 1;
	}
	bp->last_err[0] = '\0';
	c->live = 1;
	bp->live++;
	c->st = BS_UP;
	c->deadline = 0;
	return 0;
}

/* Close a session; the last live one of a peer takes the peer down. */
static void bs_conn_close(struct bootstrap *b, struct bs_conn *c)
{
	struct bs_peer *bp;

	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->live && c->peer >= 0) {
		bp = &b->bp[c->peer];
		c->live = 0;
		if (--bp->live == 0 && bp->up) {
			tp_peer_down(b->tp, &b->peers[c->peer]);
			bp->up = 0;
			log_info("peer %s down", b->cfg->nodes[c->peer].name);
		}
	}
	c->st = BS_IDLE;
	c->deadline = 0;
	c->txlen = c->txoff = c->rxlen = c->rxwant = 0;
}

/* End an outgoing session and schedule the next attempt. */
static void bs_out_retry(struct bootstrap *b, int pi, int was_up)
{
	struct bs_peer *bp = &b->bp[pi];

	bs_conn_close(b, &bp->out);
	if (was_up)
		bp->backoff_ms = BS_BACKOFF_MIN_MS;
	bp->next_try = util_now_ms() + bp->backoff_ms;
	bp->backoff_ms *= 2;
	if (bp->backoff_ms > BS_BACKOFF_MAX_MS)
		bp->backoff_ms = BS_BACKOFF_MAX_MS;
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
		bs_fail(b, pi, "socket: %s", strerror(errno));
		bs_out_retry(b, pi, 0);
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
		bs_out_retry(b, pi, 0);
	}
}

/* Our hello for one session: with a secret, flagged and a fresh nonce. */
static int bs_my_hello(struct bootstrap *b, struct bs_conn *c)
{
	struct hello h = b->me;

	if (b->secret_len) {
		h.flags |= HELLO_F_AUTH;
		if (RAND_bytes(h.nonce, HELLO_NONCE_LEN) != 1) {
			log_warnx("bootstrap: RAND_bytes failed; no nonce");
			return -EIO;
		}
	}
	memcpy(c->nonce, h.nonce, HELLO_NONCE_LEN);
	hello_encode(&h, c->mine);
	return 0;
}

/* Wait for len more bytes in state st, within the handshake deadline. */
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
		log_debug("bootstrap: connect %s: %s",
			  b->cfg->nodes[c->peer].name, strerror(err));
		return -err;
	}
	rc = bs_my_hello(b, c);
	if (rc)
		return rc;
	bs_await(b, c, BS_READ_HELLO, HELLO_WIRE_LEN);
	return bs_queue(c, c->mine, HELLO_WIRE_LEN);
}

/* Decode a hello and check it against what the config says of node pi. */
static int bs_check_hello(struct bootstrap *b, struct bs_conn *c, int pi)
{
	const struct config_node *n;
	int rc;

	rc = hello_decode(&c->h, c->rx, c->rxlen);
	if (rc) {
		if (pi >= 0)
			bs_fail(b, pi, "bad hello: %s", strerror(-rc));
		else
			log_warnx("bootstrap: bad hello from a client: %s",
				  strerror(-rc));
		return rc;
	}
	if (pi < 0) {
		pi = config_node_index(b->cfg, c->h.name);
		if (pi < 0 || pi == b->cfg->local) {
			log_warnx("bootstrap: hello from %s, %s", c->h.name,
				  pi < 0 ? "which is not in the config"
					 : "which is our own name");
			return -EPERM;
		}
		c->peer = pi;
	} else if (strcmp(c->h.name, b->cfg->nodes[pi].name)) {
		bs_fail(b, pi, "answered as %s (check its bootstrap address)",
			c->h.name);
		return -EPERM;
	}
	n = &b->cfg->nodes[pi];
	if (c->h.delivery != n->delivery) {
		bs_fail(b, pi, "announces delivery %s, the config says %s",
			bs_delivery_name(c->h.delivery),
			bs_delivery_name(n->delivery));
		return -EPROTO;
	}
	if (c->h.addr.qkey != b->cfg->qkey)
		log_debug("bootstrap: %s uses qkey 0x%x, we 0x%x", n->name,
			  c->h.addr.qkey, b->cfg->qkey);
	if (!(c->h.flags & HELLO_F_AUTH) != !b->secret_len) {
		bs_auth_fail(b, pi,
			     b->secret_len ? "it has no secret, we have one"
					   : "it has a secret, we have none");
		return -EACCES;
	}
	memcpy(c->theirs, c->rx, HELLO_WIRE_LEN);
	return 0;
}

/* Dialer: the listener is accepted; mark it up and tell it READY. */
static int bs_dialer_done(struct bootstrap *b, struct bs_conn *c)
{
	uint8_t ready[BS_READY_LEN];
	int rc;

	rc = bs_session_up(b, c);
	if (rc)
		return rc;
	util_put32(ready, BS_READY_MAGIC);
	return bs_queue(c, ready, BS_READY_LEN);
}

/* Check the other side's proof; a wrong one is logged and refused. */
static int bs_check_proof(struct bootstrap *b, struct bs_conn *c)
{
	const uint8_t *hd = c->outgoing ? c->mine : c->theirs;
	const uint8_t *hl = c->outgoing ? c->theirs : c->mine;
	int rc;

	rc = bootstrap_proof_check(b->secret, b->secret_len,
				   c->outgoing ? BS_ROLE_LISTENER
					       : BS_ROLE_DIALER,
				   c->nonce, hd, hl, c->rx);
	if (rc == -EACCES)
		bs_auth_fail(b, c->peer, "wrong proof (a different secret?)");
	return rc;
}

/* Our proof, answering the nonce in the other side's hello. */
static int bs_send_proof(struct bootstrap *b, struct bs_conn *c)
{
	const uint8_t *hd = c->outgoing ? c->mine : c->theirs;
	const uint8_t *hl = c->outgoing ? c->theirs : c->mine;
	uint8_t proof[BS_PROOF_LEN];
	int rc;

	rc = bootstrap_proof(b->secret, b->secret_len,
			     c->outgoing ? BS_ROLE_DIALER : BS_ROLE_LISTENER,
			     c->h.nonce, hd, hl, proof);
	if (rc)
		return rc;
	return bs_queue(c, proof, BS_PROOF_LEN);
}

/* Bytes arrived on a session: advance its handshake. */
static int bs_readable(struct bootstrap *b, struct bs_conn *c)
{
	uint8_t junk[256];
	ssize_t n;
	int rc;

	if (c->st == BS_UP) {
		/* Nothing is expected; drain, and notice EOF. */
		n = recv(c->fd, junk, sizeof(junk), 0);
		if (n == 0)
			return -EPIPE;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR)
			return -errno;
		return 0;
	}
	rc = bs_fill(c);
	if (rc <= 0)
		return rc;
	if (c->st == BS_READ_HELLO && c->outgoing) {
		rc = bs_check_hello(b, c, c->peer);
		if (rc)
			return rc;
		if (!b->secret_len)
			return bs_dialer_done(b, c);
		bs_await(b, c, BS_READ_PROOF, BS_PROOF_LEN);
		return bs_send_proof(b, c);
	}
	if (c->st == BS_READ_PROOF && c->outgoing) {
		rc = bs_check_proof(b, c);
		if (rc)
			return rc;
		return bs_dialer_done(b, c);
	}
	if (c->st == BS_READ_HELLO) {
		rc = bs_check_hello(b, c, -1);
		if (rc)
			return rc;
		rc = bs_my_hello(b, c);
		if (rc)
			return rc;
		if (b->secret_len) {
			/* A stranger until its proof checks out. */
			bs_await(b, c, BS_READ_PROOF, BS_PROOF_LEN);
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
			return rc;
		/* Authenticated: accept its datagrams before it sees us up. */
		tp_peer_expect(b->tp, &b->peers[c->peer], &c->h.addr);
		bs_await(b, c, BS_READ_READY, BS_READY_LEN);
		return bs_send_proof(b, c);
	}
	if (c->st == BS_READ_READY) {
		if (util_get32(c->rx) != BS_READY_MAGIC) {
			log_warnx("bootstrap: %s sent garbage after its hello",
				  c->h.name);
			return -EBADMSG;
		}
		return bs_session_up(b, c);
	}
	return -EPROTO;
}

/* An event (or a deadline) on a session; close it on any error. */
static void bs_conn_event(struct bootstrap *b, struct bs_conn *c, short re,
			  int64_t now)
{
	int rc = 0, was_up = c->st == BS_UP;

	if (c->st == BS_CONNECTING) {
		if (re & (POLLOUT | POLLERR | POLLHUP))
			rc = bs_out_connected(b, c);
	} else {
		if (!rc && (re & POLLOUT))
			rc = bs_flush(c);
		if (!rc && (re & (POLLIN | POLLERR | POLLHUP)))
			rc = bs_readable(b, c);
	}
	if (!rc && c->deadline && now >= c->deadline) {
		if (c->peer >= 0 && c->outgoing)
			bs_fail(b, c->peer, "no answer within %d ms",
				b->timeout_ms);
		else
			log_warnx("bootstrap: a client sent no %s within %d ms",
				  c->st == BS_READ_READY   ? "READY"
				  : c->st == BS_READ_PROOF ? "proof"
							   : "hello",
				  b->timeout_ms);
		rc = -ETIMEDOUT;
	}
	if (!rc)
		return;
	if (c->outgoing) {
		/* Refusals are logged by the refusing side (and by ours
		 * when it dials us); only a debug line here. */
		if (rc == -EPIPE && !was_up && c->st != BS_CONNECTING)
			log_debug("bootstrap: %s closed the session in the "
				  "handshake (refused us?)",
				  b->cfg->nodes[c->peer].name);
		if (rc != -EPIPE && was_up)
			log_debug("bootstrap: session to %s: %s",
				  b->cfg->nodes[c->peer].name, strerror(-rc));
		bs_out_retry(b, c->peer, was_up);
	} else {
		bs_conn_close(b, c);
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

/* The bootstrap thread: one poll loop for every socket until stopped. */
static void *bs_thread(void *arg)
{
	struct bootstrap *b = arg;
	int64_t now, wake;
	int i, n, nc, rc;

	for (;;) {
		now = util_now_ms();
		for (i = 0; i < b->cfg->nnodes; i++) {
			struct bs_peer *bp = &b->bp[i];

			if (i != b->cfg->local && bp->out.fd < 0 &&
			    now >= bp->next_try)
				bs_out_start(b, i);
		}
		bs_compact(b);
		wake = now + 60000;
		n = 0;
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
				bs_poll_add(b, &n, &bp->out, now, &wake);
			else if (bp->next_try < wake)
				wake = bp->next_try;
		}
		nc = b->nin;
		for (i = 0; i < nc; i++)
			bs_poll_add(b, &n, &b->in[i], now, &wake);
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
				bs_conn_event(b, b->pconn[i], b->pfd[i].revents,
					      now);
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
