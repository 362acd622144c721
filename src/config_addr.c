/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Node addresses: a node's addr (what rdma_cm resolves: an IP of its RDMA
 * port, or gid:GID) and its bootstrap endpoint (TCP).  Numeric ones become
 * sockaddrs at load time.  A host name is only checked for its form at
 * load time and kept as written: a 10,000-node config must not cost
 * 10,000 lookups at start, and a name may move.  config_node_addr and
 * config_node_bootstrap look it up (getaddrinfo) whenever one is needed:
 * when a peer is first met and again when it cannot be reached; ibfs -t
 * looks up every node's.  The [global] multicast group is an address
 * too, but numeric only: every node must join the same one.
 */
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <infiniband/ib.h>

#include "config.h"
#include "config_parse.h"

_Static_assert(sizeof(struct sockaddr_ib) <= sizeof(struct sockaddr_storage),
	       "AF_IB address must fit sockaddr_storage");
_Static_assert(sizeof(struct config_node) <= 96,
	       "a config_node is per configured node: keep it small");

/* TCP and rdma_cm both want the port inside the sockaddr (a
 * sockaddr_storage, or a node's union config_sa). */
static void addr_set_port(void *sa, uint16_t port)
{
	struct sockaddr_storage *ss = sa;

	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

/* The same for a node's compact sockaddr. */
static void addr_sa_set_port(union config_sa *u, uint16_t port)
{
	if (u->ss_family == AF_INET)
		u->in.sin_port = htons(port);
	else if (u->ss_family == AF_INET6)
		u->in6.sin6_port = htons(port);
}

/*
 * inet_pton for IPv4, since getaddrinfo would also take "10.1" or "7";
 * getaddrinfo for IPv6, for its %scope suffix.
 */
static int addr_ip_sa(const char *host, uint16_t port,
		      struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct addrinfo hints = {
		.ai_family = AF_INET6,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST,
	};
	struct addrinfo *res;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		*len = sizeof(*sin);
	} else {
		if (!strchr(host, ':') || getaddrinfo(host, NULL, &hints, &res))
			return -EINVAL;
		if (res->ai_addrlen > sizeof(*ss)) {
			freeaddrinfo(res);
			return -EINVAL;
		}
		memcpy(ss, res->ai_addr, res->ai_addrlen);
		*len = res->ai_addrlen;
		freeaddrinfo(res);
	}
	addr_set_port(ss, port);
	return 0;
}

/* The same into a node's compact sockaddr, which holds any IP one. */
static int addr_ip_node(const char *host, uint16_t port, union config_sa *u,
			uint8_t *len)
{
	struct sockaddr_storage ss;
	socklen_t sslen;

	if (addr_ip_sa(host, port, &ss, &sslen) || sslen > sizeof(*u))
		return -EINVAL;
	memset(u, 0, sizeof(*u));
	memcpy(u, &ss, sslen);
	*len = (uint8_t)sslen;
	return 0;
}

/*
 * A host name as RFC 1123 writes it (labels of letters, digits, '-' and,
 * as /etc/hosts allows, '_'; an optional final dot), whose last label is
 * not all digits: so "10.1" and "10.0.0.300" stay bad IPv4 addresses.
 */
static int addr_is_name(const char *s)
{
	size_t len = strlen(s), lab = 0, i;
	int digits = 1;

	if (len && s[len - 1] == '.')
		len--;
	if (!len || len > 253)
		return 0;
	for (i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (!lab || s[i - 1] == '-')
				return 0;
			lab = 0;
			digits = 1;
			continue;
		}
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
		if ((!lab && s[i] == '-') || ++lab > 63)
			return 0;
		digits &= isdigit((unsigned char)s[i]) != 0;
	}
	return lab && s[len - 1] != '-' && !digits;
}

/* A name stays as written; its sockaddr says so with AF_UNSPEC. */
static void addr_name_sa(union config_sa *ss, uint8_t *len)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = AF_UNSPEC;
	*len = 0;
}

/* gid:GID: an AF_IB sockaddr on the default P_Key; -EINVAL when bad. */
static int addr_gid_sa(const char *gid_str, struct config_node *n)
{
	struct sockaddr_ib *sib = (struct sockaddr_ib *)&n->addr_sa;
	struct in6_addr gid;

	if (inet_pton(AF_INET6, gid_str, &gid) != 1)
		return -EINVAL;
	memset(&n->addr_sa, 0, sizeof(n->addr_sa));
	sib->sib_family = AF_IB;
	/* the default P_Key; route.c puts a configured pkey in its place */
	sib->sib_pkey = htobe16(0xffff);
	memcpy(&sib->sib_addr, &gid, sizeof(gid));
	n->addr_len = sizeof(*sib);
	return 0;
}

