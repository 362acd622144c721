/*
 * udchat: drive the UD engine without FUSE, for the transport e2e tests.
 *
 *   udchat -c CONF -n NAME [-s PEER:CHAN:SIZE:COUNT]... [-r EXPECTED]
 *          [-t SECONDS] [-p USEC] [-R] [-v]
 *
 * Opens config, peers, transport, route and bootstrap like the daemon,
 * waits until every peer is up, sends COUNT messages of SIZE bytes to PEER
 * on CHAN and receives, checking each message byte for byte.  A message of
 * at least 12 bytes starts with its number, length and the sender's wire
 * id; every other byte follows a pattern of (sender, number, offset), so
 * corruption, truncation and misattribution all show.  -R sends the
 * batches again whenever their peer comes up anew (it restarted).  Exits 0
 * once EXPECTED messages arrived intact and every send succeeded.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"
#include "config.h"
#include "log.h"
#include "peer.h"
#include "route.h"
#include "transport.h"
#include "wire.h"

#define UC_MAX_SPECS 32
#define UC_HDR	     12

/* One -s PEER:CHAN:SIZE:COUNT batch. */
struct uc_spec {
	char peer[CONFIG_NAME_MAX];
	char chan[CONFIG_NAME_MAX];
	size_t size;
	unsigned count;
	int idx;	     /* peer index */
	uint64_t epoch_sent; /* epoch the batch went out at; 0 = never */
};

struct uc {
	atomic_ulong rx_ok, rx_bad;
	unsigned long tx_ok, tx_fail;
	uint32_t next_k;
};

static volatile sig_atomic_t uc_stop;

/* The pattern byte at offset i of message k from sender id. */
static uint8_t uc_pat(uint32_t id, uint32_t k, size_t i)
{
	uint32_t x = id ^ (k * 0x9e3779b1u) ^ ((uint32_t)i * 0x85ebca6bu) ^
		     (uint32_t)(i >> 11);

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return (uint8_t)x;
}

/* Fill buf with message k of len bytes from sender id. */
static void uc_fill(uint8_t *buf, size_t len, uint32_t id, uint32_t k)
{
	uint32_t v;
	size_t i = 0;

	if (len >= UC_HDR) {
		v = htobe32(k);
		memcpy(buf, &v, 4);
		v = htobe32((uint32_t)len);
		memcpy(buf + 4, &v, 4);
		v = htobe32(id);
		memcpy(buf + 8, &v, 4);
		i = UC_HDR;
	} else {
		k = 0;
	}
	for (; i < len; i++)
		buf[i] = uc_pat(id, k, i);
}

/* Check a received message against what sender id must have sent. */
static int uc_check(const uint8_t *buf, size_t len, uint32_t id, char *why,
		    size_t whylen)
{
	uint32_t k = 0, v;
	size_t i = 0;

	if (len >= UC_HDR) {
		memcpy(&v, buf, 4);
		k = be32toh(v);
		memcpy(&v, buf + 4, 4);
		if (be32toh(v) != len) {
			snprintf(why, whylen, "length %zu, header says %u", len,
				 be32toh(v));
			return -1;
		}
		memcpy(&v, buf + 8, 4);
		if (be32toh(v) != id) {
			snprintf(why, whylen, "sender id 0x%08x, want 0x%08x",
				 be32toh(v), id);
			return -1;
		}
		i = UC_HDR;
	}
	for (; i < len; i++) {
		if (buf[i] != uc_pat(id, k, i)) {
			snprintf(why, whylen,
				 "message %u (%zu bytes) differs at offset %zu",
				 k, len, i);
			return -1;
		}
	}
	return 0;
}

/* The engine's deliver callback: verify, count, free. */
static int uc_deliver(void *arg, struct peer *p, const char *chan, void *data,
		      size_t len)
{
	struct uc *uc = arg;
	char why[160];

	if (uc_check(data, len, p->id, why, sizeof(why))) {
		atomic_fetch_add(&uc->rx_bad, 1);
		log_warnx("udchat: BAD message from %s on %s: %s",
			  p->conf->name, chan, why);
	} else {
		atomic_fetch_add(&uc->rx_ok, 1);
		log_debug("udchat: %zu bytes from %s on %s", len, p->conf->name,
			  chan);
	}
	free(data);
	return 0;
}

