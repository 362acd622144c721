/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who may hold one of the listener's session slots, and for how long
 * (issue 20).  Anyone who reaches the port can connect, so:
 *
 *  - an incoming session has BS_UNAUTH_MS from its accept to say hello,
 *    whatever peer_timeout says (then, speaking for a node from its
 *    address, each further step the dialer's deadline);
 *  - a stranger (a source that is no node's addr or bootstrap host, as
 *    numbers in the config) holds at most BS_PER_SOURCE handshakes and
 *    strangers together at most BS_STRANGERS_MAX;
 *  - when every slot is taken, a newcomer closes the oldest stranger's
 *    handshake, and one from a node's address the oldest handshake of
 *    anyone, so a configured peer's reconnection is never starved by
 *    strangers; a session that is up is never evicted;
 *  - with strict_source (the default) a hello speaks for node NAME only
 *    from an address the config gives NAME (its addr or its bootstrap
 *    host, host names looked up then): anyone else saying "beta" is
 *    refused before beta's state is touched, and logged;
 *  - when accept4 runs out of descriptors (EMFILE, ENFILE, ENOBUFS,
 *    ENOMEM), a spare descriptor kept for this takes one connection: a
 *    node's is let in at the cost of the oldest stranger's handshake (or
 *    anyone's), a stranger's is closed; then the listener is left out of
 *    the epoll set for BS_ACCEPT_PAUSE_MS instead of waking the loop at
 *    once for ever, and this is said once per shortage.
 *
 * Every line a stranger can cause goes through its own log_rl.  All of it
 * runs on the bootstrap thread; nothing here takes a lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "bootstrap.h"
#include "bootstrap_session.h"
#include "log.h"
#include "util.h"

/* Address k (0: addr, 1: bootstrap host) of node i as 16 bytes; 0, or
 * -EAFNOSUPPORT for a name or a GID. */
static int bs_node_addr16(const struct bootstrap *b, uint32_t i, int k,
			  uint8_t out[16])
{
	const struct config_node *n = &b->cfg->nodes[i];
	union config_sa sa;

	if (!k)
		return bs_addr16(&n->addr_sa, out);
	config_node_bootstrap_sa(n, &sa);
	return bs_addr16(&sa, out);
}

/* The set's slot for a (empty or equal), by FNV-1a.  A slot holds
 * (node << 1 | k) + 1 and no copy: the config's own address is the key. */
static uint32_t bs_set_slot(const struct bootstrap *b, const uint8_t a[16])
{
	uint32_t h = util_fnv1a(a, 16, UTIL_FNV1A_INIT) & b->src_mask;
	uint8_t x[16];
	uint32_t v;

	while ((v = b->src_set[h])) {
		v--;
		if (!bs_node_addr16(b, v >> 1, (int)(v & 1), x) &&
		    !memcmp(x, a, 16))
			break;
		h = (h + 1) & b->src_mask;
	}
	return h;
}

/* Add node i's address k to the set, unless a name or there already;
 * with count, only say whether it would add one (a bootstrap host that is
 * the node's addr, the default, would not). */
static int bs_set_add(struct bootstrap *b, uint32_t i, int k, int count)
{
	uint8_t a[16], x[16];
	uint32_t h;

	if (bs_node_addr16(b, i, k, a))
		return 0;
	if (count)
		return !k || bs_node_addr16(b, i, 0, x) || memcmp(a, x, 16);
	h = bs_set_slot(b, a);
	if (b->src_set[h])
		return 0;
	b->src_set[h] = (i << 1 | (uint32_t)k) + 1;
	return 1;
}

/*
 * The configured nodes' numeric addresses, addr and bootstrap host, in an
 * open-addressed set of indexes into the config (4 bytes a slot, at most
 * two thirds full: about 6 bytes a node), so an accept tells a node's
 * address from a stranger's in constant time; and b->source_ok, through
 * which sessions ask strict_source.  0 or -ENOMEM.
 */
int bs_admit_open(struct bootstrap *b)
{
	uint32_t size = 16, most = 0;
	uint32_t i;
	int k;

	b->source_ok = bs_source_ok;
	for (i = 0; i < (uint32_t)b->cfg->nnodes; i++)
		for (k = 0; k < 2; k++)
			most += (uint32_t)bs_set_add(b, i, k, 1);
	while (size < most + most / 2)
		size *= 2;
	b->src_set = calloc(size, sizeof(*b->src_set));
	if (!b->src_set)
		return -ENOMEM;
	b->src_mask = size - 1;
	for (i = 0; i < (uint32_t)b->cfg->nnodes; i++)
		for (k = 0; k < 2; k++)
			bs_set_add(b, i, k, 0);
	b->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return 0;
}

/* Free what bs_admit_open made. */
void bs_admit_close(struct bootstrap *b)
{
	if (b->spare_fd >= 0)
		close(b->spare_fd);
	b->spare_fd = -1;
	free(b->src_set);
}

/* Whether ss is one of the config's numeric node addresses. */
static int bs_src_member(const struct bootstrap *b,
			 const struct sockaddr_storage *ss)
{
	uint8_t a[16];

	if (bs_addr16(ss, a))
		return 0;
	return b->src_set[bs_set_slot(b, a)] != 0;
}

/* Whether two sockaddrs hold the same address (ports aside); each a
 * sockaddr_storage or a node's union config_sa. */
static int bs_same_host(const void *x, const void *y)
{
	uint8_t a[16], c[16];

	return !bs_addr16(x, a) && !bs_addr16(y, c) && !memcmp(a, c, 16);
}

/* Look node pi's host names up again (blocks: the resolver), into its
 * cache; numeric addresses are left to the config's own. */
static void bs_names_lookup(struct bootstrap *b, int pi, int64_t now)
{
	const struct config_node *n = &b->cfg->nodes[pi];
	struct bs_peer *bp = bs_peer_get(b, pi);
	struct sockaddr_storage ss;
	char err[CONFIG_ERR_MAX];
	union config_sa bsa;
	socklen_t len;

	if (!bp)
		return;
	config_node_bootstrap_sa(n, &bsa);
	bp->name_ok[0] = n->addr_sa.ss_family == AF_UNSPEC &&
			 !config_node_addr(n, &ss, &len, err, sizeof(err)) &&
			 !bs_addr16(&ss, bp->name_addr[0]);
	bp->name_ok[1] =
		bsa.ss_family == AF_UNSPEC &&
		!config_node_bootstrap(n, &ss, &len, err, sizeof(err)) &&
		!bs_addr16(&ss, bp->name_addr[1]);
	bp->name_ms = now;
}

/* Whether src is one of node pi's host names' addresses, as cached (bp
 * NULL: none looked up). */
static int bs_names_match(const struct bs_peer *bp, const uint8_t src[16])
{
	return bp && ((bp->name_ok[0] && !memcmp(bp->name_addr[0], src, 16)) ||
		      (bp->name_ok[1] && !memcmp(bp->name_addr[1], src, 16)));
}

/*
 * Whether a node's host names may be looked up again now: each lookup
 * blocks this thread, and a stranger's hellos may name every node, so
 * all of them share BS_NAME_LOOKUPS per BS_NAME_RECHECK_MS.  A node's
 * first lookup is not counted (one each, ever), so that a stranger who
 * spends them cannot keep a node never looked up out.
 */
static int bs_names_budget(struct bootstrap *b, int64_t now)
{
	if (!b->names_ms || now - b->names_ms >= BS_NAME_RECHECK_MS) {
		b->names_ms = now;
		b->names_left = BS_NAME_LOOKUPS;
	}
	if (!b->names_left)
		return 0;
	b->names_left--;
	return 1;
}

/*
 * Whether session c comes from node pi's addr or bootstrap host.  Host
 * names are looked up when first needed and again, on a mismatch, at most
 * every BS_NAME_RECHECK_MS, within bs_names_budget: a stranger's hellos
 * cannot keep the resolver busy.
 */
static int bs_src_fits(struct bootstrap *b, const struct bs_conn *c, int pi)
{
	const struct config_node *n = &b->cfg->nodes[pi];
	const struct bs_peer *bp = b->bp[pi];
	int64_t now = util_now_ms();
	union config_sa bsa;
	uint8_t src[16];

	if (bs_addr16(&c->src, src))
		return 0;
	config_node_bootstrap_sa(n, &bsa);
	if (bs_same_host(&c->src, &n->addr_sa) || bs_same_host(&c->src, &bsa))
		return 1;
	if (n->addr_sa.ss_family != AF_UNSPEC && bsa.ss_family != AF_UNSPEC)
		return 0;
	if (bs_names_match(bp, src))
		return 1;
	if (bp && bp->name_ms &&
	    (now - bp->name_ms < BS_NAME_RECHECK_MS ||
	     !bs_names_budget(b, now)))
		return 0;
	bs_names_lookup(b, pi, now);
	return bs_names_match(b->bp[pi], src);
}

/*
 * Whether a RoCE GID, which is an IP address (v4-mapped or global IPv6),
 * is node pi's: the session's source, or one of the node's configured or
 * looked-up addresses.  A link-local or InfiniBand GID names no address,
 * and is left to the QP check and to certificates (SECURITY.md).
 */
static int bs_gid_fits(const struct bootstrap *b, const struct bs_conn *c,
		       int pi)
{
	const struct config_node *n = &b->cfg->nodes[pi];
	const struct bs_peer *bp = b->bp[pi];
	const uint8_t *gid = c->h.addr.gid.raw;
	union config_sa bsa;
	uint8_t a[16];

	config_node_bootstrap_sa(n, &bsa);
	if (c->h.addr.link_layer != IBV_LINK_LAYER_ETHERNET ||
	    (!util_is_v4mapped(gid) && (gid[0] & 0xe0) != 0x20))
		return 1;
	if ((!bs_addr16(&c->src, a) && !memcmp(a, gid, 16)) ||
	    (!bs_addr16(&n->addr_sa, a) && !memcmp(a, gid, 16)) ||
	    (!bs_addr16(&bsa, a) && !memcmp(a, gid, 16)))
		return 1;
	return bs_names_match(bp, gid);
}

/*
 * Whether session c may speak for node pi: always without strict_source;
 * else only from pi's addr or bootstrap host, announcing (on RoCE) a GID
 * that is one of pi's addresses too.
 */
int bs_source_ok(struct bootstrap *b, const struct bs_conn *c, int pi)
{
	if (!b->cfg->strict_source)
		return 1;
	return bs_src_fits(b, c, pi) && bs_gid_fits(b, c, pi);
}

/* Handshakes open from the stranger at ss (at most BS_STRANGERS_MAX). */
static int bs_stranger_count(const struct bootstrap *b,
			     const struct sockaddr_storage *ss)
{
	const struct bs_conn *c;
	int n = 0;

	TAILQ_FOREACH (c, &b->strangers, slink)
		n += bs_same_host(&c->src, ss);
	return n;
}

/* Incoming handshakes open from the host at ss, and the oldest of them
 * (*oldest, when not NULL). */
static int bs_source_count(struct bootstrap *b,
			   const struct sockaddr_storage *ss,
			   struct bs_conn **oldest)
{
	struct bs_conn *c;
	int n = 0;

	if (oldest)
		*oldest = NULL;
	TAILQ_FOREACH (c, &b->conns, link)
		if (!c->outgoing && c->st != BS_UP &&
		    bs_same_host(&c->src, ss) && !n++ && oldest)
			*oldest = c;
	return n;
}

/* The handshakes a node's address may hold: BS_PER_SOURCE for each node
 * the config puts there (as its addr or bootstrap host), so that a user
 * of one node's host can take no other node's room. */
static int bs_source_cap(const struct bootstrap *b,
			 const struct sockaddr_storage *ss)
{
	const struct config_node *n;
	union config_sa bsa;
	int i, k = 0;

	for (i = 0; i < b->cfg->nnodes; i++) {
		n = &b->cfg->nodes[i];
		config_node_bootstrap_sa(n, &bsa);
		k += bs_same_host(&n->addr_sa, ss) || bs_same_host(&bsa, ss);
	}
	return BS_PER_SOURCE * (k ? k : 1);
}

/* Whose handshake a newcomer from ss may close: the oldest stranger's,
 * or, for one from a node's address, the oldest from that same address;
 * NULL: nobody's.  Another node's handshake is never closed. */
static struct bs_conn *
bs_victim(struct bootstrap *b, const struct sockaddr_storage *ss, int stranger)
{
	struct bs_conn *victim = TAILQ_FIRST(&b->strangers);

	if (!victim && !stranger)
		bs_source_count(b, ss, &victim);
	return victim;
}

/*
 * Room for one more incoming session from ss (a stranger or not): 0, or
 * -EBUSY when there is none.  A stranger's address holds BS_PER_SOURCE
 * handshakes, a node's address that many for each node there.  Makes
 * room by closing the oldest stranger's handshake, or, for a node's
 * address, the oldest handshake from that address.
 */
static int bs_make_room(struct bootstrap *b, const struct sockaddr_storage *ss,
			int stranger)
{
	static struct log_rl rl_full, rl_evict, rl_source;
	struct bs_conn *victim = NULL;
	char s[INET6_ADDRSTRLEN + 8];
	int held = stranger ? bs_stranger_count(b, ss)
			    : bs_source_count(b, ss, NULL);
	int cap = BS_PER_SOURCE;

	if (!stranger && held >= cap)
		cap = bs_source_cap(b, ss);
	if (held >= cap) {
		log_rl_warnx(&rl_source,
			     "bootstrap: %s has %d handshakes open already; "
			     "refusing another",
			     bs_src_str(ss, s, sizeof(s)), cap);
		return -EBUSY;
	}
	if (b->nin < b->max_in &&
	    (!stranger || b->nstrangers < b->max_strangers))
		return 0;
	victim = bs_victim(b, ss, stranger);
	if (!victim) {
		log_rl_warnx(
			&rl_full,
			"bootstrap: %d sessions open; refusing one from %s",
			b->nin, bs_src_str(ss, s, sizeof(s)));
		return -EBUSY;
	}
	log_rl_info(&rl_evict,
		    "bootstrap: every session slot is taken; closing the "
		    "oldest handshake (from %s) for one from %s",
		    bs_src_str(&victim->src, s, sizeof(s)),
		    stranger ? "another stranger" : "a node's address");
	bs_conn_close(b, victim);
	return 0;
}

/* Leave the listener out of epoll for a while: the fds ran out. */
static void bs_accept_pause(struct bootstrap *b, int err, int64_t now)
{
	static struct log_rl rl_fd;
	struct epoll_event ev = {.events = 0, .data.ptr = &b->lfd};

	if (epoll_ctl(b->ep, EPOLL_CTL_MOD, b->lfd, &ev))
		log_warn("bootstrap: epoll_ctl");
	b->accept_paused_until = now + BS_ACCEPT_PAUSE_MS;
	if (!b->fd_short)
		log_rl_warnx(&rl_fd,
			     "bootstrap: cannot accept connections: %s; "
			     "pausing the listener %d ms at a time until "
			     "descriptors free up (raise the open-files "
			     "limit, LimitNOFILE)",
			     strerror(err), BS_ACCEPT_PAUSE_MS);
	b->fd_short = 1;
	b->fd_short_ms = now;
}

/* After a pause, listen again; returns the earliest time still due. */
int64_t bs_accept_timer(struct bootstrap *b, int64_t now, int64_t wake)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &b->lfd};

	if (!b->accept_paused_until)
		return wake;
	if (now < b->accept_paused_until)
		return b->accept_paused_until < wake ? b->accept_paused_until
						     : wake;
	b->accept_paused_until = 0;
	if (epoll_ctl(b->ep, EPOLL_CTL_MOD, b->lfd, &ev))
		log_warn("bootstrap: epoll_ctl");
	return wake;
}