/* An error of a value into why, and -EINVAL, in one expression. */
#define ADDR_BAD(why, whylen, ...) (snprintf(why, whylen, __VA_ARGS__), -EINVAL)

/* addr: what rdma_cm resolves, an IP of the node's RDMA port or gid:GID. */
int config_addr_set_addr(struct config_node *n, const char *val, char *why,
			 size_t whylen)
{
	size_t len = strlen(val);

	if (len > CONFIG_HOST_MAX)
		return ADDR_BAD(why, whylen, "longer than %d bytes",
				CONFIG_HOST_MAX);
	if (!strncasecmp(val, "gid:", 4)) {
		if (addr_gid_sa(val + 4, n))
			return ADDR_BAD(
				why, whylen,
				"'%s' is not a GID (e.g. gid:fe80::2:c903:a:b)",
				val);
	} else if (addr_is_name(val)) {
		addr_name_sa(&n->addr_sa, &n->addr_len);
	} else if (addr_ip_node(val, 0, &n->addr_sa, &n->addr_len)) {
		return ADDR_BAD(why, whylen,
				"'%s' is not an IPv4/IPv6 address, a host name "
				"or gid:GID",
				val);
	}
	return 0;
}

/*
 * A multicast group as text into cfg: a numeric IPv4 address in
 * 224.0.0.0/4 or IPv6 in ff00::/8, and its sockaddr with port 0.  -EINVAL
 * for anything else, cfg untouched; so for an IPv6 %scope too, as an
 * interface name would mean another group on each host.  The key and its
 * default both come through here, so they cannot differ in what they
 * store.
 */
static int addr_mcast_set(struct config *cfg, const char *text)
{
	struct sockaddr_storage ss;
	const struct sockaddr_in *sin = (const void *)&ss;
	const struct sockaddr_in6 *sin6 = (const void *)&ss;
	size_t len = strlen(text);
	socklen_t salen;

	if (len >= sizeof(cfg->mcast_group) || strchr(text, '%') ||
	    addr_ip_sa(text, 0, &ss, &salen))
		return -EINVAL;
	if (ss.ss_family == AF_INET ? !IN_MULTICAST(ntohl(sin->sin_addr.s_addr))
				    : !IN6_IS_ADDR_MULTICAST(&sin6->sin6_addr))
		return -EINVAL;
	memcpy(cfg->mcast_group, text, len + 1);
	cfg->mcast_sa = ss;
	cfg->mcast_len = salen;
	return 0;
}

/* mcast_group: no host names, as every node must join the same group. */
int config_addr_set_mcast(struct config *cfg, const char *val, char *why,
			  size_t whylen)
{
	if (addr_mcast_set(cfg, val))
		return ADDR_BAD(why, whylen,
				"'%s' is not an IPv4 or IPv6 multicast group "
				"(224.0.0.0/4, ff00::/8)",
				val);
	return 0;
}

/*
 * The group of nodes that share a qkey: 239.192.X.Y, in the RFC 2365
 * organisation-local scope, X.Y the 16-bit fold of FNV-1a over the qkey's
 * four bytes, big-endian.  Always a group, so it cannot fail.
 */
void config_addr_mcast_default(struct config *cfg)
{
	char text[32];
	uint8_t q[4];
	uint32_t h;

	util_put32(q, cfg->qkey);
	h = util_fnv1a(q, sizeof(q), UTIL_FNV1A_INIT);
	h = (h >> 16) ^ (h & 0xffff);
	snprintf(text, sizeof(text), "239.192.%u.%u", (unsigned)(h >> 8),
		 (unsigned)(h & 0xff));
	addr_mcast_set(cfg, text);
}

/* bootstrap: HOST, HOST:PORT or [IPV6]:PORT; bare IPv6 would be ambiguous. */
int config_addr_set_bootstrap(struct config_node *n, const char *val,
			      char host[CONFIG_HOST_MAX + 1],
			      union config_sa *sa, char *why, size_t whylen)
{
	const char *h = val, *port = NULL, *c, *end;
	uint64_t v = CONFIG_DEFAULT_BOOTSTRAP_PORT;
	size_t hlen;

