/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * impostor: a node that holds another node's valid certificate and key
 * and says it is NAME, for tests/e2e/t_58_cert_impostor.sh.
 *
 *   impostor -c CONF -n NAME -C CERTNODE [-s PEER]... [-x PEER:QPN:GID]
 *            [-r D|L] [-t SECONDS] [-v]
 *
 * The daemon checks at start that its certificate names it (exit 2), so
 * a stock ibfs cannot be started as beta with gamma's certificate; an
 * attacker who stole gamma's key runs whatever code it likes.  This is
 * the daemon's own fabric (transport, route, bootstrap: fabric_open) as
 * NAME, with the certificate files the config gives CERTNODE (%n
 * expanded to CERTNODE) opened and checked as CERTNODE's: the one step
 * it skips is the self-check.  So it listens on NAME's bootstrap port,
 * answers whoever dials NAME, and signs every handshake with a key that
 * matches its certificate; only the name is wrong.
 *
 * -s PEER: every 100 ms, send PEER one message on channel "impostor", as
 * a write would: while PEER is not up, the send fails and asks the
 * bootstrap to meet it (dial).  Without -s it dials nobody.
 * -x PEER:QPN:GID: at start, install PEER at that QP (its .status
 * gives them) without any handshake and mark it up, as a rogue build
 * would, then send it FORCED messages on channel "forged": they reach
 * PEER's QP, whose source filter must drop them.
 *
 * -r D|L, with bootstrap = multicast, where a node challenges the one a
 * write wants, or the one that asks for it: play one side of
 * announce.h's exchange only.  D: challenge, never answer (a CHALLENGE
 * that comes goes on as an ANNOUNCE, its sender's address, which a -s
 * write then challenges), so the other node is L and judges our PROOF.
 * L: answer, never challenge (every ANNOUNCE, QUERY and MEET that comes
 * is dropped), so the other node is D and judges our CONFIRM.  The announce
 * thread's hook is wrapped at link time (-Wl,--wrap=tp_set_announce, Makefile)
 * to do it; the daemon's code is otherwise what runs.
 *
 * Runs SECONDS (default 30) or until SIGTERM, then prints per peer
 * "impostor NAME: PEER up=U sent=N failed=N" (up: whether PEER was ever
 * up here), "impostor NAME: forced PEER sent=N", and with multicast
 * "impostor NAME: heard announce=N challenge=N answer=N proof=N
 * confirm=N" (the announce messages that came, dropped ones too), and
 * exits 0;
 * 2 on a bad command line or config, 1 when the fabric does not open.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "announce.h"
#include "cert.h"
#include "config.h"
#include "fabric.h"
#include "log.h"
#include "peer.h"
#include "route.h"
#include "transport.h"

#define FORCED 20

struct im_args {
	const char *conf, *name, *certnode, *forge;
	double secs;
	int verbose;
	int nsend;
	const char *send[16];
};

/* Per peer: whether we send to it, and what came of it. */
struct im_peer {
	int send, ever_up;
	unsigned long sent, failed;
};

static volatile sig_atomic_t im_stop;

/* -r: 'D', 'L', or 0 for both; set before the fabric opens. */
static char im_role;
/* The announce thread's hook, which im_on_ann hands messages on to:
 * set before the real tp_set_announce publishes im_on_ann under the
 * transport's ann_lock, which the progress thread takes to call it. */
static void (*im_ann_fn)(void *arg, const struct ann_msg *m);
/* The announce messages that came, by kind (progress thread). */
static atomic_ulong im_heard[ANN_KIND_MAX];

void __real_tp_set_announce(struct tp *tp,
			    void (*fn)(void *arg, const struct ann_msg *m),
			    void *arg);
void __wrap_tp_set_announce(struct tp *tp,
			    void (*fn)(void *arg, const struct ann_msg *m),
			    void *arg);

/* Every announce message on the progress thread: counted, and handed to
 * the announce thread unless -r keeps us off its side of the exchange. */
static void im_on_ann(void *arg, const struct ann_msg *m)
{
	struct ann_msg as_ann;

	if (m->kind < ANN_KIND_MAX)
		atomic_fetch_add(&im_heard[m->kind], 1);
	if (im_role == 'D' && m->kind == ANN_CHALLENGE) {
		as_ann = *m;
		as_ann.kind = ANN_ANNOUNCE;
		im_ann_fn(arg, &as_ann);
		return;
	}
	if (im_role == 'L' && (m->kind == ANN_ANNOUNCE ||
			       m->kind == ANN_QUERY || m->kind == ANN_MEET))
		return;
	im_ann_fn(arg, m);
}

