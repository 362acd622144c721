/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * udchat: drive the UD engine without FUSE, for the transport e2e tests.
 *
 *   udchat -c CONF -n NAME [-s PEER:CHAN:SIZE:COUNT]... [-r EXPECTED]
 *          [-t SECONDS] [-p USEC] [-R] [-v]
 *
 * Opens config, peers and the fabric (transport, route, bootstrap) like
 * the daemon, waits until every peer is up, sends COUNT messages of SIZE
 * bytes to PEER on CHAN and receives, checking each message byte for byte
 * and by identity.  -R sends the batches again whenever their peer comes
 * up anew (it restarted).  Exits 0 once EXPECTED distinct messages
 * arrived, each exactly once and intact, every batch whole, and every send
 * succeeded.
 *
 * Identity.  The receiver cannot count: one message delivered twice and
 * one lost add up.  So every message says who sent it and where it sits,
 * and the receiver keeps a bitmap per batch:
 *
 *   sender    the peer the transport matched it to, and that sender's QPN:
 *             a restarted sender has a new QPN (the transport itself tells
 *             incarnations apart by it), so alpha, which outlives beta,
 *             takes beta's batch once per beta incarnation without calling
 *             the second one a duplicate;
 *   round     how many times this sender has (re)sent its batches to this
 *             receiver: a -R resend to a receiver that never restarted
 *             (its session flapped) is a new message too;
 *   batch     the batch's ordinal among the sender's batches to this
 *             receiver, and how many there are, so a batch lost whole
 *             shows; seq within the batch and the batch's count, so a
 *             message lost from the end of a batch shows.
 *
 * A message of at least UC_HDR bytes carries all of that in its header
 * (below), and the rest is a pattern of (sender, number, offset), so
 * corruption, truncation and misattribution show as well.  A shorter one
 * (1-byte messages test the smallest datagram, worth keeping) has room for
 * a sequence number only: its first one or two bytes hold the number of
 * the message among those of its length from this sender to this receiver
 * (mod 256 or 65536), its QPN comes from the transport, and the receiver
 * keeps a window of that many numbers per (sender, QPN, length).  Within a
 * window a duplicate shows; a loss shows in the EXPECTED total, since a
 * short message's batch count is not on the wire.  The sender refuses more
 * short messages of one length to one peer than its window holds.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "fabric.h"
#include "log.h"
#include "peer.h"
#include "transport.h"
#include "util.h"
#include "wire.h"

#define UC_MAX_SPECS 128
#define UC_MAX_RECS  1024
#define UC_MISS_MAX  8 /* missing messages listed per batch */

/*
 * The header of a message of at least UC_HDR bytes, big-endian:
 *   0 k       the message's number in its sender (all batches, rounds)
 *   4 len     its length
 *   8 id      the sender's wire id
 *  12 qpn     the sender's QPN: which incarnation sent it
 *  16 round   u16: the sender's (re)send round to this receiver, from 1
 *  18 batch   u8: ordinal of the batch among those to this receiver
 *  19 nbatch  u8: how many batches go to this receiver each round
 *  20 seq     the message's number within its batch
 *  24 count   how many messages the batch has
 */
#define UC_HDR 28

/* One message's identity, as sent and as read back. */
struct uc_id {
	uint32_t k, id, qpn, seq, count;
	uint16_t round;
	uint8_t batch, nbatch;
};

/* One -s PEER:CHAN:SIZE:COUNT batch. */
struct uc_spec {
	char peer[CONFIG_NAME_MAX];
	char chan[CONFIG_NAME_MAX];
	size_t size;
	unsigned count;
	int idx;       /* peer index */
	uint8_t batch; /* ordinal among the batches to this peer */
};

/* What we send one peer: its batches, rounds, short-message numbers. */
struct uc_tx {
	uint64_t epoch_sent; /* epoch the batches went out at; 0 = never */
	uint16_t round;
	uint8_t nspecs; /* -s batches to this peer, short ones too */
	uint8_t nbatch; /* of them with headers: a round's batch count */
	uint32_t short_seq[UC_HDR];	 /* next number per short length */
	unsigned long short_sum[UC_HDR]; /* short messages a round */
};

/*
 * What arrived of one batch (a message of at least UC_HDR bytes) or of
 * one window of short messages (len < UC_HDR): a bit per seq.
 */
struct uc_rec {
	struct peer *p; /* the sender */
	uint32_t qpn;	/* its incarnation */
	uint16_t round; /* batch: its round; short: 0 */
	uint8_t batch, nbatch;
	size_t len;	 /* short: the length; batch: 0 */
	uint32_t n, got; /* bits, bits set */
	uint8_t *seen;
};