	if (*val == '[') {
		c = strchr(val, ']');
		if (!c)
			return ADDR_BAD(why, whylen, "missing ']' in '%s'",
					val);
		h = val + 1;
		hlen = c - h;
		if (c[1] == ':')
			port = c + 2;
		else if (c[1])
			return ADDR_BAD(why, whylen, "junk after ']' in '%s'",
					val);
	} else {
		c = strchr(val, ':');
		if (c && strchr(c + 1, ':'))
			return ADDR_BAD(why, whylen,
					"'%s': write IPv6 as [ADDR]:PORT", val);
		hlen = c ? (size_t)(c - val) : strlen(val);
		port = c ? c + 1 : NULL;
	}
	if (!hlen || hlen > CONFIG_HOST_MAX)
		return ADDR_BAD(why, whylen, "no usable host in '%s'", val);
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (port &&
	    (config_num_scan(port, 0, &v, &end) || *end || !v || v > 65535))
		return ADDR_BAD(why, whylen, "'%s' is not a port 1..65535",
				port);
	if (h == val && addr_is_name(host))
		addr_name_sa(sa, &n->bootstrap_len);
	else if (addr_ip_node(host, v, sa, &n->bootstrap_len))
		return ADDR_BAD(why, whylen,
				h == val ? "'%s' is not an IPv4/IPv6 "
					   "address or a host name"
					 : "'%s' is not a numeric "
					   "IPv4/IPv6 address",
				host);
	n->bootstrap_port = v;
	return 0;
}

/* A node without a bootstrap key listens on its addr, default port. */
void config_addr_default_bootstrap(struct config_node *n)
{
	n->bootstrap_host = n->addr;
	n->bootstrap_port = CONFIG_DEFAULT_BOOTSTRAP_PORT;
	n->bootstrap_own = NULL;
	n->bootstrap_len = n->addr_len;
}

/* Whether bootstrap sockaddr sa (as set_bootstrap made it) is node n's
 * addr at another port: then n keeps none of its own.  An AF_IB addr
 * never is; two names are when written alike. */
int config_addr_bootstrap_is_addr(const struct config_node *n,
				  const union config_sa *sa)
{
	union config_sa a = n->addr_sa;

	if (a.ss_family != sa->ss_family || a.ss_family == AF_IB)
		return 0;
	if (a.ss_family == AF_UNSPEC)
		return !strcmp(n->addr, n->bootstrap_host);
	addr_sa_set_port(&a, n->bootstrap_port);
	return !memcmp(&a, sa, sizeof(a));
}

void config_node_bootstrap_sa(const struct config_node *n, union config_sa *out)
{
	if (n->bootstrap_own) {
		*out = *n->bootstrap_own;
		return;
	}
	*out = n->addr_sa;
	addr_sa_set_port(out, n->bootstrap_port);
}

/* What config_addr_same_bootstrap compares, hashed: the host as written
 * (case folded) for a name, else the address; and the port. */
uint32_t config_addr_bootstrap_hash(const struct config_node *n)
{
	union config_sa sa;
	const union config_sa *a = &sa;
	const struct sockaddr_in *a4 = (const void *)a;
	const struct sockaddr_in6 *a6 = (const void *)a;
	uint32_t h = util_fnv1a(&n->bootstrap_port, sizeof(n->bootstrap_port),
				UTIL_FNV1A_INIT);
	const char *c;
	char lc;

	config_node_bootstrap_sa(n, &sa);
	if (a->ss_family == AF_UNSPEC) {
		for (c = n->bootstrap_host; *c; c++) {
			lc = (char)tolower((unsigned char)*c);
			h = util_fnv1a(&lc, 1, h);
		}
		return h;
	}
	if (a->ss_family == AF_INET)
		return util_fnv1a(&a4->sin_addr, sizeof(a4->sin_addr), h);
	return util_fnv1a(&a6->sin6_addr, sizeof(a6->sin6_addr), h);
}

/*
 * Same endpoint, whatever else differs in the two sockaddrs; two names
 * are compared as written (a name and a number never match: that would
 * take a lookup).
 */
int config_addr_same_bootstrap(const struct config_node *na,
			       const struct config_node *nb)
{
	union config_sa sa, sb;
	const union config_sa *a = &sa, *b = &sb;
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

	config_node_bootstrap_sa(na, &sa);
	config_node_bootstrap_sa(nb, &sb);
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_UNSPEC)
		return na->bootstrap_port == nb->bootstrap_port &&
		       !strcasecmp(na->bootstrap_host, nb->bootstrap_host);
	if (a->ss_family == AF_INET)
		return a4->sin_port == b4->sin_port &&
		       a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	return a6->sin6_port == b6->sin6_port &&
	       a6->sin6_scope_id == b6->sin6_scope_id &&
	       !memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr));
}

