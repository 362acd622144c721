/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The INI reader: inih splits key = value lines and strips comments; this
 * file hands it the text one whole line at a time, so every message can
 * name its line, and reads [section] headers itself, because inih neither
 * reports empty sections nor their lines and cuts long names.  Each value
 * goes to its key's parser (config_keys.c), which reports through
 * config_ini_bad: the reader and the key table are one concern split in
 * two, the only two config files that call each other.  The first error
 * wins: parsing stops there, and config.c wipes cfg.  The reader also
 * builds the index of nodes by name, as it adds them.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ini.h>

#include "config.h"
#include "config_parse.h"
#include "hostlist.h"
#include "util.h"

enum section { SEC_NONE, SEC_GLOBAL, SEC_NODE };

struct config_parse {
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
	/* each node's bootstrap sockaddr until its end, parallel too */
	union config_sa *nbsa;
	int ncap;
	int sec_first; /* the nodes of the [node ...] section being read */
	int sec_n;     /* ... how many (a hostlist names several) */
	char sec_expr[CONFIG_LINE_MAX]; /* ... as its header wrote them */
};

static int ini_fail(struct config_parse *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Keep only the first error: later ones tend to be its echoes. */
static int ini_fail(struct config_parse *p, int line, const char *fmt, ...)
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
int config_ini_bad(struct config_parse *p, const struct config_key *k,
		   const char *fmt, ...)
{
	char why[CONFIG_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return ini_fail(p, p->line, "%s: %s", k->name, why);
}

/* Running out of memory is not the file's fault; say so. */
static int ini_oom(struct config_parse *p)
{
	if (!p->err_line) {
		ini_fail(p, p->line, "out of memory");
		p->rc = -ENOMEM;
	}
	return p->rc;
}

/* One lookup for both sections; seen[] catches keys written twice. */
static int ini_set_key(struct config_parse *p, const struct config_key *keys,
		       int nkeys, int *seen, void *base, const char *name,
		       const char *val, const char *where)
{
	int i;

	for (i = 0; i < nkeys; i++)
		if (!strcmp(keys[i].name, name))
			break;
	if (i == nkeys)
		return ini_fail(p, p->line, "unknown key '%s' in %s", name,
				where);
	if (seen[i])
		return ini_fail(p, p->line,
				"duplicate key '%s' (first at line %d)", name,
				seen[i]);
	seen[i] = p->line;
	if (!*val)
		return ini_fail(p, p->line,
				"%s: empty value (omit the key instead)", name);
	return keys[i].parse(p, &keys[i], val, (char *)base + keys[i].off);
}

/*
 * Whether a node key's value is a hostlist: a comma, or a bracket of
 * numbers and ranges ("10.0.2.[15-78]"), never an IPv6 one
 * ("[fe80::1]:18515").
 */
static int ini_is_list(const char *v)
{
	const char *b;
	size_t n;

	if (strchr(v, ','))
		return 1;
	for (b = strchr(v, '['); b; b = strchr(b + 1, '[')) {
		n = strspn(b + 1, "0123456789,-");
		if (n && b[1 + n] == ']')
			return 1;
	}
	return 0;
}

/* v with each "%n" replaced by the node's name, into buf; -1 if too long. */
int config_ini_subst(const char *v, const char *node, char *buf, size_t len)
{
	size_t o = 0, k;

	for (; *v; v++) {
		if (v[0] == '%' && v[1] == 'n') {
			k = strlen(node);
			if (o + k >= len)
				return -1;
			memcpy(buf + o, node, k);
			o += k;
			v++;
			continue;
		}
		if (o + 1 >= len)
			return -1;
		buf[o++] = *v;
	}
	buf[o] = '\0';
	return 0;
}

/* A key's values, one per node of the section, or one for them all. */
static int ini_node_values(struct config_parse *p, const char *name,
			   const char *value, struct hostlist *h)
{
	char why[128];
	int rc;

	h->names = NULL;
	h->n = 0;
	if (!ini_is_list(value))
		return 0;
	rc = hostlist_expand(value, (size_t)p->sec_n, h, why, sizeof(why));
	if (rc == -ENOMEM)
		return ini_oom(p);
	if (rc == -E2BIG || (!rc && h->n != 1 && h->n != (size_t)p->sec_n)) {
		snprintf(why, sizeof(why), rc ? "more" : "%zu", h->n);
		hostlist_free(h);
		return ini_fail(p, p->line,
				"%s: %s values for the %d nodes of [node %s] "
				"(give one for all, or one per node)",
				name, why, p->sec_n, p->sec_expr);
	}
	if (rc)
		return ini_fail(p, p->line, "%s: %s", name, why);
	return 0;
}

/*
 * A key of a [node ...] section, set on each of its nodes: a hostlist
 * value gives them one value each, in order (as Slurm pairs NodeName and
 * NodeAddr); a single value goes to all, "%n" standing for each name.
 */
static int ini_node_key(struct config_parse *p, const char *name,
			const char *value)
{
	char where[CONFIG_NAME_MAX + 8], val[CONFIG_LINE_MAX];
	struct config_node *n;
	struct hostlist h;
	int i, rc;

	rc = ini_node_values(p, name, value, &h);
	for (i = 0; !rc && i < p->sec_n; i++) {
		n = &p->cfg->nodes[p->sec_first + i];
		if (config_ini_subst(h.n > 1	? h.names[i]
				     : h.n == 1 ? h.names[0]
						: value,
				     n->name, val, sizeof(val))) {
			rc = ini_fail(p, p->line, "%s: too long for node '%s'",
				      name, n->name);
			break;
		}
		snprintf(where, sizeof(where), "[node %s]", n->name);
		rc = ini_set_key(p, config_nkeys, NK_MAX,
				 p->nseen[p->sec_first + i], n, name, val,
				 where);
	}
	hostlist_free(&h);
	return rc;
}

/* inih calls this for each key = value; p->sec says where it belongs. */
static int ini_on_key(void *user, const char *section, const char *name,
		      const char *value)
{
	struct config_parse *p = user;

	(void)section; /* inih's copy is cut at 49 bytes; see ini_on_header */
	switch (p->sec) {
	case SEC_GLOBAL:
		return !ini_set_key(p, config_gkeys, GK_MAX, p->gseen, p->cfg,
				    name, value, "[global]");
	case SEC_NODE:
		return !ini_node_key(p, name, value);
	default:
		ini_fail(p, p->line,
			 "%s: key before any [global] or [node NAME]", name);
		return 0;
	}
}

/* A node by name: a hash lookup, as the bootstrap does one per hello. */
int config_node_index(const struct config *cfg, const char *name)
{
	uint32_t h;
	int i;

	if (!cfg || !name || !cfg->index)
		return -1;
	h = util_fnv1a(name, strlen(name), UTIL_FNV1A_INIT) & cfg->index_mask;
	for (; (i = cfg->index[h]) >= 0; h = (h + 1) & cfg->index_mask)
		if (!strcmp(cfg->nodes[i].name, name))
			return i;
	return -1;
}

/* Put node i in its slot of the index (there is room). */
static void ini_index_put(struct config *cfg, int i)
{
	const char *name = cfg->nodes[i].name;
	uint32_t h = util_fnv1a(name, strlen(name), UTIL_FNV1A_INIT) &
		     cfg->index_mask;

	while (cfg->index[h] >= 0)
		h = (h + 1) & cfg->index_mask;
	cfg->index[h] = i;
}

/* Index node i, doubling the table first when it is half full. */
static int ini_index_add(struct config *cfg, int i)
{
	uint32_t size = cfg->index ? cfg->index_mask + 1 : 0;
	int *grown, k;

	if ((uint32_t)cfg->nnodes * 2 > size) {
		size = size ? size * 2 : 16;
		grown = malloc(size * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		memset(grown, 0xff, size * sizeof(*grown));
		free(cfg->index);
		cfg->index = grown;
		cfg->index_mask = size - 1;
		for (k = 0; k < i; k++)
			ini_index_put(cfg, k);
	}
	ini_index_put(cfg, i);
	return 0;
}

/* The nodes' strings, one after another: a name of cn00001 costs its 8
 * bytes, not a fixed array nor a malloc chunk of its own. */
struct config_strblk {
	struct config_strblk *next;
	size_t used, size;
	char s[];
};

#define CONFIG_STRBLK (16 * 1024)

/* Room for len bytes at a multiple of align (a power of two, at most 8:
 * a block's s[] is) in cfg's blocks; NULL without memory. */
static char *ini_blk_take(struct config *cfg, size_t len, size_t align)
{
	struct config_strblk *b = cfg->strs;
	size_t size = CONFIG_STRBLK, at = 0;
	char *d;

	if (b)
		at = (b->used + align - 1) & ~(align - 1);
	if (!b || at > b->size || b->size - at < len) {
		if (len > size - sizeof(*b))
			size = sizeof(*b) + len;
		b = malloc(size);
		if (!b)
			return NULL;
		b->next = cfg->strs;
		b->used = at = 0;
		b->size = size - sizeof(*b);
		cfg->strs = b;
	}
	d = b->s + at;
	b->used = at + len;
	return d;
}

/* s[0..len) and a NUL in cfg's blocks; NULL without memory. */
static const char *ini_str_put(struct config *cfg, const char *s, size_t len)
{
	char *d = ini_blk_take(cfg, len + 1, 1);

	if (!d)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

int config_ini_bootstrap_sa(struct config_parse *p, struct config_node *n,
			    const union config_sa *sa)
{
	p->nbsa[n - p->cfg->nodes] = *sa;
	return 0;
}

/* The same for a key's parser, which reports running out of memory. */
const char *config_ini_str(struct config_parse *p, const char *s, size_t len)
{
	const char *d = ini_str_put(p->cfg, s, len);

	if (!d)
		ini_oom(p);
	return d;
}

/* config_free's: every block. */
void config_ini_free_strs(struct config *cfg)
{
	struct config_strblk *b;

	while ((b = cfg->strs)) {
		cfg->strs = b->next;
		free(b);
	}
}

/* Nodes grow one at a time; their seen-lines rows grow alongside. */
static int ini_add_node(struct config_parse *p, const char *name)
{
	struct config *cfg = p->cfg;
	struct config_node *nodes, *n;
	int(*seen)[NK_MAX];
	union config_sa *bsa;
	int cap;

	if (cfg->nnodes == p->ncap) {
		cap = p->ncap ? 2 * p->ncap : 8;
		nodes = realloc(cfg->nodes, cap * sizeof(*nodes));
		if (!nodes)
			return ini_oom(p);
		cfg->nodes = nodes;
		seen = realloc(p->nseen, cap * sizeof(*seen));
		if (!seen)
			return ini_oom(p);
		p->nseen = seen;
		bsa = realloc(p->nbsa, cap * sizeof(*bsa));
		if (!bsa)
			return ini_oom(p);
		p->nbsa = bsa;
		p->ncap = cap;
	}
	n = &cfg->nodes[cfg->nnodes];
	memset(n, 0, sizeof(*n));
	memset(p->nseen[cfg->nnodes], 0, sizeof(p->nseen[0]));
	n->name = ini_str_put(cfg, name, strlen(name));
	if (!n->name)
		return ini_oom(p);
	n->line = p->line;
	cfg->nnodes++;
	if (ini_index_add(cfg, cfg->nnodes - 1))
		return ini_oom(p);
	return 0;
}

/* [node NAME]: a name that may be a directory, and only once. */
static int ini_node_header(struct config_parse *p, const char *name)
{
	const char *why;
	int i;

	why = util_name_problem(name);
	if (why)
		return ini_fail(p, p->line, "node name '%s' %s", name, why);
	if (!strcmp(name, CONFIG_NAME_ALL))
		return ini_fail(p, p->line,
				"node name '%s' is reserved (MOUNT/%s/ sends "
				"to every node)",
				name, name);
	i = config_node_index(p->cfg, name);
	if (i >= 0)
		return ini_fail(p, p->line,
				"duplicate node '%s' (first at line %d)", name,
				p->cfg->nodes[i].line);
	return ini_add_node(p, name);
}

/* [node NAME], or [node cn[001-064]]: one node per name of the list. */
static int ini_node_section(struct config_parse *p, const char *expr)
{
	struct hostlist h;
	char why[128];
	size_t i;
	int rc;

	p->sec = SEC_NODE;
	p->sec_first = p->cfg->nnodes;
	p->sec_n = 1;
	snprintf(p->sec_expr, sizeof(p->sec_expr), "%s", expr);
	if (!strpbrk(expr, "[,")) /* one name: the name rule's own words */
		return ini_node_header(p, expr);
	rc = hostlist_expand(expr, CONFIG_MAX_NODES, &h, why, sizeof(why));
	if (rc == -ENOMEM)
		return ini_oom(p);
	if (rc == -E2BIG)
		return ini_fail(p, p->line,
				"[node %s] names more than %d nodes", expr,
				CONFIG_MAX_NODES);
	if (rc)
		return ini_fail(p, p->line, "node name '%s': %s", expr, why);
	for (i = 0; !rc && i < h.n; i++)
		rc = ini_node_header(p, h.names[i]);
	p->sec_n = (int)i;
	hostlist_free(&h);
	return rc;
}

/* The ']' that closes the header "[...": brackets of a hostlist nest in
 * it ("[node cn[1-4]]"). */
static char *ini_header_close(char *s)
{
	int depth = 0;

	for (; *s; s++) {
		if (*s == '[')
			depth++;
		else if (*s == ']' && !--depth)
			return s;
	}
	return NULL;
}

/* A "[...]" line, trimmed: [global] or [node NAME], each only once. */
static int ini_on_header(struct config_parse *p, char *s)
{
	char *close, *name, *end;

	close = ini_header_close(s);
	if (!close)
		return ini_fail(p, p->line, "section header without ']'");
	end = (char *)config_num_skip_blanks(close + 1);
	if (*end && *end != ';' && *end != '#')
		return ini_fail(p, p->line, "junk after section header: '%s'",
				end);
	name = (char *)config_num_skip_blanks(s + 1);
	while (close > name && (close[-1] == ' ' || close[-1] == '\t'))
		close--;
	*close = '\0';

	if (!strcmp(name, "global")) {
		if (p->global_line)
			return ini_fail(p, p->line,
					"duplicate [global] (first at line %d)",
					p->global_line);
		p->global_line = p->line;
		p->sec = SEC_GLOBAL;
		return 0;
	}
	if (strncmp(name, "node", 4) ||
	    (name[4] && name[4] != ' ' && name[4] != '\t'))
		return ini_fail(
			p, p->line,
			"unknown section [%s]; use [global] or [node NAME]",
			name);
	return ini_node_section(p, config_num_skip_blanks(name + 4));
}

/*
 * inih's reader: one whole line per call, so p->line is the line of every
 * ini_on_key call.  Leading blanks go, which turns off inih's continuation
 * lines (an indented "port = 1" would otherwise extend the key above), and
 * headers are taken out: inih sees a blank line instead.
 */
static char *ini_next_line(char *buf, int num, void *stream)
{
	struct config_parse *p = stream;
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
		ini_fail(p, p->line, "line longer than %d bytes", num - 2);
		return NULL;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (buf[0] == '[') {
		ini_on_header(p, buf);
		len = 0;
	}
	buf[len] = '\n';
	buf[len + 1] = '\0';
	return buf;
}

/* The later of two lines, for conflicts between keys. */
static int ini_later(int a, int b)
{
	return a > b ? a : b;
}

/*
 * A key's line as an offset from its node's header, which fits the spare
 * bytes of struct config_node; 0 (the header's line) when it does not.
 */
static uint16_t ini_dline(int header, int key)
{
	return key > header && key - header <= UINT16_MAX ? key - header : 0;
}

/* A node's defaults come from other keys, so they wait for the end. */
static int ini_finish_node(struct config_parse *p, int i)
{
	struct config *cfg = p->cfg;
	struct config_node *n = &cfg->nodes[i];
	int *seen = p->nseen[i];

	if (!seen[NK_ADDR])
		return ini_fail(p, n->line, "node '%s' has no addr", n->name);
	if (!seen[NK_DELIVERY])
		n->delivery = cfg->delivery;
	if (!seen[NK_BOOTSTRAP]) {
		if (n->addr_sa.ss_family == AF_IB)
			return ini_fail(p, n->line,
					"node '%s': a GID addr needs bootstrap",
					n->name);
		config_addr_default_bootstrap(n);
	} else if (!config_addr_bootstrap_is_addr(n, &p->nbsa[i])) {
		n->bootstrap_own = (union config_sa *)ini_blk_take(
			cfg, sizeof(*n->bootstrap_own), 8);
		if (!n->bootstrap_own)
			return ini_oom(p);
		*n->bootstrap_own = p->nbsa[i];
	}
	n->addr_dline = ini_dline(n->line, seen[NK_ADDR]);
	n->bootstrap_dline = seen[NK_BOOTSTRAP]
				     ? ini_dline(n->line, seen[NK_BOOTSTRAP])
				     : n->addr_dline;
	return 0;
}

/*
 * Two daemons cannot listen on one endpoint: each node's against those
 * before it, through a hash of the endpoints (a 10,000-node config is
 * not 50 million comparisons).  slots: a power of two above nnodes.
 */
static int ini_check_endpoints(struct config_parse *p, int *slot, uint32_t mask)
{
	struct config *cfg = p->cfg;
	struct config_node *n, *o;
	uint32_t h;
	int i;

	for (i = 0; i < cfg->nnodes; i++) {
		n = &cfg->nodes[i];
		h = config_addr_bootstrap_hash(n) & mask;
		for (; slot[h] >= 0; h = (h + 1) & mask) {
			o = &cfg->nodes[slot[h]];
			if (config_addr_same_bootstrap(n, o))
				return ini_fail(
					p,
					ini_later(p->nseen[i][NK_BOOTSTRAP],
						  n->line),
					"node '%s' reuses bootstrap %s:%u of "
					"'%s'",
					n->name, n->bootstrap_host,
					n->bootstrap_port, o->name);
		}
		slot[h] = i;
	}
	return 0;
}

/* The endpoint check with a table of its own. */
static int ini_endpoints(struct config_parse *p)
{
	uint32_t mask = 15;
	int *slot, rc;

	while (mask < 2 * (uint32_t)p->cfg->nnodes)
		mask = mask * 2 + 1;
	slot = malloc((mask + 1) * sizeof(*slot));
	if (!slot)
		return ini_oom(p);
	memset(slot, 0xff, (mask + 1) * sizeof(*slot));
	rc = ini_check_endpoints(p, slot, mask);
	free(slot);
	return rc;
}

/*
 * The group follows the qkey wherever its line is, so it is defaulted
 * here.  A controlled Q_Key (bit 31) may be replaced by the QP's own on
 * sending, and a group needs every member's datagrams under one qkey.
 */
static int ini_finish_mcast(struct config_parse *p)
{
	struct config *cfg = p->cfg;

	if (!p->gseen[GK_MCAST_GROUP])
		config_addr_mcast_default(cfg);
	if (cfg->multicast != MCAST_NO && (cfg->qkey & 0x80000000u))
		return ini_fail(p,
				p->gseen[GK_QKEY] ? p->gseen[GK_QKEY] : p->line,
				"qkey: 0x%08x has bit 31 set, a controlled "
				"Q_Key, which an HCA may replace with the "
				"QP's own: multicast needs one qkey on every "
				"node (clear the bit, or set multicast = no)",
				cfg->qkey);
	return 0;
}

/*
 * bootstrap = multicast announces on the group, so it needs one.  Its
 * start-up announces span announce_interval; unset, that is 3 s, or a
 * third of a shorter peer_timeout, so that a node is known everywhere
 * well before a write to it would give up.
 */
static int ini_finish_bootstrap(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	const int *g = p->gseen;

	if (!g[GK_ANNOUNCE_INTERVAL] &&
	    cfg->announce_interval_ms > cfg->peer_timeout_ms / 3)
		cfg->announce_interval_ms = cfg->peer_timeout_ms / 3 > 10
						    ? cfg->peer_timeout_ms / 3
						    : 10;
	if (cfg->bootstrap != BOOTSTRAP_MULTICAST)
		return 0;
	if (cfg->multicast == MCAST_NO)
		return ini_fail(p, ini_later(g[GK_BOOTSTRAP], g[GK_MULTICAST]),
				"bootstrap = multicast announces on the "
				"group, and multicast = no turns it off");
	return 0;
}

/*
 * memory_limit when the file does not set it: an eighth of the machine's
 * memory, which leaves the rest to the applications reading the queues
 * and to the page cache, but never below one full channel (queue_limit),
 * nor below 64 MiB when the machine cannot say.
 */
static uint64_t ini_memory_default(const struct config *cfg)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	uint64_t m = 64 * MiB;

	if (pages > 0 && size > 0)
		m = (uint64_t)pages * (uint64_t)size / 8;
	return m > cfg->queue_limit ? m : cfg->queue_limit;
}

/* memory_limit: derived when unset; set, it must hold one message. */
static int ini_finish_memory(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	char l[32], m[32];

	if (!p->gseen[GK_MEMORY_LIMIT])
		cfg->memory_limit = ini_memory_default(cfg);
	if (cfg->memory_limit >= cfg->max_message)
		return 0;
	return ini_fail(
		p,
		ini_later(p->gseen[GK_MEMORY_LIMIT], p->gseen[GK_MAX_MESSAGE]),
		"memory_limit %s is below max_message %s",
		config_num_fmt_size(cfg->memory_limit, l, sizeof(l)),
		config_num_fmt_size(cfg->max_message, m, sizeof(m)));
}

/*
 * The certificate keys go together: ca with cert and key, cert, key and
 * crl only with a ca.  Absolute paths, for secret_file's reason (below).
 */
static int ini_finish_certs(struct config_parse *p)
{
	static const int keys[] = {GK_CA, GK_CERT, GK_KEY, GK_CRL};
	struct config *cfg = p->cfg;
	const char *path;
	const int *g = p->gseen;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		cfg->cert_lines[i] = g[keys[i]];
		path = (const char *)cfg + config_gkeys[keys[i]].off;
		if (g[keys[i]] && path[0] != '/')
			return ini_fail(p, g[keys[i]],
					"%s: '%s' is not an absolute path",
					config_gkeys[keys[i]].name, path);
		if (g[keys[i]] && i && !g[GK_CA])
			return ini_fail(p, g[keys[i]],
					"%s without ca: the certificate keys "
					"need the cluster CA",
					config_gkeys[keys[i]].name);
	}
	if (!g[GK_CA])
		return 0;
	if (!g[GK_CERT] || !g[GK_KEY])
		return ini_fail(p, g[GK_CA],
				"ca without %s: a node with a CA needs its own "
				"certificate and key",
				g[GK_CERT] ? "key" : "cert");
	return 0;
}

/*
 * One secret, at a line config.c's checks of the file can name; a
 * secret_file is opened by the daemon, whose working directory is /
 * under systemd, so a relative path would name another file there than
 * in the admin's shell: refused.
 */
static int ini_finish_secret(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	const int *g = p->gseen;

	if (g[GK_SECRET] && g[GK_SECRET_FILE])
		return ini_fail(p, ini_later(g[GK_SECRET], g[GK_SECRET_FILE]),
				"secret and secret_file are both set");
	cfg->secret_line = g[GK_SECRET] ? g[GK_SECRET] : g[GK_SECRET_FILE];
	if (g[GK_SECRET_FILE] && cfg->secret_file[0] != '/')
		return ini_fail(p, g[GK_SECRET_FILE],
				"secret_file: '%s' is not an absolute path",
				cfg->secret_file);
	return 0;
}

/* What no single line shows: defaults from other keys, and conflicts. */
static int ini_finish(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	const int *g = p->gseen;
	char q[32], m[32];
	int i;

	if (!cfg->nnodes)
		return ini_fail(p, p->line,
				"no [node NAME] section in the file");
	for (i = 0; i < cfg->nnodes; i++)
		if (ini_finish_node(p, i))
			return p->rc;
	if (ini_endpoints(p))
		return p->rc;
	if (ini_finish_secret(p) || ini_finish_certs(p))
		return p->rc;
	if (cfg->queue_limit < cfg->max_message)
		return ini_fail(
			p, ini_later(g[GK_QUEUE_LIMIT], g[GK_MAX_MESSAGE]),
			"queue_limit %s is below max_message %s",
			config_num_fmt_size(cfg->queue_limit, q, sizeof(q)),
			config_num_fmt_size(cfg->max_message, m, sizeof(m)));
	if (ini_finish_memory(p) || ini_finish_mcast(p))
		return p->rc;
	return ini_finish_bootstrap(p);
}

/* The nodes grew by doubling: give back the room the last doubling left
 * (up to half the array, at 144 bytes a node). */
static void ini_fit_nodes(struct config *cfg)
{
	struct config_node *fit;

	if (!cfg->nnodes)
		return;
	fit = realloc(cfg->nodes, cfg->nnodes * sizeof(*fit));
	if (fit)
		cfg->nodes = fit;
}

/* The core both loaders share; cfg is defaulted and named already. */
int config_ini_parse(const char *text, const char *name, struct config *cfg,
		     char *err, size_t errlen)
{
	struct config_parse p = {
		.cfg = cfg,
		.name = name,
		.pos = text,
		.err = err,
		.errlen = errlen,
	};
	int rc;

	rc = ini_parse_stream(ini_next_line, &p, ini_on_key, &p);
	if (rc < 0)
		ini_oom(&p);
	else if (rc > 0 && (!p.err_line || rc < p.err_line)) {
		p.err_line = 0; /* inih's syntax error came first */
		ini_fail(&p, rc,
			 "syntax error: expected KEY = VALUE or a [section]");
	}
	if (!p.err_line)
		ini_finish(&p);
	free(p.nseen);
	free(p.nbsa);
	ini_fit_nodes(cfg);
	return p.err_line ? p.rc : 0;
}
