/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Configuration file: inih splits key = value lines and strips comments;
 * this file hands it the text one whole line at a time, so every message
 * can name its line, and reads [section] headers itself, because inih
 * neither reports empty sections nor their lines and cuts long names.
 * Each value becomes a typed field of struct config through a table of
 * keys.  The first error wins: parsing stops there and cfg is wiped.
 */
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <infiniband/ib.h>
#include <ini.h>

#include "config.h"
#include "util.h"

#define FILE_MAX (1u << 20) /* a config is a few hundred bytes */
#define DAY_MS	 86400000ull
#define KiB	 1024ull
#define MiB	 (1024 * KiB)
#define GiB	 (1024 * MiB)

_Static_assert(sizeof(struct sockaddr_ib) <= sizeof(struct sockaddr_storage),
	       "AF_IB address must fit sockaddr_storage");
_Static_assert(sizeof(mode_t) == sizeof(uint32_t) &&
		       sizeof(enum config_route) == sizeof(uint32_t) &&
		       sizeof(enum config_delivery) == sizeof(uint32_t) &&
		       sizeof(int) == sizeof(uint32_t),
	       "store_uint writes 4-byte fields as uint32_t");

enum section { SEC_NONE, SEC_GLOBAL, SEC_NODE };

/* Indices into gkeys[]: cross-checks need to know where a key was set. */
enum gkey {
	GK_DEVICE,
	GK_PORT,
	GK_GID_INDEX,
	GK_ROUTE,
	GK_RECV_DEPTH,
	GK_SEND_DEPTH,
	GK_MAX_MESSAGE,
	GK_QUEUE_LIMIT,
	GK_MAX_CHANNELS,
	GK_QKEY,
	GK_READ_TIMEOUT,
	GK_REASSEMBLY_TIMEOUT,
	GK_PEER_TIMEOUT,
	GK_BUSY_POLL,
	GK_FILE_MODE,
	GK_DIR_MODE,
	GK_DELIVERY,
	GK_SECRET,
	GK_SECRET_FILE,
	GK_MAX
};

enum nkey { NK_ADDR, NK_BOOTSTRAP, NK_DELIVERY, NK_MAX };

struct parse {
	struct config *cfg;
	const char *name; /* file name for messages */
	const char *pos;  /* next unread byte of the text */
	int line;	  /* line inih is working on */
	int err_line;	  /* line of the first error, 0 = none yet */
	int rc;		  /* what that error returns */
	char *err;
	size_t errlen;
	enum section sec;
	int global_line;      /* line of [global], 0 = none */
	int gseen[GK_MAX];    /* line each [global] key was set on */
	int (*nseen)[NK_MAX]; /* the same per node, parallel to cfg->nodes */
	int ncap;
};

struct key;
typedef int (*key_parser)(struct parse *p, const struct key *k, const char *val,
			  void *dst);

struct key {
	const char *name;
	key_parser parse;
	size_t off;	   /* of the field in struct config / config_node */
	size_t size;	   /* of that field */
	uint64_t min, max; /* value range, or length range for strings */
	const char *const *choices; /* for parse_choice: index = value */
};

static const char *const route_names[] = {
	[ROUTE_SA] = "sa",
	[ROUTE_GID] = "gid",
	NULL,
};

static const char *const delivery_names[] = {
	[DELIVERY_DATAGRAM] = "datagram",
	[DELIVERY_RELIABLE] = "reliable",
	NULL,
};

static int fail(struct parse *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(struct parse *p, const struct key *k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Keep only the first error: later ones tend to be its echoes. */
static int fail(struct parse *p, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->err_line)
		return p->rc;
	p->err_line = line > 0 ? line : 1;
	p->rc = -EINVAL;
	if (!p->err || !p->errlen)
		return p->rc;
	n = snprintf(p->err, p->errlen, "%s:%d: ", p->name, p->err_line);
	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
		va_end(ap);
	}
	return p->rc;
}