/*
 * Look host up: the first IPv4 answer, else the first IPv6 one, as
 * rdma_cm wants an IP of the RDMA port and a listener and its dialers
 * must agree on one family.  -EHOSTUNREACH with the resolver's reason.
 */
static int addr_lookup(const char *host, uint16_t port,
		       struct sockaddr_storage *ss, socklen_t *len,
		       const char **why)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *ai, *pick = NULL;
	int rc;

	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc) {
		/* static text either way: ibfs -t looks up on several threads
		 */
		*why = rc != EAI_SYSTEM		? gai_strerror(rc)
		       : strerrordesc_np(errno) ? strerrordesc_np(errno)
						: "system error";
		return -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET) {
			pick = ai;
			break;
		}
		if (ai->ai_family == AF_INET6 && !pick)
			pick = ai;
	}
	if (!pick || pick->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(res);
		*why = "no IPv4 or IPv6 address";
		return -EHOSTUNREACH;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, pick->ai_addr, pick->ai_addrlen);
	*len = pick->ai_addrlen;
	freeaddrinfo(res);
	addr_set_port(ss, port);
	return 0;
}

/* The parser's sockaddr when it made one (numeric), else a lookup now. */
static int addr_get(const char *host, const union config_sa *sa,
		    socklen_t salen, uint16_t port, struct sockaddr_storage *ss,
		    socklen_t *len, const char **why)
{
	if (sa->ss_family != AF_UNSPEC) {
		memset(ss, 0, sizeof(*ss));
		memcpy(ss, sa, sizeof(*sa));
		*len = salen;
		return 0;
	}
	return addr_lookup(host, port, ss, len, why);
}

/* One resolver for every caller of a node's addr: route.c, main.c. */
int config_node_addr(const struct config_node *n, struct sockaddr_storage *ss,
		     socklen_t *len, char *err, size_t errlen)
{
	const char *why = "";
	int rc;

	rc = addr_get(n->addr, &n->addr_sa, n->addr_len, 0, ss, len, &why);
	if (rc && err && errlen)
		snprintf(err, errlen, "%s: %s", n->addr, why);
	return rc;
}

/* The same for the bootstrap endpoint, which the dialer needs. */
int config_node_bootstrap(const struct config_node *n,
			  struct sockaddr_storage *ss, socklen_t *len,
			  char *err, size_t errlen)
{
	const char *why = "";
	union config_sa sa;
	int rc;

	config_node_bootstrap_sa(n, &sa);
	rc = addr_get(n->bootstrap_host, &sa, n->bootstrap_len,
		      n->bootstrap_port, ss, len, &why);
	if (rc && err && errlen)
		snprintf(err, errlen, "%s: %s", n->bootstrap_host, why);
	return rc;
}

/* The line of node n's addr key, or of its bootstrap key (addr's when
 * the bootstrap host is the addr's). */
int config_node_line(const struct config_node *n, int bootstrap)
{
	return n->line + (bootstrap ? n->bootstrap_dline : n->addr_dline);
}

/* A name of node i that did not resolve, in config words. */
void config_resolve_msg(const struct config *cfg, int i, int bootstrap,
			const char *why, char *err, size_t errlen)
{
	const struct config_node *n = &cfg->nodes[i];

	snprintf(err, errlen, "%s:%d: node %s: %s '%s' does not resolve: %s",
		 cfg->path, config_node_line(n, bootstrap), n->name,
		 bootstrap ? "bootstrap" : "addr",
		 bootstrap ? n->bootstrap_host : n->addr, why);
}

/* Node i's addr or bootstrap host, a failure told at the key's line. */
static int addr_resolve(const struct config *cfg, int i, int bootstrap,
			struct sockaddr_storage *ss, socklen_t *len, char *err,
			size_t errlen)
{
	const struct config_node *n = &cfg->nodes[i];
	const char *why = "";
	union config_sa sa;
	int rc;

	config_node_bootstrap_sa(n, &sa);
	if (bootstrap)
		rc = addr_get(n->bootstrap_host, &sa, n->bootstrap_len,
			      n->bootstrap_port, ss, len, &why);
	else
		rc = addr_get(n->addr, &n->addr_sa, n->addr_len, 0, ss, len,
			      &why);
	if (rc && err && errlen)
		config_resolve_msg(cfg, i, bootstrap, why, err, errlen);
	return rc;
}

/* ibfs -t and the daemon's start: node i's addr, in config words. */
int config_resolve_addr(const struct config *cfg, int i,
			struct sockaddr_storage *ss, socklen_t *len, char *err,
			size_t errlen)
{
	return addr_resolve(cfg, i, 0, ss, len, err, errlen);
}