/* announce.c's tp_set_announce, linked here (--wrap): im_on_ann in
 * front of its hook. */
void __wrap_tp_set_announce(struct tp *tp,
			    void (*fn)(void *arg, const struct ann_msg *m),
			    void *arg)
{
	if (fn)
		im_ann_fn = fn;
	__real_tp_set_announce(tp, fn ? im_on_ann : NULL, arg);
}

/* Whatever a peer sends us (nobody should): taken and dropped. */
static int im_deliver(void *arg, struct peer *p, const char *chan, void *data,
		      size_t len)
{
	(void)arg;
	(void)p;
	(void)chan;
	(void)len;
	free(data);
	return 0;
}

static void im_on_signal(int sig)
{
	(void)sig;
	im_stop = 1;
}

static void im_usage(void)
{
	fprintf(stderr, "usage: impostor -c CONF -n NAME -C CERTNODE "
			"[-s PEER]... [-x PEER:QPN:GID] [-r D|L] [-t SECONDS] "
			"[-v]\n");
	exit(2);
}

static void im_options(struct im_args *a, int argc, char *argv[])
{
	int opt;

	while ((opt = getopt(argc, argv, "c:n:C:s:x:r:t:v")) != -1) {
		switch (opt) {
		case 'c':
			a->conf = optarg;
			break;
		case 'n':
			a->name = optarg;
			break;
		case 'C':
			a->certnode = optarg;
			break;
		case 's':
			if (a->nsend ==
			    (int)(sizeof(a->send) / sizeof(*a->send)))
				im_usage();
			a->send[a->nsend++] = optarg;
			break;
		case 'x':
			a->forge = optarg;
			break;
		case 'r':
			if (strcmp(optarg, "D") && strcmp(optarg, "L"))
				im_usage();
			im_role = optarg[0];
			break;
		case 't':
			a->secs = atof(optarg);
			break;
		case 'v':
			a->verbose = 1;
			break;
		default:
			im_usage();
		}
	}
	if (!a->conf || !a->name || !a->certnode)
		im_usage();
}

/* The config as NAME, and CERTNODE's certificate files opened as
 * CERTNODE's: 0, or 2 with the reason printed. */
static int im_config(const struct im_args *a, struct config *cfg,
		     struct cert **cert)
{
	struct config_cert_paths pa;
	struct cert_files f;
	char err[CONFIG_ERR_MAX], why[CERT_WHY_MAX];

	if (config_load(a->conf, cfg, err, sizeof(err)))
		goto bad;
	if (config_select_local(cfg, a->certnode, err, sizeof(err)) ||
	    config_cert_paths(cfg, &pa, err, sizeof(err)) ||
	    config_select_local(cfg, a->name, err, sizeof(err)) ||
	    config_resolve_local(cfg, err, sizeof(err)))
		goto bad_cfg;
	if (!pa.ca[0]) {
		snprintf(err, sizeof(err), "%s: no ca: nothing to impersonate",
			 a->conf);
		goto bad_cfg;
	}
	f = (struct cert_files){pa.ca, pa.cert, pa.key, pa.crl};
	if (cert_open(cert, &f, a->certnode, why, sizeof(why))) {
		snprintf(err, sizeof(err), "%s's certificate: %s", a->certnode,
			 why);
		goto bad_cfg;
	}
	return 0;
bad_cfg:
	config_free(cfg);
bad:
	fprintf(stderr, "impostor: %s\n", err);
	return 2;
}

/* -x PEER:QPN:GID: PEER installed there and marked up, no handshake. */
static int im_force(struct tp *tp, const struct config *cfg, struct peer *peers,
		    const char *spec, int *idx)
{
	const struct tp_info *ti = tp_info(tp);
	char name[CONFIG_NAME_MAX], gid[64];
	struct peer_addr addr = {0};
	struct ibv_ah_attr attr;
	struct ibv_ah *ah;
	unsigned long qpn;
	int i, rc;

	if (sscanf(spec, "%63[^:]:%lu:%63s", name, &qpn, gid) != 3 ||
	    (i = config_node_index(cfg, name)) < 0 || i == cfg->local ||
	    inet_pton(AF_INET6, gid, &addr.gid) != 1) {
		fprintf(stderr, "impostor: -x %s: want PEER:QPN:GID\n", spec);
		return -EINVAL;
	}
	addr.qpn = (uint32_t)qpn;
	addr.qkey = cfg->qkey;
	addr.mtu = ti->mtu;
	addr.link_layer = (uint8_t)ti->link_layer;
	addr.boot = 1;
	route_gid_to_ah_attr(&addr, (uint8_t)ti->port, (uint8_t)ti->gid_index,
			     ti->link_layer == IBV_LINK_LAYER_ETHERNET, &attr);
	ah = ibv_create_ah(tp_pd(tp), &attr);
	if (!ah)
		return -errno;
	rc = tp_peer_up(tp, &peers[i], &addr, ah, ROUTE_GID);
	if (rc) {
		ibv_destroy_ah(ah);
		return rc;
	}
	/* what the probe would do once PEER answered: it never will */
	pthread_mutex_lock(&peers[i].lock);
	peers[i].up = 1;
	pthread_mutex_unlock(&peers[i].lock);
	*idx = i;
	return 0;
}