/* One run: what to send, what arrived. */
struct uc {
	atomic_ulong rx_ok, rx_bad, rx_dup;
	unsigned long tx_ok, tx_fail;
	uint32_t next_k;
	uint32_t qpn;	  /* ours, stamped on what we send */
	const char *name; /* ours, for the messages */
	struct tp *tp;
	struct peer *peers;
	int self; /* our node index */
	struct uc_spec specs[UC_MAX_SPECS];
	int nspecs;
	struct uc_tx *tx; /* per node */
	unsigned pace_us;
	int resend;
	pthread_mutex_t lock; /* guards the records */
	struct uc_rec rec[UC_MAX_RECS];
	int nrec;
};

/* The command line. */
struct uc_args {
	const char *conf, *name;
	unsigned long expect; /* -r: distinct messages to receive */
	double secs;	      /* -t: the deadline for all of it */
	int verbose;
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

/* How many numbers a short message of len bytes has room for. */
static uint32_t uc_short_window(size_t len)
{
	if (!len)
		return 1; /* an empty message is one of a kind */
	return len >= 2 ? 65536 : 256;
}

/* Write the header of a message of at least UC_HDR bytes. */
static void uc_put_hdr(uint8_t *buf, size_t len, const struct uc_id *m)
{
	util_put32(buf, m->k);
	util_put32(buf + 4, (uint32_t)len);
	util_put32(buf + 8, m->id);
	util_put32(buf + 12, m->qpn);
	util_put32(buf + 16,
		   (uint32_t)m->round << 16 | m->batch << 8 | m->nbatch);
	util_put32(buf + 20, m->seq);
	util_put32(buf + 24, m->count);
}

/* Read the header back; -EBADMSG, with why, if it cannot be ours. */
static int uc_get_hdr(const uint8_t *buf, size_t len, uint32_t id,
		      struct uc_id *m, char *why, size_t whylen)
{
	uint32_t w = util_get32(buf + 16);

	m->k = util_get32(buf);
	m->id = util_get32(buf + 8);
	m->qpn = util_get32(buf + 12);
	m->round = w >> 16;
	m->batch = (w >> 8) & 0xff;
	m->nbatch = w & 0xff;
	m->seq = util_get32(buf + 20);
	m->count = util_get32(buf + 24);
	if (util_get32(buf + 4) != len)
		snprintf(why, whylen, "length %zu, header says %u", len,
			 util_get32(buf + 4));
	else if (m->id != id)
		snprintf(why, whylen, "sender id 0x%08x, want 0x%08x", m->id,
			 id);
	else if (m->seq >= m->count || m->batch >= m->nbatch || !m->round)
		snprintf(why, whylen,
			 "message %u: seq %u of %u, batch %u of %u, round %u",
			 m->k, m->seq, m->count, m->batch, m->nbatch, m->round);
	else
		return 0;
	return -EBADMSG;
}

/*
 * Fill buf with a message of len bytes: header and pattern, or, when
 * short, m->seq in its first bytes and the pattern of that number.
 */
static void uc_fill(uint8_t *buf, size_t len, const struct uc_id *m)
{
	uint32_t k = m->seq % uc_short_window(len);
	size_t i = 0;

	if (len >= UC_HDR) {
		uc_put_hdr(buf, len, m);
		k = m->k;
		i = UC_HDR;
	}
	for (; len < UC_HDR && i < len && i < 2; i++)
		buf[i] = uc_pat(m->id, 0, i) ^ (uint8_t)(k >> (8 * i));
	for (; i < len; i++)
		buf[i] = uc_pat(m->id, k, i);
}

/* Read a short message's number back from its first bytes. */
static uint32_t uc_short_seq(const uint8_t *buf, size_t len, uint32_t id)
{
	uint32_t seq = 0;
	size_t i;

	for (i = 0; i < len && i < 2; i++)
		seq |= (uint32_t)(buf[i] ^ uc_pat(id, 0, i)) << (8 * i);
	return seq;
}

/*
 * Check a received message against what sender id must have sent; its
 * identity in *m (a short one: seq only).  -EBADMSG, with why, if not.
 */
static int uc_check(const uint8_t *buf, size_t len, uint32_t id,
		    struct uc_id *m, char *why, size_t whylen)
{
	uint32_t k;
	size_t i = 0;