/* ibfs -t and the daemon's start: node i's bootstrap endpoint. */
int config_resolve_bootstrap(const struct config *cfg, int i,
			     struct sockaddr_storage *ss, socklen_t *len,
			     char *err, size_t errlen)
{
	return addr_resolve(cfg, i, 1, ss, len, err, errlen);
}

/*
 * The local node's names are looked up once, at start: a daemon cannot
 * run without its own address, and the listener (bootstrap.c) and the GID
 * choice (tp_dev.c) read addr_sa and bootstrap_sa.
 */
int config_resolve_local(struct config *cfg, char *err, size_t errlen)
{
	struct config_node *me;
	struct sockaddr_storage a, b;
	socklen_t alen, blen;
	int rc;

	if (cfg->local < 0 || cfg->local >= cfg->nnodes)
		return -EINVAL;
	me = &cfg->nodes[cfg->local];
	rc = config_resolve_addr(cfg, cfg->local, &a, &alen, err, errlen);
	if (!rc)
		rc = config_resolve_bootstrap(cfg, cfg->local, &b, &blen, err,
					      errlen);
	if (rc)
		return rc;
	if (alen > sizeof(me->addr_sa) || blen > sizeof(union config_sa))
		return -EAFNOSUPPORT; /* addr_lookup gives IPv4 or IPv6 */
	memcpy(&me->addr_sa, &a, alen);
	me->addr_len = alen;
	/* a bootstrap host that is addr's follows it; one of its own is
	 * kept in the string blocks, where it can be written */
	if (me->bootstrap_own) {
		memset(me->bootstrap_own, 0, sizeof(*me->bootstrap_own));
		memcpy(me->bootstrap_own, &b, blen);
	}
	me->bootstrap_len = blen;
	return 0;
}

/*
 * ibfs -t: both names of node i into l.  A bootstrap host that is the
 * addr is looked up once, the answer given the bootstrap port.
 */
static void addr_lookup_node(const struct config *cfg, int i,
			     struct config_lookup *l)
{
	const struct config_node *n = &cfg->nodes[i];
	union config_sa sa;

	config_node_bootstrap_sa(n, &sa);
	memset(l, 0, sizeof(*l));
	if (addr_get(n->addr, &n->addr_sa, n->addr_len, 0, &l->addr,
		     &l->addr_len, &l->addr_why))
		l->addr_len = 0;
	if (n->addr_sa.ss_family == AF_UNSPEC && sa.ss_family == AF_UNSPEC &&
	    !strcmp(n->addr, n->bootstrap_host)) {
		l->bootstrap = l->addr;
		l->bootstrap_len = l->addr_len;
		l->bootstrap_why = l->addr_why;
		addr_set_port(&l->bootstrap, n->bootstrap_port);
		return;
	}
	if (addr_get(n->bootstrap_host, &sa, n->bootstrap_len,
		     n->bootstrap_port, &l->bootstrap, &l->bootstrap_len,
		     &l->bootstrap_why))
		l->bootstrap_len = 0;
}

/* One worker of config_lookup_all: the next node not taken, until none. */
struct addr_pool {
	const struct config *cfg;
	struct config_lookup *out;
	atomic_int next;
};

static void *addr_pool_work(void *arg)
{
	struct addr_pool *pool = arg;
	int i;

	while ((i = atomic_fetch_add(&pool->next, 1)) < pool->cfg->nnodes)
		addr_lookup_node(pool->cfg, i, &pool->out[i]);
	return NULL;
}

/*
 * Every node's names, CONFIG_LOOKUPS_INFLIGHT look-ups at a time: a
 * resolver that takes a second to fail a name would make 512 names
 * (the same host as addr and bootstrap looked up once) eight minutes one
 * after another.  The caller works too; a thread that cannot start only
 * leaves fewer in flight.
 */
void config_lookup_all(const struct config *cfg, struct config_lookup *out)
{
	pthread_t tid[CONFIG_LOOKUPS_INFLIGHT - 1];
	struct addr_pool pool = {.cfg = cfg, .out = out};
	int want = cfg->nnodes < CONFIG_LOOKUPS_INFLIGHT
			   ? cfg->nnodes
			   : CONFIG_LOOKUPS_INFLIGHT;
	int k, started = 0;

	atomic_init(&pool.next, 0);
	for (k = 0; k + 1 < want; k++)
		if (!pthread_create(&tid[started], NULL, addr_pool_work, &pool))
			started++;
	addr_pool_work(&pool);
	for (k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
}
