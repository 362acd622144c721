/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Node addresses: a node's addr (what rdma_cm resolves: an IP of its RDMA
 * port, or gid:GID) and its bootstrap endpoint (TCP), both turned into
 * sockaddrs once, at load time.  Numeric addresses only: the test bed has
 * no DNS, and a name might resolve differently on each node.
 */
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <infiniband/ib.h>

#include "config.h"
#include "config_parse.h"

_Static_assert(sizeof(struct sockaddr_ib) <= sizeof(struct sockaddr_storage),
	       "AF_IB address must fit sockaddr_storage");

/* TCP and rdma_cm both want the port inside the sockaddr. */
static void addr_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
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

/* gid:GID: an AF_IB sockaddr on the default P_Key; -EINVAL when bad. */
static int addr_gid_sa(const char *gid_str, struct config_node *n)
{
	struct sockaddr_ib *sib = (struct sockaddr_ib *)&n->addr_sa;
	struct in6_addr gid;

	if (inet_pton(AF_INET6, gid_str, &gid) != 1)
		return -EINVAL;
	memset(&n->addr_sa, 0, sizeof(n->addr_sa));
	sib->sib_family = AF_IB;
	sib->sib_pkey = htobe16(0xffff); /* the default P_Key */
	memcpy(&sib->sib_addr, &gid, sizeof(gid));
	n->addr_len = sizeof(*sib);
	return 0;
}

/* addr: what rdma_cm resolves, an IP of the node's RDMA port or gid:GID. */
int config_addr_parse(struct config_parse *p, const struct config_key *k,
		      const char *val, void *dst)
{
	struct config_node *n = dst;
	size_t len = strlen(val);

	if (len >= sizeof(n->addr))
		return config_ini_bad(p, k, "longer than %zu bytes",
				      sizeof(n->addr) - 1);
	if (!strncasecmp(val, "gid:", 4)) {
		if (addr_gid_sa(val + 4, n))
			return config_ini_bad(
				p, k,
				"'%s' is not a GID (e.g. gid:fe80::2:c903:a:b)",
				val);
	} else if (addr_ip_sa(val, 0, &n->addr_sa, &n->addr_len)) {
		return config_ini_bad(
			p, k,
			"'%s' is not a numeric IPv4/IPv6 address or gid:GID",
			val);
	}
	memcpy(n->addr, val, len + 1);
	return 0;
}

/* bootstrap: HOST, HOST:PORT or [IPV6]:PORT; bare IPv6 would be ambiguous. */
int config_addr_bootstrap(struct config_parse *p, const struct config_key *k,
			  const char *val, void *dst)
{
	struct config_node *n = dst;
	char host[sizeof(n->bootstrap_host)];
	const char *h = val, *port = NULL, *c, *end;
	uint64_t v = CONFIG_DEFAULT_BOOTSTRAP_PORT;
	size_t hlen;

	if (*val == '[') {
		c = strchr(val, ']');
		if (!c)
			return config_ini_bad(p, k, "missing ']' in '%s'", val);
		h = val + 1;
		hlen = c - h;
		if (c[1] == ':')
			port = c + 2;
		else if (c[1])
			return config_ini_bad(p, k, "junk after ']' in '%s'",
					      val);
	} else {
		c = strchr(val, ':');
		if (c && strchr(c + 1, ':'))
			return config_ini_bad(
				p, k, "'%s': write IPv6 as [ADDR]:PORT", val);
		hlen = c ? (size_t)(c - val) : strlen(val);
		port = c ? c + 1 : NULL;
	}
	if (!hlen || hlen >= sizeof(host))
		return config_ini_bad(p, k, "no usable host in '%s'", val);
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (port &&
	    (config_num_scan(port, 0, &v, &end) || *end || !v || v > 65535))
		return config_ini_bad(p, k, "'%s' is not a port 1..65535",
				      port);
	if (addr_ip_sa(host, v, &n->bootstrap_sa, &n->bootstrap_len))
		return config_ini_bad(
			p, k, "'%s' is not a numeric IPv4/IPv6 address", host);
	memcpy(n->bootstrap_host, host, hlen + 1);
	n->bootstrap_port = v;
	return 0;
}

/* A node without a bootstrap key listens on its addr, default port. */
void config_addr_default_bootstrap(struct config_node *n)
{
	memcpy(n->bootstrap_host, n->addr, sizeof(n->addr));
	n->bootstrap_port = CONFIG_DEFAULT_BOOTSTRAP_PORT;
	n->bootstrap_sa = n->addr_sa;
	n->bootstrap_len = n->addr_len;
	addr_set_port(&n->bootstrap_sa, n->bootstrap_port);
}

/* Same endpoint, whatever else differs in the two sockaddrs. */
int config_addr_same_endpoint(const struct sockaddr_storage *a,
			      const struct sockaddr_storage *b)
{
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return a4->sin_port == b4->sin_port &&
		       a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	return a6->sin6_port == b6->sin6_port &&
	       a6->sin6_scope_id == b6->sin6_scope_id &&
	       !memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr));
}
