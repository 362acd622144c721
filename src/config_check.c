/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ibfs -t's table: one row per node as the daemon expanded them, every
 * host name looked up (config_lookup_all, several at once) and shown with
 * what it resolves to now, "cn1-ib(10.0.0.1)" and
 * "cn1-ib:17515(10.0.0.1:17515)", or "(?)".  Then the names that do not
 * resolve, each at its key's FILE:LINE; when more than CHECK_ONE_BY_ONE
 * fail for one reason (a resolver that is down, a suffix that is wrong),
 * those are one line that names a few, as 512 lines that differ only in
 * the node would bury the one that differs.  The rows are flushed before
 * the first error, so that `ibfs -t 2>&1 | less` reads in order.
 * Then, with ca, the local node's certificates: good or why not, and the
 * days each has left.  The main thread only.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cert.h"
#include "config.h"
#include "util.h"

/* Failures of one reason told one by one, at most; and the names a line
 * that tells more of them shows. */
#define CHECK_ONE_BY_ONE  3
#define CHECK_NAMES_SHOWN 3

/* A name that did not resolve: node i's addr, or (bootstrap) its host. */
struct check_fail {
	int i;
	int bootstrap;
	const char *why;
	int group; /* index into the groups of failures alike */
};

/* Failures alike: the same key, the same reason. */
struct check_group {
	int first; /* index of its first failure */
	int count;
};

/* A sockaddr as host ([v6]) and, when port, ":port"; "?" when none. */
static const char *check_sockaddr(const struct sockaddr_storage *ss,
				  socklen_t len, int port, char *buf,
				  size_t buflen)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];
	const char *fmt;

	if (!len ||
	    getnameinfo((const struct sockaddr *)ss, len, host, sizeof(host),
			serv, sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV))
		return "?";
	if (port)
		fmt = strchr(host, ':') ? "[%s]:%s" : "%s:%s";
	else
		fmt = "%s";
	snprintf(buf, buflen, fmt, host, serv);
	return buf;
}

/* Node i's row: ADDR and BOOTSTRAP as written when numeric, a name with
 * what it resolved to. */
static void check_row(const struct config *cfg, int i,
		      const struct config_lookup *l, FILE *out)
{
	static const char *const delivery[] = {
		[DELIVERY_DATAGRAM] = "datagram",
		[DELIVERY_RELIABLE] = "reliable",
	};
	const struct config_node *n = &cfg->nodes[i];
	char buf[NI_MAXHOST + NI_MAXSERV + 4];
	/* room for "addr(resolved)" and "host:port(resolved)" whole */
	char a[CONFIG_HOST_MAX + 1 + sizeof(buf) + 2];
	char b[CONFIG_HOST_MAX + 1 + 8 + sizeof(buf)];
	union config_sa bsa;

	config_node_bootstrap_sa(n, &bsa);
	if (n->addr_sa.ss_family == AF_UNSPEC)
		snprintf(a, sizeof(a), "%s(%s)", n->addr,
			 check_sockaddr(&l->addr, l->addr_len, 0, buf,
					sizeof(buf)));
	else
		snprintf(a, sizeof(a), "%s", n->addr);
	if (bsa.ss_family == AF_UNSPEC)
		snprintf(b, sizeof(b), "%s:%u(%s)", n->bootstrap_host,
			 n->bootstrap_port,
			 check_sockaddr(&l->bootstrap, l->bootstrap_len, 1, buf,
					sizeof(buf)));
	else
		snprintf(b, sizeof(b), "%s",
			 check_sockaddr(&l->bootstrap, l->bootstrap_len, 1, buf,
					sizeof(buf)));
	fprintf(out, "%-16s %-24s %-28s %s\n", n->name, a, b,
		(unsigned)n->delivery < ARRAY_SIZE(delivery)
			? delivery[n->delivery]
			: "?");
}

/*
 * The names that failed, in node order, into f (room for two a node); a
 * bootstrap host that is the addr failed with it and is told once.
 */
static int check_fails(const struct config *cfg, const struct config_lookup *l,
		       struct check_fail *f)
{
	const struct config_node *n;
	int i, nf = 0;

	for (i = 0; i < cfg->nnodes; i++) {
		n = &cfg->nodes[i];
		if (l[i].addr_why)
			f[nf++] = (struct check_fail){i, 0, l[i].addr_why, 0};
		if (l[i].bootstrap_why &&
		    !(l[i].addr_why && !strcmp(n->bootstrap_host, n->addr)))
			f[nf++] = (struct check_fail){i, 1, l[i].bootstrap_why,
						      0};
	}
	return nf;
}

/* Whether two failures are of one kind: the same key, the same reason. */
static int check_alike(const struct check_fail *a, const struct check_fail *b)
{
	return a->bootstrap == b->bootstrap && !strcmp(a->why, b->why);
}

/* Put each failure in its group (few: one a reason); how many groups. */
static int check_group(struct check_fail *f, int nf, struct check_group *g)
{
	int k, j, ng = 0;

	for (k = 0; k < nf; k++) {
		for (j = 0; j < ng && !check_alike(&f[g[j].first], &f[k]); j++)
			;
		if (j == ng)
			g[ng++] = (struct check_group){k, 0};
		g[j].count++;
		f[k].group = j;
	}
	return ng;
}