/* A bad value: prefix the key so every message says what to fix. */
static int bad(struct parse *p, const struct key *k, const char *fmt, ...)
{
	char why[CONFIG_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return fail(p, p->line, "%s: %s", k->name, why);
}

/* Running out of memory is not the file's fault; say so. */
static int oom(struct parse *p)
{
	if (!p->err_line) {
		fail(p, p->line, "out of memory");
		p->rc = -ENOMEM;
	}
	return p->rc;
}

/* Fields differ in width; the key table records each one's size. */
static void store_uint(void *dst, size_t size, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;

	if (size == sizeof(uint64_t))
		memcpy(dst, &v, sizeof(v));
	else
		memcpy(dst, &v32, sizeof(v32));
}

/* Units may follow a number after blanks: "1 MiB", "500 ms". */
static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/*
 * strtoull skips blanks, takes signs and stops at junk; a config number
 * must start with a digit.  The caller decides what may follow at *end.
 */
static int scan_u64(const char *s, int hex, uint64_t *v, const char **end)
{
	int base = 10;
	char *e;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
	    isxdigit((unsigned char)s[2]))
		base = 16;
	errno = 0;
	*v = strtoull(s, &e, base);
	if (errno)
		return -ERANGE;
	*end = e;
	return 0;
}

/* Sizes read back best in the unit they were probably written in. */
static const char *fmt_size(uint64_t v, char *buf, size_t len)
{
	if (v && !(v % GiB))
		snprintf(buf, len, "%lluG", (unsigned long long)(v / GiB));
	else if (v && !(v % MiB))
		snprintf(buf, len, "%lluM", (unsigned long long)(v / MiB));
	else if (v && !(v % KiB))
		snprintf(buf, len, "%lluk", (unsigned long long)(v / KiB));
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

/* Plain counts and ids; hex is allowed because qkeys are written in it. */
static int parse_num(struct parse *p, const struct key *k, const char *val,
		     void *dst)
{
	const char *end;
	uint64_t v;
	int rc;

	rc = scan_u64(val, 1, &v, &end);
	if (rc == -EINVAL || (!rc && *end))
		return bad(p, k, "'%s' is not a number", val);
	if (rc || v < k->min || v > k->max)
		return bad(p, k, "%s is out of range %llu..%llu", val,
			   (unsigned long long)k->min,
			   (unsigned long long)k->max);
	store_uint(dst, k->size, v);
	return 0;
}

/* gid_index is a number, or "auto" to let route pick the RoCE v2 GID. */
static int parse_gid_index(struct parse *p, const struct key *k,
			   const char *val, void *dst)
{
	int auto_ = -1;

	if (strcmp(val, "auto"))
		return parse_num(p, k, val, dst);
	memcpy(dst, &auto_, sizeof(auto_));
	return 0;
}

/* Byte counts, with the k/M/G suffixes config_parse_size knows. */
static int parse_size(struct parse *p, const struct key *k, const char *val,
		      void *dst)
{
	char lo[32], hi[32];
	uint64_t v;

	if (config_parse_size(val, &v))
		return bad(p, k, "'%s' is not a size (e.g. 4096, 64k, 1M, 2G)",
			   val);
	if (v < k->min || v > k->max)
		return bad(p, k, "%s is out of range %s..%s", val,
			   fmt_size(k->min, lo, sizeof(lo)),
			   fmt_size(k->max, hi, sizeof(hi)));
	store_uint(dst, k->size, v);
	return 0;
}

/* Durations: milliseconds, bare or with "ms", or whole seconds with "s". */
static int parse_ms(struct parse *p, const struct key *k, const char *val,
		    void *dst)
{
	const char *end;
	uint64_t v;
	int rc;

	rc = scan_u64(val, 0, &v, &end);
	if (rc == -EINVAL)
		goto syntax;
	if (!rc) {
		end = skip_blanks(end);
		if (!strcmp(end, "s")) {
			if (v > UINT64_MAX / 1000)
				rc = -ERANGE;
			v *= 1000;
		} else if (*end && strcmp(end, "ms")) {
			goto syntax;
		}
	}
	if (rc || v < k->min || v > k->max)
		return bad(p, k, "%s is out of range %llu..%llu ms", val,
			   (unsigned long long)k->min,
			   (unsigned long long)k->max);
	store_uint(dst, k->size, v);
	return 0;
syntax:
	return bad(p, k, "'%s' is not a duration (e.g. 500, 500ms, 2s)", val);
}

/* Permission bits are octal whether or not a leading 0 says so. */
static int parse_mode(struct parse *p, const struct key *k, const char *val,
		      void *dst)
{
	unsigned long long v;

	if (val[strspn(val, "01234567")])
		return bad(p, k, "'%s' is not an octal mode (e.g. 0640)", val);
	errno = 0;
	v = strtoull(val, NULL, 8);
	if (errno || v < k->min || v > k->max)
		return bad(p, k, "%s is out of range %04llo..%04llo", val,
			   (unsigned long long)k->min,
			   (unsigned long long)k->max);
	store_uint(dst, k->size, v);
	return 0;
}

/* Accept the spellings people use for booleans, in any case. */
static int parse_bool(struct parse *p, const struct key *k, const char *val,
		      void *dst)
{
	static const struct {
		const char *word;
		int value;
	} words[] = {
		{"yes", 1}, {"true", 1},  {"on", 1},  {"1", 1},
		{"no", 0},  {"false", 0}, {"off", 0}, {"0", 0},
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(words); i++) {
		if (!strcasecmp(val, words[i].word)) {
			store_uint(dst, k->size, words[i].value);
			return 0;
		}
	}
	return bad(p, k, "'%s' is not yes/no/true/false/on/off/1/0", val);
}

/* Enumerations: the value is the index of the word in k->choices. */
static int parse_choice(struct parse *p, const struct key *k, const char *val,
			void *dst)
{
	char list[128] = "";
	size_t i;

	for (i = 0; k->choices[i]; i++) {
		if (!strcmp(val, k->choices[i])) {
			store_uint(dst, k->size, i);
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%s", i ? " or " : "", k->choices[i]);
	}
	return bad(p, k, "'%s' is not %s", val, list);
}

/* Strings are copied whole or refused: a cut device name or path lies.
 * The value is never echoed, since this also carries the secret. */
static int parse_str(struct parse *p, const struct key *k, const char *val,
		     void *dst)
{
	size_t len = strlen(val);

	if (len < k->min || len > k->max)
		return bad(p, k, "must be %llu..%llu bytes long, not %zu",
			   (unsigned long long)k->min,
			   (unsigned long long)k->max, len);
	memcpy(dst, val, len + 1);
	return 0;
}

/* TCP and rdma_cm both want the port inside the sockaddr. */
static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

/*
 * Numeric addresses only: the test bed has no DNS, and a name might resolve
 * differently on each node.  inet_pton for IPv4, since getaddrinfo would
 * also take "10.1" or "7"; getaddrinfo for IPv6, for its %scope suffix.
 */
static int ip_sa(const char *host, uint16_t port, struct sockaddr_storage *ss,
		 socklen_t *len)
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
	set_port(ss, port);
	return 0;
}

/* addr: what rdma_cm resolves, an IP of the node's RDMA port or gid:GID. */
static int parse_addr(struct parse *p, const struct key *k, const char *val,
		      void *dst)
{
	struct config_node *n = dst;
	struct sockaddr_ib *sib = (struct sockaddr_ib *)&n->addr_sa;
	struct in6_addr gid;
	size_t len = strlen(val);

	if (len >= sizeof(n->addr))
		return bad(p, k, "longer than %zu bytes", sizeof(n->addr) - 1);
	if (!strncasecmp(val, "gid:", 4)) {
		if (inet_pton(AF_INET6, val + 4, &gid) != 1)
			return bad(
				p, k,
				"'%s' is not a GID (e.g. gid:fe80::2:c903:a:b)",
				val);
		memset(&n->addr_sa, 0, sizeof(n->addr_sa));
		sib->sib_family = AF_IB;
		sib->sib_pkey = htobe16(0xffff); /* the default P_Key */
		memcpy(&sib->sib_addr, &gid, sizeof(gid));
		n->addr_len = sizeof(*sib);
	} else if (ip_sa(val, 0, &n->addr_sa, &n->addr_len)) {
		return bad(p, k,
			   "'%s' is not a numeric IPv4/IPv6 address or gid:GID",
			   val);
	}
	memcpy(n->addr, val, len + 1);
	return 0;
}

/* bootstrap: HOST, HOST:PORT or [IPV6]:PORT; bare IPv6 would be ambiguous. */
static int parse_bootstrap(struct parse *p, const struct key *k,
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
			return bad(p, k, "missing ']' in '%s'", val);
		h = val + 1;
		hlen = c - h;
		if (c[1] == ':')
			port = c + 2;
		else if (c[1])
			return bad(p, k, "junk after ']' in '%s'", val);
	} else {
		c = strchr(val, ':');
		if (c && strchr(c + 1, ':'))
			return bad(p, k, "'%s': write IPv6 as [ADDR]:PORT",
				   val);
		hlen = c ? (size_t)(c - val) : strlen(val);
		port = c ? c + 1 : NULL;
	}
	if (!hlen || hlen >= sizeof(host))
		return bad(p, k, "no usable host in '%s'", val);
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (port && (scan_u64(port, 0, &v, &end) || *end || !v || v > 65535))
		return bad(p, k, "'%s' is not a port 1..65535", port);
	if (ip_sa(host, v, &n->bootstrap_sa, &n->bootstrap_len))
		return bad(p, k, "'%s' is not a numeric IPv4/IPv6 address",
			   host);
	memcpy(n->bootstrap_host, host, hlen + 1);
	n->bootstrap_port = v;
	return 0;
}