/* Seconds since an arbitrary start, as a double, for deadlines. */
static double uc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Parse PEER:CHAN:SIZE:COUNT. */
static int uc_parse_spec(const char *arg, struct uc_spec *s)
{
	char buf[256], *f[4], *save = NULL, *t;
	uint64_t size;
	int i;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (i = 0, t = strtok_r(buf, ":", &save); t && i < 4;
	     t = strtok_r(NULL, ":", &save))
		f[i++] = t;
	if (i != 4 || t)
		return -EINVAL;
	snprintf(s->peer, sizeof(s->peer), "%s", f[0]);
	snprintf(s->chan, sizeof(s->chan), "%s", f[1]);
	if (config_parse_size(f[2], &size))
		return -EINVAL;
	s->size = size;
	s->count = (unsigned)strtoul(f[3], NULL, 0);
	return 0;
}

/* Whether peer i is up, read under its lock; its epoch in *epoch. */
static int uc_peer_up(struct peer *p, uint64_t *epoch)
{
	int up;

	pthread_mutex_lock(&p->lock);
	up = p->up;
	if (epoch)
		*epoch = p->epoch;
	pthread_mutex_unlock(&p->lock);
	return up;
}

/* Send one batch; messages are numbered across batches. */
static int uc_send_batch(struct uc *uc, struct tp *tp, struct peer *peers,
			 int self, struct uc_spec *s, unsigned pace_us)
{
	struct peer *p = &peers[s->idx];
	uint8_t *buf = malloc(s->size ? s->size : 1);
	unsigned i;
	int rc = 0, tries;

	if (!buf)
		return -ENOMEM;
	for (i = 0; i < s->count; i++) {
		uc_fill(buf, s->size, peers[self].id, uc->next_k++);
		for (tries = 0; tries < 100; tries++) {
			rc = tp_send(tp, p, s->chan, buf, s->size);
			if (rc != -ENOTCONN)
				break;
			usleep(50000); /* the peer is between sessions */
		}
		if (rc) {
			uc->tx_fail++;
			log_warnx("udchat: send %zu bytes to %s: %s", s->size,
				  s->peer, strerror(-rc));
		} else {
			uc->tx_ok++;
		}
		if (pace_us)
			usleep(pace_us);
	}
	free(buf);
	log_info("udchat: sent %u x %zu bytes to %s on %s", s->count, s->size,
		 s->peer, s->chan);
	return rc;
}

/* Counters of every peer and the totals, for the test log. */
static void uc_print_counters(const struct config *cfg, struct peer *peers,
			      struct tp *tp, struct uc *uc)
{
	int i, d;

	for (i = 0; i <= cfg->nnodes; i++) {
		struct peer_counters *c =
			i < cfg->nnodes ? &peers[i].cnt : tp_totals(tp);
		char drops[512];
		size_t off = 0;

		drops[0] = '\0';
		for (d = 0; d < DROP_MAX; d++)
			off += snprintf(drops + off, sizeof(drops) - off,
					" drop_%s=%" PRIuFAST64,
					peer_drop_names[d],
					atomic_load(&c->drops[d]));
		printf("counters %s: msgs_tx=%" PRIuFAST64
		       " bytes_tx=%" PRIuFAST64 " msgs_rx=%" PRIuFAST64
		       " bytes_rx=%" PRIuFAST64 " ah_resolutions=%" PRIuFAST64
		       "%s\n",
		       i < cfg->nnodes ? cfg->nodes[i].name : "total",
		       atomic_load(&c->msgs_tx), atomic_load(&c->bytes_tx),
		       atomic_load(&c->msgs_rx), atomic_load(&c->bytes_rx),
		       atomic_load(&c->ah_resolutions), drops);
	}
	printf("udchat %s: rx_ok=%lu rx_bad=%lu tx_ok=%lu tx_fail=%lu\n",
	       cfg->nodes[cfg->local].name, atomic_load(&uc->rx_ok),
	       atomic_load(&uc->rx_bad), uc->tx_ok, uc->tx_fail);
	fflush(stdout);
}

/* SIGTERM/SIGINT: leave the loops and close everything in order. */
static void uc_on_signal(int sig)
{
	uc_stop = 1;
}

/* Print the usage line and exit 2. */
static void uc_usage(void)
{
	fprintf(stderr,
		"usage: udchat -c CONF -n NAME [-s PEER:CHAN:SIZE:COUNT]... "
		"[-r EXPECTED] [-t SECONDS] [-p USEC] [-R] [-v]\n");
	exit(2);
}