	memset(m, 0, sizeof(*m));
	if (len >= UC_HDR) {
		if (uc_get_hdr(buf, len, id, m, why, whylen))
			return -EBADMSG;
		k = m->k;
		i = UC_HDR;
	} else {
		k = m->seq = uc_short_seq(buf, len, id);
		i = len < 2 ? len : 2;
	}
	for (; i < len; i++) {
		if (buf[i] != uc_pat(id, k, i)) {
			snprintf(why, whylen,
				 "message %u (%zu bytes) differs at offset %zu",
				 k, len, i);
			return -EBADMSG;
		}
	}
	return 0;
}

/* The sender's QPN as the transport knows it (for short messages). */
static uint32_t uc_peer_qpn(struct peer *p)
{
	struct peer_use *u = peer_used(p); /* it sent: it was met */
	uint32_t qpn = 0;

	pthread_mutex_lock(&p->lock); /* a leaf lock: safe in deliver */
	if (u)
		qpn = u->addr.qpn;
	pthread_mutex_unlock(&p->lock);
	return qpn;
}

/* Whether record r is the one for message m of len bytes from p. */
static int uc_rec_match(const struct uc_rec *r, struct peer *p, size_t len,
			const struct uc_id *m)
{
	if (r->p != p || r->qpn != m->qpn)
		return 0;
	if (len < UC_HDR)
		return r->len == len;
	return !r->len && r->round == m->round && r->batch == m->batch;
}

/* Find or add (under uc->lock) the record message m belongs to. */
static struct uc_rec *uc_rec_get(struct uc *uc, struct peer *p, size_t len,
				 const struct uc_id *m)
{
	struct uc_rec *r;
	int i;

	for (i = 0; i < uc->nrec; i++)
		if (uc_rec_match(&uc->rec[i], p, len, m))
			return &uc->rec[i];
	if (uc->nrec == UC_MAX_RECS)
		return NULL;
	r = &uc->rec[uc->nrec];
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->qpn = m->qpn;
	if (len < UC_HDR) {
		r->len = len;
		r->n = uc_short_window(len);
	} else {
		r->round = m->round;
		r->batch = m->batch;
		r->nbatch = m->nbatch;
		r->n = m->count;
	}
	r->seen = calloc((r->n + 7) / 8, 1);
	if (!r->seen)
		return NULL;
	uc->nrec++;
	return r;
}

/*
 * Mark message m of len bytes from p as arrived: 0, -EEXIST if it had
 * already, -EBADMSG (why says) if it contradicts its batch.
 */
static int uc_mark(struct uc *uc, struct peer *p, size_t len,
		   const struct uc_id *m, char *why, size_t whylen)
{
	struct uc_rec *r;
	int rc = 0;

	pthread_mutex_lock(&uc->lock);
	r = uc_rec_get(uc, p, len, m);
	if (!r) {
		snprintf(why, whylen, "no room to track it");
		rc = -EBADMSG;
	} else if (len >= UC_HDR &&
		   (r->n != m->count || r->nbatch != m->nbatch)) {
		snprintf(why, whylen,
			 "batch %u said %u of %u batches, "
			 "now %u of %u",
			 m->batch, r->n, r->nbatch, m->count, m->nbatch);
		rc = -EBADMSG;
	} else if (r->seen[m->seq / 8] & (1u << (m->seq % 8))) {
		rc = -EEXIST;
	} else {
		r->seen[m->seq / 8] |= 1u << (m->seq % 8);
		r->got++;
	}
	pthread_mutex_unlock(&uc->lock);
	return rc;
}

/* The engine's deliver callback: verify, account by identity, free. */
static int uc_deliver(void *arg, struct peer *p, const char *chan, void *data,
		      size_t len)
{
	struct uc *uc = arg;
	struct uc_id m;
	char why[160];
	int rc;

	rc = uc_check(data, len, p->id, &m, why, sizeof(why));
	if (!rc && len < UC_HDR)
		m.qpn = uc_peer_qpn(p);
	if (!rc)
		rc = uc_mark(uc, p, len, &m, why, sizeof(why));
	if (rc == -EEXIST) {
		atomic_fetch_add(&uc->rx_dup, 1);
		printf("udchat %s: duplicate message %u from %s (%zu bytes, "
		       "qpn 0x%06x, round %u, batch %u, seq %u)\n",
		       uc->name, len < UC_HDR ? m.seq : m.k, p->conf->name, len,
		       m.qpn, m.round, m.batch, m.seq);
		fflush(stdout);
	} else if (rc) {
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
	struct peer_use *u = peer_used(p);
	int up;

	pthread_mutex_lock(&p->lock);
	up = p->up;
	if (epoch)
		*epoch = u ? u->epoch : 0;
	pthread_mutex_unlock(&p->lock);
	return up;
}

/* Send one batch of round round; messages are numbered across batches. */
static int uc_send_batch(struct uc *uc, struct uc_spec *s, uint16_t round)
{
	struct peer *p = &uc->peers[s->idx];
	struct uc_tx *tx = &uc->tx[s->idx];
	uint8_t *buf = malloc(s->size ? s->size : 1);
	struct uc_id m = {.id = uc->peers[uc->self].id,
			  .qpn = uc->qpn,
			  .round = round,
			  .batch = s->batch,
			  .nbatch = tx->nbatch,
			  .count = s->count};
	unsigned i;
	int rc = 0, tries;

	if (!buf)
		return -ENOMEM;
	for (i = 0; i < s->count; i++) {
		m.k = uc->next_k++;
		m.seq = s->size < UC_HDR ? tx->short_seq[s->size]++ : i;
		uc_fill(buf, s->size, &m);
		for (tries = 0; tries < 100; tries++) {
			rc = tp_send(uc->tp, p, s->chan, buf, s->size);
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
		if (uc->pace_us)
			usleep(uc->pace_us);
	}
	free(buf);
	log_info("udchat: sent %u x %zu bytes to %s on %s (round %u)", s->count,
		 s->size, s->peer, s->chan, round);
	return rc;
}

/* Send peer j its batches, or a new round of them if it is up anew. */
static void uc_send_peer(struct uc *uc, int j)
{
	struct uc_tx *tx = &uc->tx[j];
	uint64_t ep;
	int i;

	if (!tx->nspecs)
		return;
	if (!uc_peer_up(&uc->peers[j], &ep)) {
		tp_peer_need(uc->tp, &uc->peers[j]); /* met on demand */
		return;
	}
	if (tx->epoch_sent && (!uc->resend || ep == tx->epoch_sent))
		return;
	tx->epoch_sent = ep;
	tx->round++;
	for (i = 0; i < uc->nspecs; i++)
		if (uc->specs[i].idx == j)
			uc_send_batch(uc, &uc->specs[i], tx->round);
}

/* Number the batches per peer; refuse more short ones than fit. */
static int uc_plan(struct uc *uc, const struct config *cfg)
{
	struct uc_spec *s;
	struct uc_tx *tx;
	int i;

	for (i = 0; i < uc->nspecs; i++) {
		s = &uc->specs[i];
		s->idx = config_node_index(cfg, s->peer);
		if (s->idx < 0) {
			fprintf(stderr, "udchat: no node %s\n", s->peer);
			return -EINVAL;
		}
		tx = &uc->tx[s->idx];
		tx->nspecs++;
		/* only headers count batches: a short one has none */
		if (s->size >= UC_HDR) {
			s->batch = tx->nbatch++;
			continue;
		}
		tx->short_sum[s->size] += s->count;
		if (tx->short_sum[s->size] > uc_short_window(s->size)) {
			fprintf(stderr,
				"udchat: more than %u messages of %zu bytes "
				"to %s: their numbers would repeat\n",
				uc_short_window(s->size), s->size, s->peer);
			return -EINVAL;
		}
	}
	return 0;
}

/* List what is missing of batch record r; 1 if anything is. */
static int uc_rec_missing(const struct uc *uc, const struct uc_rec *r)
{
	uint32_t seq, shown = 0;

	if (r->len || r->got == r->n)
		return 0; /* a short window has no count to miss against */
	for (seq = 0; seq < r->n; seq++) {
		if (r->seen[seq / 8] & (1u << (seq % 8)))
			continue;
		if (shown++ < UC_MISS_MAX)
			printf("udchat %s: missing message seq %u of batch %u "
			       "from %s (qpn 0x%06x, round %u)\n",
			       uc->name, seq, r->batch, r->p->conf->name,
			       r->qpn, r->round);
	}
	if (shown > UC_MISS_MAX)
		printf("udchat %s: and %u more missing of that batch\n",
		       uc->name, shown - UC_MISS_MAX);
	return 1;
}

/* Whether records a and b are batches of one round of one sender. */
static int uc_same_round(const struct uc_rec *a, const struct uc_rec *b)
{
	return !a->len && !b->len && a->p == b->p && a->qpn == b->qpn &&
	       a->round == b->round;
}

/* Whether record i's round lacks whole batches (said at its first). */
static int uc_round_short(const struct uc *uc, int i)
{
	const struct uc_rec *r = &uc->rec[i];
	int j, have = 0;

	if (r->len)
		return 0;
	for (j = 0; j < uc->nrec; j++) {
		if (!uc_same_round(r, &uc->rec[j]))
			continue;
		if (j < i)
			return 0; /* reported at the round's first record */
		have++;
	}
	if (have == r->nbatch)
		return 0;
	printf("udchat %s: %d of %u batches from %s arrived (qpn 0x%06x, "
	       "round %u)\n",
	       uc->name, have, r->nbatch, r->p->conf->name, r->qpn, r->round);
	return 1;
}

/* The verdict on what arrived: NULL if all is well, or why not. */
static const char *uc_verdict(struct uc *uc, unsigned long expect)
{
	unsigned long ok = atomic_load(&uc->rx_ok);
	int i, missing = 0;

	pthread_mutex_lock(&uc->lock);
	for (i = 0; i < uc->nrec; i++) {
		missing |= uc_rec_missing(uc, &uc->rec[i]);
		missing |= uc_round_short(uc, i);
	}
	pthread_mutex_unlock(&uc->lock);
	if (atomic_load(&uc->rx_bad))
		return "corrupt messages arrived";
	if (atomic_load(&uc->rx_dup))
		return "duplicate messages arrived";
	if (missing)
		return "messages of a batch are missing";
	if (ok < expect)
		return "expected messages did not arrive in time";
	if (ok > expect)
		return "more distinct messages than expected arrived";
	if (uc->tx_fail)
		return "sends failed";
	return NULL;
}

/* Counters of every peer and the totals, for the test log. */
static void uc_print_counters(const struct config *cfg, struct peer *peers,
			      struct tp *tp, struct uc *uc)
{
	int i, d;

	for (i = 0; i <= cfg->nnodes; i++) {
		struct peer_counters *c = i < cfg->nnodes
						  ? peer_counts(&peers[i])
						  : tp_totals(tp);
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
	printf("udchat %s: rx_ok=%lu rx_bad=%lu rx_dup=%lu tx_ok=%lu "
	       "tx_fail=%lu\n",
	       cfg->nodes[cfg->local].name, atomic_load(&uc->rx_ok),
	       atomic_load(&uc->rx_bad), atomic_load(&uc->rx_dup), uc->tx_ok,
	       uc->tx_fail);
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
		"[-r EXPECTED] [-t SECONDS] [-p USEC] [-R] [-v]\n"
		"  EXPECTED: distinct messages to receive, from all senders\n");
	exit(2);
}

/*
 * Meet every peer and wait until all are up: 0, or -ETIMEDOUT / -EINTR.
 * Peers are met on demand, so each one not up yet is asked for, as a
 * send to it would.
 */
static int uc_wait_peers(struct uc *uc, int nnodes, double deadline)
{
	int all, i, up;

	for (;;) {
		for (all = 1, i = 0; i < nnodes; i++) {
			up = uc_peer_up(&uc->peers[i], NULL);
			if (!up)
				tp_peer_need(uc->tp, &uc->peers[i]);
			all &= up;
		}
		if (all)
			return 0;
		if (uc_stop)
			return -EINTR;
		if (uc_now() > deadline)
			return -ETIMEDOUT;
		usleep(20000);
	}
}

/*
 * Send (again on re-up with -R) and receive until as many messages
 * arrived as expected, duplicates and bad ones counted too, so that a
 * duplicate fails at once instead of at the deadline: 0, or why not.
 */
static const char *uc_exchange(struct uc *uc, int nnodes, unsigned long expect,
			       double deadline)
{
	int j;

	for (;;) {
		for (j = 0; j < nnodes; j++)
			uc_send_peer(uc, j);
		if (atomic_load(&uc->rx_ok) + atomic_load(&uc->rx_bad) +
			    atomic_load(&uc->rx_dup) >=
		    expect)
			return NULL;
		if (uc_stop)
			return "stopped by a signal";
		if (uc_now() > deadline)
			return "expected messages did not arrive in time";
		usleep(5000);
	}
}

/* Free the records' bitmaps. */
static void uc_free_recs(struct uc *uc)
{
	int i;

	for (i = 0; i < uc->nrec; i++)
		free(uc->rec[i].seen);
	uc->nrec = 0;
}

/* Parse the command line into a and uc's batches; usage on anything bad. */
static void uc_options(struct uc *uc, struct uc_args *a, int argc, char *argv[])
{
	int opt;

	while ((opt = getopt(argc, argv, "c:n:s:r:t:p:Rv")) != -1) {
		switch (opt) {
		case 'c':
			a->conf = optarg;
			break;
		case 'n':
			a->name = optarg;
			break;
		case 's':
			if (uc->nspecs == UC_MAX_SPECS ||
			    uc_parse_spec(optarg, &uc->specs[uc->nspecs]))
				uc_usage();
			uc->nspecs++;
			break;
		case 'r':
			a->expect = strtoul(optarg, NULL, 0);
			break;
		case 't':
			a->secs = atof(optarg);
			break;
		case 'p':
			uc->pace_us = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'R':
			uc->resend = 1;
			break;
		case 'v':
			a->verbose = 1;
			break;
		default:
			uc_usage();
		}
	}
	if (!a->conf || !a->name)
		uc_usage();
}

/*
 * Wait for every peer, exchange, judge what arrived; print the counters
 * and the verdict.  The exit status: 0 when all is well.
 */
static int uc_run(struct uc *uc, const struct config *cfg, unsigned long expect,
		  double deadline)
{
	const char *why;
	int rc, status = 1;

	rc = uc_wait_peers(uc, cfg->nnodes, deadline);
	if (rc) {
		why = rc == -EINTR ? "stopped by a signal"
				   : "peers not up in time";
		goto out;
	}
	log_info("udchat: all %d peers up", cfg->nnodes);
	why = uc_exchange(uc, cfg->nnodes, expect, deadline);
	if (why)
		goto out;
	/* What we sent last may still be on its way out of the HCA, and a
	 * late duplicate on its way in: judge after that. */
	if (uc->tx_ok)
		usleep(300000);
	why = uc_verdict(uc, expect);
	status = why ? 1 : 0;
out:
	uc_print_counters(cfg, uc->peers, uc->tp, uc);
	if (status)
		printf("udchat %s: FAIL: %s (rx_ok %lu of %lu)\n", uc->name,
		       why, atomic_load(&uc->rx_ok), expect);
	else
		printf("udchat %s: OK\n", uc->name);
	fflush(stdout);
	return status;
}

/* Config, batches, peers, the fabric like the daemon's; run; close. */
int main(int argc, char *argv[])
{
	static struct uc uc;
	struct tp_ops ops = {.deliver = uc_deliver};
	struct uc_args a = {.secs = 60};
	struct config cfg;
	struct fabric *fab = NULL;
	char err[CONFIG_ERR_MAX];
	double deadline;
	int rc, status = 1;

	pthread_mutex_init(&uc.lock, NULL);
	uc_options(&uc, &a, argc, argv);
	uc.name = a.name;
	log_init("udchat", 1, a.verbose);
	signal(SIGTERM, uc_on_signal);
	signal(SIGINT, uc_on_signal);
	signal(SIGPIPE, SIG_IGN);
	deadline = uc_now() + a.secs;

	if (config_load(a.conf, &cfg, err, sizeof(err)) ||
	    config_select_local(&cfg, a.name, err, sizeof(err)) ||
	    config_resolve_local(&cfg, err, sizeof(err))) {
		fprintf(stderr, "udchat: %s\n", err);
		return 2;
	}
	uc.self = cfg.local;
	uc.tx = calloc(cfg.nnodes, sizeof(*uc.tx));
	if (!uc.tx) {
		rc = -ENOMEM;
		goto out_cfg;
	}
	if (uc_plan(&uc, &cfg)) {
		config_free(&cfg);
		return 2;
	}
	rc = peer_table_open(&uc.peers, &cfg);
	if (rc)
		goto out_cfg;
	rc = fabric_open(&fab, &cfg, uc.peers, NULL, &ops, &uc);
	if (rc)
		goto out_peers;
	uc.tp = fabric_tp(fab);
	uc.qpn = tp_info(uc.tp)->qpn;
	printf("udchat %s: qpn 0x%06x mtu %zu\n", uc.name, uc.qpn,
	       tp_info(uc.tp)->mtu_bytes);
	fflush(stdout);
	status = uc_run(&uc, &cfg, a.expect, deadline);
	fabric_close(fab);
out_peers:
	peer_table_close(uc.peers, cfg.nnodes);
out_cfg:
	if (rc)
		fprintf(stderr, "udchat: start-up failed: %s\n", strerror(-rc));
	uc_free_recs(&uc);
	free(uc.tx);
	config_free(&cfg);
	return rc ? 1 : status;
}