/* clang-format off */
#define CKEY(n, fn, field, lo, hi, ch)					\
	{ n, fn, offsetof(struct config, field),			\
	  sizeof(((struct config *)0)->field), lo, hi, ch }
/* clang-format on */

static const struct key gkeys[GK_MAX] = {
	[GK_DEVICE] = CKEY("device", parse_str, device, 1, 63, NULL),
	[GK_PORT] = CKEY("port", parse_num, port, 1, 255, NULL),
	[GK_GID_INDEX] =
		CKEY("gid_index", parse_gid_index, gid_index, 0, 255, NULL),
	[GK_ROUTE] = CKEY("route", parse_choice, route, 0, 0, route_names),
	[GK_RECV_DEPTH] =
		CKEY("recv_depth", parse_num, recv_depth, 16, 65536, NULL),
	[GK_SEND_DEPTH] =
		CKEY("send_depth", parse_num, send_depth, 16, 65536, NULL),
	[GK_MAX_MESSAGE] =
		CKEY("max_message", parse_size, max_message, 1, 64 * MiB, NULL),
	[GK_QUEUE_LIMIT] = CKEY("queue_limit", parse_size, queue_limit, 1,
				1024 * GiB, NULL),
	[GK_MAX_CHANNELS] =
		CKEY("max_channels", parse_num, max_channels, 1, 1000000, NULL),
	[GK_QKEY] = CKEY("qkey", parse_num, qkey, 0, UINT32_MAX, NULL),
	[GK_READ_TIMEOUT] = CKEY("read_timeout", parse_ms, read_timeout_ms, 0,
				 DAY_MS, NULL),
	[GK_REASSEMBLY_TIMEOUT] = CKEY("reassembly_timeout", parse_ms,
				       reassembly_timeout_ms, 1, DAY_MS, NULL),
	[GK_PEER_TIMEOUT] = CKEY("peer_timeout", parse_ms, peer_timeout_ms, 1,
				 DAY_MS, NULL),
	[GK_BUSY_POLL] = CKEY("busy_poll", parse_bool, busy_poll, 0, 1, NULL),
	[GK_FILE_MODE] =
		CKEY("file_mode", parse_mode, file_mode, 0, 0777, NULL),
	[GK_DIR_MODE] = CKEY("dir_mode", parse_mode, dir_mode, 0, 0777, NULL),
	[GK_DELIVERY] =
		CKEY("delivery", parse_choice, delivery, 0, 0, delivery_names),
	[GK_SECRET] = CKEY("secret", parse_str, secret, 1, 255, NULL),
	[GK_SECRET_FILE] =
		CKEY("secret_file", parse_str, secret_file, 1, 4095, NULL),
};