/* New session c is a handshake from ss: BS_UNAUTH_MS to its end, and
 * a stranger's slot unless ss is a node's address. */
void bs_in_start(struct bootstrap *b, struct bs_conn *c,
		 const struct sockaddr_storage *ss, int64_t now)
{
	b->nin++;
	c->src = *ss;
	c->deadline = now + BS_UNAUTH_MS;
	if (!bs_src_member(b, ss)) {
		c->stranger = 1;
		TAILQ_INSERT_TAIL(&b->strangers, c, slink);
		b->nstrangers++;
	}
	c->st = BS_READ_HELLO;
	c->rxwant = HELLO_WIRE_LEN;
}

/* A new incoming session on fd from ss, if there is room for it. */
static void bs_admit(struct bootstrap *b, int fd,
		     const struct sockaddr_storage *ss, int64_t now)
{
	struct bs_conn *c;

	if (bs_make_room(b, ss, !bs_src_member(b, ss))) {
		close(fd);
		return;
	}
	bs_sockopts(b, fd);
	c = bs_conn_new(b, fd, -1);
	if (!c)
		return;
	bs_in_start(b, c, ss, now);
	bs_arm(b, c);
}

/*
 * Out of descriptors: the spare takes the next connection, so that one
 * from a node's address gets in at the cost of the oldest handshake (a
 * stranger's first), and a stranger's is closed, not left in the backlog.
 */