/* Send to every -s peer until the deadline or a signal. */
static void im_run(struct tp *tp, const struct config *cfg, struct peer *peers,
		   struct im_peer *ip, double secs)
{
	struct timespec t0, t;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (i = 0; i < cfg->nnodes; i++) {
			if (peer_is_up(&peers[i]))
				ip[i].ever_up = 1;
			if (!ip[i].send)
				continue;
			if (tp_send(tp, &peers[i], "impostor", "x", 1))
				ip[i].failed++;
			else
				ip[i].sent++;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (im_stop || (double)(t.tv_sec - t0.tv_sec) +
					       (t.tv_nsec - t0.tv_nsec) / 1e9 >=
				       secs)
			return;
		usleep(100000);
	}
}

/* The config, the fabric with CERTNODE's certificate as NAME; run;
 * report. */
int main(int argc, char *argv[])
{
	struct tp_ops ops = {.deliver = im_deliver};
	struct im_args a = {.secs = 30};
	struct im_peer *ip = NULL;
	struct fabric *fab = NULL;
	struct peer *peers = NULL;
	struct cert *cert = NULL;
	struct config cfg;
	unsigned long forced = 0;
	int i, rc, fidx = -1;

	im_options(&a, argc, argv);
	log_init("impostor", 1, a.verbose);
	signal(SIGTERM, im_on_signal);
	signal(SIGINT, im_on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (im_config(&a, &cfg, &cert))
		return 2;
	ip = calloc(cfg.nnodes, sizeof(*ip));
	rc = ip ? peer_table_open(&peers, &cfg) : -ENOMEM;
	if (rc)
		goto out;
	for (i = 0; i < a.nsend; i++) {
		int j = config_node_index(&cfg, a.send[i]);

		if (j < 0 || j == cfg.local) {
			fprintf(stderr, "impostor: -s %s: no such peer\n",
				a.send[i]);
			rc = -EINVAL;
			goto out;
		}
		ip[j].send = 1;
	}
	rc = fabric_open(&fab, &cfg, peers, cert, &ops, NULL);
	if (rc)
		goto out;
	printf("impostor %s: qpn %u, %s's certificate\n", a.name,
	       tp_info(fabric_tp(fab))->qpn, a.certnode);
	fflush(stdout);
	if (a.forge) {
		rc = im_force(fabric_tp(fab), &cfg, peers, a.forge, &fidx);
		if (rc)
			goto out;
		for (i = 0; i < FORCED; i++)
			forced += !tp_send(fabric_tp(fab), &peers[fidx],
					   "forged", "x", 1);
	}
	im_run(fabric_tp(fab), &cfg, peers, ip, a.secs);
	for (i = 0; i < cfg.nnodes; i++)
		if (i != cfg.local)
			printf("impostor %s: %s up=%d sent=%lu failed=%lu\n",
			       a.name, cfg.nodes[i].name, ip[i].ever_up,
			       ip[i].sent, ip[i].failed);
	if (fidx >= 0)
		printf("impostor %s: forced %s sent=%lu\n", a.name,
		       cfg.nodes[fidx].name, forced);
	if (im_ann_fn)
		printf("impostor %s: heard announce=%lu challenge=%lu "
		       "answer=%lu proof=%lu confirm=%lu\n",
		       a.name, atomic_load(&im_heard[ANN_ANNOUNCE]),
		       atomic_load(&im_heard[ANN_CHALLENGE]),
		       atomic_load(&im_heard[ANN_ANSWER]),
		       atomic_load(&im_heard[ANN_PROOF]),
		       atomic_load(&im_heard[ANN_CONFIRM]));
	fflush(stdout);
out:
	if (rc)
		fprintf(stderr, "impostor: %s\n", strerror(-rc));
	fabric_close(fab);
	if (peers)
		peer_table_close(peers, cfg.nnodes);
	cert_close(cert);
	free(ip);
	config_free(&cfg);
	return rc ? 1 : 0;
}