/* addr and bootstrap fill several fields, so they get the whole node. */
static const struct key nkeys[NK_MAX] = {
	[NK_ADDR] = {"addr", parse_addr, 0, sizeof(struct config_node), 0, 0,
		     NULL},
	[NK_BOOTSTRAP] = {"bootstrap", parse_bootstrap, 0,
			  sizeof(struct config_node), 0, 0, NULL},
	[NK_DELIVERY] = {"delivery", parse_choice,
			 offsetof(struct config_node, delivery),
			 sizeof(enum config_delivery), 0, 0, delivery_names},
};

/* One lookup for both sections; seen[] catches keys written twice. */
static int set_key(struct parse *p, const struct key *keys, int nkeys_,
		   int *seen, void *base, const char *name, const char *val,
		   const char *where)
{
	int i;

	for (i = 0; i < nkeys_; i++)
		if (!strcmp(keys[i].name, name))
			break;
	if (i == nkeys_)
		return fail(p, p->line, "unknown key '%s' in %s", name, where);
	if (seen[i])
		return fail(p, p->line, "duplicate key '%s' (first at line %d)",
			    name, seen[i]);
	seen[i] = p->line;
	if (!*val)
		return fail(p, p->line,
			    "%s: empty value (omit the key instead)", name);
	return keys[i].parse(p, &keys[i], val, (char *)base + keys[i].off);
}