/* The name f is about, as the config wrote it (with %n put in). */
static const char *check_host(const struct config *cfg,
			      const struct check_fail *f)
{
	const struct config_node *n = &cfg->nodes[f->i];

	return f->bootstrap ? n->bootstrap_host : n->addr;
}

/*
 * The failures of f[k]'s group, k its first, in one line: "FILE:LINE:
 * addr of 512 nodes does not resolve: a, b, c and 509 more (why)", at
 * the first one's line.
 */
static void check_say_many(const struct config *cfg, const struct check_fail *f,
			   int nf, int k, int count, FILE *errs)
{
	int j, shown = 0;

	fprintf(errs,
		"ibfs: %s:%d: %s of %d nodes does not resolve:", cfg->path,
		config_node_line(&cfg->nodes[f[k].i], f[k].bootstrap),
		f[k].bootstrap ? "bootstrap" : "addr", count);
	for (j = k; j < nf && shown < CHECK_NAMES_SHOWN; j++) {
		if (f[j].group != f[k].group)
			continue;
		fprintf(errs, "%s %s", shown ? "," : "",
			check_host(cfg, &f[j]));
		shown++;
	}
	fprintf(errs, " and %d more (%s)\n", count - shown, f[k].why);
}

/* Each failure on its own line, or its whole group in one when many. */
static void check_say(const struct config *cfg, const struct check_fail *f,
		      int nf, const struct check_group *g, FILE *errs)
{
	char msg[CONFIG_ERR_MAX];
	int k;

	for (k = 0; k < nf; k++) {
		if (g[f[k].group].count > CHECK_ONE_BY_ONE) {
			if (g[f[k].group].first == k)
				check_say_many(cfg, f, nf, k,
					       g[f[k].group].count, errs);
			continue;
		}
		config_resolve_msg(cfg, f[k].i, f[k].bootstrap, f[k].why, msg,
				   sizeof(msg));
		fprintf(errs, "ibfs: %s\n", msg);
	}
}

/* How many nodes have a failure among f. */
static int check_nodes_bad(const struct check_fail *f, int nf)
{
	int k, bad = 0;

	for (k = 0; k < nf; k++)
		bad += !k || f[k].i != f[k - 1].i;
	return bad;
}

int config_check(const struct config *cfg, FILE *out, FILE *errs)
{
	size_t most = 2 * (size_t)cfg->nnodes + 1;
	struct config_lookup *l;
	struct check_group *g;
	struct check_fail *f;
	int i, nf, bad = -ENOMEM;

	l = calloc(cfg->nnodes ? cfg->nnodes : 1, sizeof(*l));
	f = calloc(most, sizeof(*f));
	g = calloc(most, sizeof(*g));
	if (!l || !f || !g)
		goto out;
	config_lookup_all(cfg, l);
	fprintf(out, "%-16s %-24s %-28s %s\n", "NODE", "ADDR", "BOOTSTRAP",
		"DELIVERY");
	for (i = 0; i < cfg->nnodes; i++)
		check_row(cfg, i, &l[i], out);
	fflush(out);
	nf = check_fails(cfg, l, f);
	check_group(f, nf, g);
	check_say(cfg, f, nf, g, errs);
	bad = check_nodes_bad(f, nf);
out:
	free(l);
	free(f);
	free(g);
	return bad;
}

int config_cert_open(const struct config *cfg, struct cert **out, char *err,
		     size_t errlen)
{
	static const char *const keys[] = {"ca ", "cert ", "key ", "crl "};
	struct config_cert_paths pa;
	char why[CERT_WHY_MAX];
	struct cert_files f;
	size_t i, line = 0;
	int rc;

	*out = NULL;
	if (!cfg->ca[0])
		return 0;
	rc = config_cert_paths(cfg, &pa, err, errlen);
	if (rc)
		return rc;
	f = (struct cert_files){pa.ca, pa.cert, pa.key, pa.crl};
	rc = cert_open(out, &f, cfg->nodes[cfg->local].name, why, sizeof(why));
	if (!rc)
		return 0;
	/* cert_open's reason starts with the key whose file it is */
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (!strncmp(why, keys[i], strlen(keys[i])))
			line = i;
	snprintf(err, errlen, "%.200s:%d: %s", cfg->path, cfg->cert_lines[line],
		 why);
	return rc;
}

/* One certificate's row: who, and how many days it has left. */
static void check_expiry(const char *what, const struct cert_expiry *e,
			 time_t now, FILE *out)
{
	char date[16] = "?";
	struct tm tm;

	if (gmtime_r(&e->not_after, &tm))
		strftime(date, sizeof(date), "%Y-%m-%d", &tm);
	fprintf(out, "%s %s: %ld days left, until %s\n", what, e->subject,
		cert_days_left(e->not_after, now), date);
}

int config_check_certs(const struct config *cfg, FILE *out, FILE *errs)
{
	struct cert_expiry e[1 + CERT_CA_MAX];
	char err[CONFIG_ERR_MAX];
	struct cert *c;
	time_t now = time(NULL);
	int i, n;

	if (!cfg->ca[0])
		return 0;
	if (config_cert_open(cfg, &c, err, sizeof(err))) {
		fprintf(errs, "ibfs: %s\n", err);
		return 1;
	}
	n = cert_expiries(c, e, ARRAY_SIZE(e));
	for (i = 0; i < n; i++)
		check_expiry(i ? "ca" : "cert", &e[i], now, out);
	cert_close(c);
	return 0;
}