static void bs_accept_spare(struct bootstrap *b, int64_t now)
{
	static struct log_rl rl_spare;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char s[INET6_ADDRSTRLEN + 8];
	struct bs_conn *victim;
	int fd;

	if (b->spare_fd < 0) {
		b->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return;
	}
	close(b->spare_fd);
	memset(&ss, 0, sizeof(ss));
	fd = accept4(b->lfd, (struct sockaddr *)&ss, &len,
		     SOCK_NONBLOCK | SOCK_CLOEXEC);
	victim = fd >= 0 && bs_src_member(b, &ss) ? bs_victim(b, &ss, 0) : NULL;
	if (victim) {
		log_rl_info(&rl_spare,
			    "bootstrap: out of descriptors: closing the "
			    "oldest handshake (from %s) for one from a "
			    "node's address",
			    bs_src_str(&victim->src, s, sizeof(s)));
		bs_conn_close(b, victim);
		bs_admit(b, fd, &ss, now);
	} else if (fd >= 0) {
		close(fd);
	}
	b->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/*
 * Take the pending connections, within the caps above: at most
 * BS_ACCEPT_BATCH a wake-up, so that a flood of connections cannot keep
 * this thread from the sessions' own events; the listener is
 * level-triggered, so epoll hands the rest back on the next wait.
 */
void bs_accept(struct bootstrap *b, int64_t now)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, err, n;

	for (n = 0; n < BS_ACCEPT_BATCH; n++) {
		len = sizeof(ss);
		memset(&ss, 0, sizeof(ss));
		fd = accept4(b->lfd, (struct sockaddr *)&ss, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		err = errno;
		if (fd < 0) {
			if (err == EMFILE || err == ENFILE || err == ENOBUFS ||
			    err == ENOMEM) {
				bs_accept_spare(b, now);
				bs_accept_pause(b, err, now);
			} else if (errno != EAGAIN && errno != EWOULDBLOCK &&
				   errno != EINTR && errno != ECONNABORTED)
				log_warn("bootstrap: accept");
			return;
		}
		/* a shortage is over once accepts went well a whole period */
		if (b->fd_short && now - b->fd_short_ms >= LOG_RL_PERIOD_MS)
			b->fd_short = 0;
		bs_admit(b, fd, &ss, now);
	}
}