/* inih calls this for each key = value; p->sec says where it belongs. */
static int on_key(void *user, const char *section, const char *name,
		  const char *value)
{
	struct parse *p = user;
	struct config *cfg = p->cfg;
	char where[CONFIG_NAME_MAX + 8];
	int i = cfg->nnodes - 1;

	(void)section; /* inih's copy is cut at 49 bytes; see on_header */
	switch (p->sec) {
	case SEC_GLOBAL:
		return !set_key(p, gkeys, GK_MAX, p->gseen, cfg, name, value,
				"[global]");
	case SEC_NODE:
		snprintf(where, sizeof(where), "[node %s]", cfg->nodes[i].name);
		return !set_key(p, nkeys, NK_MAX, p->nseen[i], &cfg->nodes[i],
				name, value, where);
	default:
		fail(p, p->line, "%s: key before any [global] or [node NAME]",
		     name);
		return 0;
	}
}

/* Why name cannot be a node or channel name, or NULL when it can. */
/* Nodes grow one at a time; their seen-lines rows grow alongside. */
static int add_node(struct parse *p, const char *name)
{
	struct config *cfg = p->cfg;
	struct config_node *nodes, *n;
	int(*seen)[NK_MAX];
	int cap;

	if (cfg->nnodes == p->ncap) {
		cap = p->ncap ? 2 * p->ncap : 8;
		nodes = realloc(cfg->nodes, cap * sizeof(*nodes));
		if (!nodes)
			return oom(p);
		cfg->nodes = nodes;
		seen = realloc(p->nseen, cap * sizeof(*seen));
		if (!seen)
			return oom(p);
		p->nseen = seen;
		p->ncap = cap;
	}
	n = &cfg->nodes[cfg->nnodes];
	memset(n, 0, sizeof(*n));
	memset(p->nseen[cfg->nnodes], 0, sizeof(p->nseen[0]));
	memcpy(n->name, name, strlen(name) + 1);
	n->line = p->line;
	cfg->nnodes++;
	return 0;
}

/* A "[...]" line, trimmed: [global] or [node NAME], each only once. */
static int on_header(struct parse *p, char *s)
{
	const char *why;
	char *close, *name, *end;
	int i;

	close = strchr(s, ']');
	if (!close)
		return fail(p, p->line, "section header without ']'");
	end = (char *)skip_blanks(close + 1);
	if (*end && *end != ';' && *end != '#')
		return fail(p, p->line, "junk after section header: '%s'", end);
	name = (char *)skip_blanks(s + 1);
	while (close > name && (close[-1] == ' ' || close[-1] == '\t'))
		close--;
	*close = '\0';

	if (!strcmp(name, "global")) {
		if (p->global_line)
			return fail(p, p->line,
				    "duplicate [global] (first at line %d)",
				    p->global_line);
		p->global_line = p->line;
		p->sec = SEC_GLOBAL;
		return 0;
	}
	if (strncmp(name, "node", 4) ||
	    (name[4] && name[4] != ' ' && name[4] != '\t'))
		return fail(p, p->line,
			    "unknown section [%s]; use [global] or [node NAME]",
			    name);
	name = (char *)skip_blanks(name + 4);
	why = util_name_problem(name);
	if (why)
		return fail(p, p->line, "node name '%s' %s", name, why);
	i = config_node_index(p->cfg, name);
	if (i >= 0)
		return fail(p, p->line,
			    "duplicate node '%s' (first at line %d)", name,
			    p->cfg->nodes[i].line);
	p->sec = SEC_NODE;
	return add_node(p, name);
}