int main(int argc, char *argv[])
{
	static struct uc_spec specs[UC_MAX_SPECS];
	struct tp_ops ops = {.deliver = uc_deliver};
	const char *conf = NULL, *name = NULL;
	struct config cfg;
	struct peer *peers = NULL;
	struct tp *tp = NULL;
	struct route *rt = NULL;
	struct bootstrap *bs = NULL;
	struct uc uc;
	char err[CONFIG_ERR_MAX];
	unsigned long expect = 0;
	unsigned pace_us = 0;
	double secs = 60, deadline;
	int nspecs = 0, resend = 0, verbose = 0, opt, rc, i, status = 1;
	const char *why = "?";

	memset(&uc, 0, sizeof(uc));
	while ((opt = getopt(argc, argv, "c:n:s:r:t:p:Rv")) != -1) {
		switch (opt) {
		case 'c':
			conf = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case 's':
			if (nspecs == UC_MAX_SPECS ||
			    uc_parse_spec(optarg, &specs[nspecs]))
				uc_usage();
			nspecs++;
			break;
		case 'r':
			expect = strtoul(optarg, NULL, 0);
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'p':
			pace_us = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'R':
			resend = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			uc_usage();
		}
	}
	if (!conf || !name)
		uc_usage();
	log_init("udchat", 1, verbose);
	signal(SIGTERM, uc_on_signal);
	signal(SIGINT, uc_on_signal);
	signal(SIGPIPE, SIG_IGN);
	deadline = uc_now() + secs;

	if (config_load(conf, &cfg, err, sizeof(err)) ||
	    config_select_local(&cfg, name, err, sizeof(err))) {
		fprintf(stderr, "udchat: %s\n", err);
		return 2;
	}
	for (i = 0; i < nspecs; i++) {
		specs[i].idx = config_node_index(&cfg, specs[i].peer);
		if (specs[i].idx < 0) {
			fprintf(stderr, "udchat: no node %s\n", specs[i].peer);
			return 2;
		}
	}
	rc = peer_table_open(&peers, &cfg);
	if (rc)
		goto out_cfg;
	rc = tp_open(&tp, &cfg, peers, &ops, &uc);
	if (rc)
		goto out_peers;
	rc = route_open(&rt, tp, &cfg);
	if (rc)
		goto out_tp;
	rc = bootstrap_open(&bs, &cfg, peers, tp, rt);
	if (rc)
		goto out_route;
	printf("udchat %s: qpn 0x%06x mtu %zu\n", name, tp_info(tp)->qpn,
	       tp_info(tp)->mtu_bytes);
	fflush(stdout);

	/* Wait until every peer is up. */
	for (;;) {
		int all = 1;

		for (i = 0; i < cfg.nnodes; i++)
			all &= uc_peer_up(&peers[i], NULL);
		if (all)
			break;
		if (uc_stop || uc_now() > deadline) {
			why = "peers not up in time";
			goto out_bs;
		}
		usleep(20000);
	}
	log_info("udchat: all %d peers up", cfg.nnodes);

	/* Send (again on re-up with -R) and receive until done. */
	for (;;) {
		uint64_t ep;

		for (i = 0; i < nspecs; i++) {
			struct uc_spec *s = &specs[i];

			if (!uc_peer_up(&peers[s->idx], &ep))
				continue;
			if (s->epoch_sent && (!resend || ep == s->epoch_sent))
				continue;
			s->epoch_sent = ep;
			uc_send_batch(&uc, tp, peers, cfg.local, s, pace_us);
		}
		if (atomic_load(&uc.rx_ok) + atomic_load(&uc.rx_bad) >=
			    expect &&
		    !resend)
			break;
		if (resend && atomic_load(&uc.rx_ok) >= expect)
			break;
		if (uc_stop) {
			why = "stopped by a signal";
			goto out_bs;
		}
		if (uc_now() > deadline) {
			why = "expected messages did not arrive in time";
			goto out_bs;
		}
		usleep(5000);
	}
	if (atomic_load(&uc.rx_bad))
		why = "corrupt messages arrived";
	else if (uc.tx_fail)
		why = "sends failed";
	else
		status = 0;
	/* What we sent last may still be on its way out of the HCA. */
	if (uc.tx_ok)
		usleep(300000);
out_bs:
	uc_print_counters(&cfg, peers, tp, &uc);
	if (status)
		printf("udchat %s: FAIL: %s (rx_ok %lu of %lu)\n", name, why,
		       atomic_load(&uc.rx_ok), expect);
	else
		printf("udchat %s: OK\n", name);
	fflush(stdout);
	bootstrap_close(bs);
out_route:
	route_close(rt);
out_tp:
	tp_close(tp);
out_peers:
	peer_table_close(peers, cfg.nnodes);
out_cfg:
	if (rc)
		fprintf(stderr, "udchat: start-up failed: %s\n", strerror(-rc));
	config_free(&cfg);
	return rc ? 1 : status;
}