/*
 * inih's reader: one whole line per call, so p->line is the line of every
 * on_key call.  Leading blanks go, which turns off inih's continuation
 * lines (an indented "port = 1" would otherwise extend the key above), and
 * headers are taken out: inih sees a blank line instead.
 */
static char *next_line(char *buf, int num, void *stream)
{
	struct parse *p = stream;
	const char *s = p->pos, *eol;
	size_t len;

	if (p->err_line || !*s)
		return NULL;
	p->line++;
	eol = strchr(s, '\n');
	len = eol ? (size_t)(eol - s) : strlen(s);
	p->pos = s + len + (eol ? 1 : 0);
	if (p->line == 1 && len >= 3 && !memcmp(s, "\xef\xbb\xbf", 3)) {
		s += 3;
		len -= 3;
	}
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (num < 2 || len > (size_t)num - 2) {
		fail(p, p->line, "line longer than %d bytes", num - 2);
		return NULL;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (buf[0] == '[') {
		on_header(p, buf);
		len = 0;
	}
	buf[len] = '\n';
	buf[len + 1] = '\0';
	return buf;
}

/* Same endpoint, whatever else differs in the two sockaddrs. */
static int same_endpoint(const struct sockaddr_storage *a,
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

/* The later of two lines, for conflicts between keys. */
static int later(int a, int b)
{
	return a > b ? a : b;
}

/* A node's defaults come from other keys, so they wait for the end. */
static int finish_node(struct parse *p, int i)
{
	struct config *cfg = p->cfg;
	struct config_node *n = &cfg->nodes[i], *o;
	int *seen = p->nseen[i], j;

	if (!seen[NK_ADDR])
		return fail(p, n->line, "node '%s' has no addr", n->name);
	if (!seen[NK_DELIVERY])
		n->delivery = cfg->delivery;
	if (!seen[NK_BOOTSTRAP]) {
		if (n->addr_sa.ss_family == AF_IB)
			return fail(p, n->line,
				    "node '%s': a GID addr needs bootstrap",
				    n->name);
		memcpy(n->bootstrap_host, n->addr, sizeof(n->addr));
		n->bootstrap_port = CONFIG_DEFAULT_BOOTSTRAP_PORT;
		n->bootstrap_sa = n->addr_sa;
		n->bootstrap_len = n->addr_len;
		set_port(&n->bootstrap_sa, n->bootstrap_port);
	}
	/* two daemons cannot listen on one endpoint */
	for (j = 0; j < i; j++) {
		o = &cfg->nodes[j];
		if (same_endpoint(&n->bootstrap_sa, &o->bootstrap_sa))
			return fail(p, later(seen[NK_BOOTSTRAP], n->line),
				    "node '%s' reuses bootstrap %s:%u of '%s'",
				    n->name, n->bootstrap_host,
				    n->bootstrap_port, o->name);
	}
	return 0;
}

/* What no single line shows: defaults from other keys, and conflicts. */
static int finish(struct parse *p)
{
	struct config *cfg = p->cfg;
	const int *g = p->gseen;
	char q[32], m[32];
	int i;

	if (!cfg->nnodes)
		return fail(p, p->line, "no [node NAME] section in the file");
	for (i = 0; i < cfg->nnodes; i++)
		if (finish_node(p, i))
			return p->rc;
	if (g[GK_SECRET] && g[GK_SECRET_FILE])
		return fail(p, later(g[GK_SECRET], g[GK_SECRET_FILE]),
			    "secret and secret_file are both set");
	if (cfg->queue_limit < cfg->max_message)
		return fail(p, later(g[GK_QUEUE_LIMIT], g[GK_MAX_MESSAGE]),
			    "queue_limit %s is below max_message %s",
			    fmt_size(cfg->queue_limit, q, sizeof(q)),
			    fmt_size(cfg->max_message, m, sizeof(m)));
	return 0;
}

/* The defaults documented in config.h and docs/config.md. */
static void set_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->port = 1;
	cfg->gid_index = -1;
	cfg->route = ROUTE_SA;
	cfg->recv_depth = 4096;
	cfg->send_depth = 256;
	cfg->max_message = 1 * MiB;
	cfg->queue_limit = 64 * MiB;
	cfg->max_channels = 1024;
	cfg->qkey = 0x1b1f5000;
	cfg->read_timeout_ms = 0;
	cfg->reassembly_timeout_ms = 2000;
	cfg->peer_timeout_ms = 10000;
	cfg->busy_poll = 0;
	cfg->file_mode = 0600;
	cfg->dir_mode = 0700;
	cfg->delivery = DELIVERY_DATAGRAM;
	cfg->local = -1;
}

/* The core both loaders share; cfg is defaulted and named already. */
static int parse_text(const char *text, const char *name, struct config *cfg,
		      char *err, size_t errlen)
{
	struct parse p = {
		.cfg = cfg,
		.name = name,
		.pos = text,
		.err = err,
		.errlen = errlen,
	};
	int rc;

	rc = ini_parse_stream(next_line, &p, on_key, &p);
	if (rc < 0)
		oom(&p);
	else if (rc > 0 && (!p.err_line || rc < p.err_line)) {
		p.err_line = 0; /* inih's syntax error came first */
		fail(&p, rc,
		     "syntax error: expected KEY = VALUE or a [section]");
	}
	if (!p.err_line)
		finish(&p);
	free(p.nseen);
	if (p.err_line) {
		config_free(cfg);
		return p.rc;
	}
	return 0;
}

/* Nothing from an earlier config may survive, even on error. */
int config_load_string(const char *text, const char *name, struct config *cfg,
		       char *err, size_t errlen)
{
	if (err && errlen)
		*err = '\0';
	if (!name)
		name = "<string>";
	set_defaults(cfg);
	snprintf(cfg->path, sizeof(cfg->path), "%s", name);
	if (!text) {
		if (err && errlen)
			snprintf(err, errlen, "%s: no text", name);
		config_free(cfg);
		return -EINVAL;
	}
	return parse_text(text, name, cfg, err, errlen);
}

/* "config: secret_file F: why" into err (paths may be long: cut them). */
static int secret_err(const struct config *cfg, char *err, size_t errlen,
		      int rc, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int secret_err(const struct config *cfg, char *err, size_t errlen,
		      int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(err, errlen, "%.200s: secret_file %.200s: ", cfg->path,
		     cfg->secret_file);
	if (n < 0 || (size_t)n >= errlen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
	return rc;
}

/*
 * Read secret_file into cfg->secret at start-up, so a bad file stops us
 * before mounting: it must be a regular file nobody but its owner can read,
 * 1..255 bytes once one trailing newline is stripped, with no NUL byte.
 * The content is never echoed.
 */
static int load_secret_file(struct config *cfg, char *err, size_t errlen)
{
	char buf[sizeof(cfg->secret) + 1];
	struct stat st;
	size_t len = 0;
	ssize_t n;
	int fd, rc = 0;

	fd = open(cfg->secret_file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		return secret_err(cfg, err, errlen, -errno, "%s",
				  strerror(errno));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = secret_err(cfg, err, errlen, -EINVAL,
				"not a regular file");
		goto out;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		rc = secret_err(cfg, err, errlen, -EACCES,
				"mode %04o: group or others may %s it; "
				"refusing it (chmod 600 it)",
				(unsigned int)(st.st_mode & 07777),
				st.st_mode & (S_IRGRP | S_IROTH)
					? "read"
					: "write or run");
		goto out;
	}
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = secret_err(cfg, err, errlen, -errno, "%s",
					strerror(errno));
			goto out;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	if (len && buf[len - 1] == '\n' && len <= sizeof(cfg->secret))
		len--;
	if (!len || len >= sizeof(cfg->secret) || memchr(buf, '\0', len)) {
		rc = secret_err(cfg, err, errlen, -EINVAL,
				"the secret must be 1..%zu bytes without NUL "
				"(one trailing newline is stripped)",
				sizeof(cfg->secret) - 1);
		goto out;
	}
	memcpy(cfg->secret, buf, len);
	cfg->secret[len] = '\0';
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return rc;
}

/* Read the whole file, then parse it as a string: one code path. */
int config_load(const char *path, struct config *cfg, char *err, size_t errlen)
{
	char *buf = NULL, *nul, *grown;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd, rc = 0, line;
	const char *what = NULL;

	/* cfg may hold garbage: wipe it rather than free what it points at */
	memset(cfg, 0, sizeof(*cfg));
	cfg->local = -1;
	if (err && errlen)
		*err = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		what = "cannot open";
		goto out;
	}
	for (;;) {
		if (len + 1 >= cap) {
			cap = cap ? 2 * cap : 4096;
			if (cap > FILE_MAX + 1) {
				rc = -EFBIG;
				what = "larger than 1 MiB";
				goto out;
			}
			grown = realloc(buf, cap);
			if (!grown) {
				rc = -ENOMEM;
				what = "cannot read";
				goto out;
			}
			buf = grown;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			what = "cannot read";
			goto out;
		}
		if (!n)
			break;
		len += n;
	}
	buf[len] = '\0';
	nul = memchr(buf, '\0', len);
	if (nul) {
		line = 1;
		for (char *c = buf; c < nul; c++)
			line += *c == '\n';
		if (err && errlen)
			snprintf(err, errlen, "%s:%d: NUL byte in the file",
				 path, line);
		rc = -EINVAL;
		goto out;
	}
	rc = config_load_string(buf, path, cfg, err, errlen);
	if (!rc && cfg->secret_file[0]) {
		char e[CONFIG_ERR_MAX];

		rc = load_secret_file(cfg, e, sizeof(e));
		if (rc) {
			if (err && errlen)
				snprintf(err, errlen, "%s", e);
			config_free(cfg);
		}
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	if (what && err && errlen)
		snprintf(err, errlen, "%s: %s: %s", path, what,
			 rc == -EFBIG ? "the limit for a config"
				      : strerror(-rc));
	return rc;
}

/* Exact match first; then the short host name, as hosts may be FQDNs. */
int config_select_local(struct config *cfg, const char *name, char *err,
			size_t errlen)
{
	char host[HOST_NAME_MAX + 1], *dot;
	size_t used;
	int i = -1;

	if (!name) {
		if (gethostname(host, sizeof(host)) < 0) {
			i = -errno;
			if (err && errlen)
				snprintf(err, errlen, "gethostname: %s",
					 strerror(errno));
			return i;
		}
		host[HOST_NAME_MAX] = '\0';
		name = host;
		i = config_node_index(cfg, host);
		dot = strchr(host, '.');
		if (i < 0 && dot) {
			*dot = '\0';
			i = config_node_index(cfg, host);
			if (i < 0)
				*dot = '.';
		}
	} else {
		i = config_node_index(cfg, name);
	}
	if (i >= 0) {
		cfg->local = i;
		return 0;
	}
	if (err && errlen) {
		snprintf(err, errlen,
			 "%s: no node named '%s'%s; nodes:", cfg->path, name,
			 name == host ? " (the host name)" : "");
		for (i = 0; i < cfg->nnodes; i++) {
			used = strlen(err);
			snprintf(err + used, errlen - used, "%s %s",
				 i ? "," : "", cfg->nodes[i].name);
		}
		if (!cfg->nnodes) {
			used = strlen(err);
			snprintf(err + used, errlen - used, " none");
		}
	}
	return -ENOENT;
}

/* Node lists are short; a linear search keeps the struct plain. */
int config_node_index(const struct config *cfg, const char *name)
{
	int i;

	if (!cfg || !name)
		return -1;
	for (i = 0; i < cfg->nnodes; i++)
		if (!strcmp(cfg->nodes[i].name, name))
			return i;
	return -1;
}

/* Wipe everything, the secret included, so a second call is harmless. */
void config_free(struct config *cfg)
{
	if (!cfg)
		return;
	free(cfg->nodes);
	explicit_bzero(cfg, sizeof(*cfg));
	cfg->local = -1;
}

/* Sizes as people write them; powers of 1024 whatever the spelling. */
int config_parse_size(const char *s, uint64_t *out)
{
	const char *e;
	unsigned int shift = 0;
	uint64_t v;

	if (!s || scan_u64(s, 0, &v, &e))
		return -EINVAL;
	e = skip_blanks(e);
	switch (*e) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	}
	if (shift && *++e == 'i' && e[1] == 'B')
		e++;
	if (*e == 'B')
		e++;
	if (*e || v > UINT64_MAX >> shift)
		return -EINVAL;
	*out = v << shift;
	return 0;
}
