/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The simulated link of test_reliable: a sender and a receiver of
 * reliable.c joined by a link that loses, duplicates and reorders
 * datagrams and acks, driven by a millisecond clock.  Included by one
 * test file; every definition is static.
 */
#ifndef IBFS_REL_SIM_H
#define IBFS_REL_SIM_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "reliable.h"

#define MAXQ 100000

static const rel_bits none; /* an ack that holds nothing past ack */

static uint64_t rnd_state;

/* The next number of the link's stream. */
static uint64_t rnd(void)
{
	return unit_xorshift(&rnd_state);
}

/* A datagram or an ack on the simulated link. */
struct pkt {
	uint64_t at; /* arrival time */
	int is_ack;
	uint32_t sess, psn, frag, nfrag, msg_id;
	uint32_t ack, credit;
	int nak;
	int ackreq; /* the sender has nothing more to send now */
	int fwd;    /* nothing before psn will come (rel_tx_fwd) */
	rel_bits sack;
};

struct link {
	struct pkt q[MAXQ];
	int n;
	int loss_pct, dup_pct, max_delay;
	int delay; /* ms every packet takes beyond the first */
	int lost;  /* packets it dropped */
};

struct sim {
	struct rel_tx tx;
	struct rel_rx rx;
	struct link fwd, back;
	uint64_t now;
	/* receiver side */
	uint32_t got[MAXQ]; /* msg_ids completed, in order */
	int ngot;
	uint32_t cur_msg, cur_frag; /* fragment expected next */
	int capacity; /* messages the receiver queue takes; <0 = inf */
	int foreign;  /* datagrams of a session not joined, dropped */
	int queued;
	int held;     /* a whole message waits for space */
	int no_sack;  /* receiver keeps nothing past a gap */
	int ack_each; /* urgent acks go per datagram, not per ms */
	struct pkt ahead[REL_SACK_BITS]; /* kept past a gap, by psn */
	/* sender side */
	int ndone, nfail;
	int last_status;
	uint32_t max_inflight;
	int sent;
};

static void on_done(void *arg, int status, size_t len)
{
	struct sim *s = arg;

	if (status)
		s->nfail++;
	else
		s->ndone++;
	s->last_status = status;
}

static void link_put(struct link *l, uint64_t now, const struct pkt *p)
{
	int copies = 1, i;

	if ((int)(rnd() % 100) < l->loss_pct) {
		l->lost++;
		return;
	}
	if ((int)(rnd() % 100) < l->dup_pct)
		copies = 2;
	for (i = 0; i < copies && l->n < MAXQ; i++) {
		l->q[l->n] = *p;
		l->q[l->n].at = now + 1 + (uint64_t)l->delay +
				(l->max_delay ? rnd() % l->max_delay : 0);
		l->n++;
	}
}

/* Take one packet due at now (any order among due ones: reordering). */
static int link_get(struct link *l, uint64_t now, struct pkt *out)
{
	int i, best = -1;

	/* the earliest due first; equal times keep their order */
	for (i = 0; i < l->n; i++)
		if (l->q[i].at <= now &&
		    (best < 0 || l->q[i].at < l->q[best].at))
			best = i;
	if (best < 0)
		return 0;
	*out = l->q[best];
	memmove(&l->q[best], &l->q[best + 1],
		(size_t)(l->n - best - 1) * sizeof(l->q[0]));
	l->n--;
	return 1;
}

static struct rel_msg *mk_msg(struct sim *s, uint32_t id, uint32_t nfrag)
{
	struct rel_msg *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->msg_id = id;
	m->nfrag = nfrag;
	m->done = on_done;
	m->arg = s;
	m->len = nfrag;
	return m;
}

static void sim_init(struct sim *s, uint32_t window, uint32_t pt)
{
	memset(s, 0, sizeof(*s));
	rel_tx_init(&s->tx, 7, window, pt);
	rel_rx_init(&s->rx, window);
	rel_rx_join(&s->rx, 7); /* as the bootstrap agreed */
	s->capacity = -1;
	s->now = 1000;
}

static void drain_done(struct sim *s)
{
	struct rel_msg *m = rel_tx_take_done(&s->tx), *n;

	for (; m; m = n) {
		n = m->next;
		m->done(m->arg, m->status, m->len);
		free(m);
	}
}

/* Deliver a completed message to the "queue" if there is room. */
static int rx_deliver(struct sim *s, uint32_t msg_id)
{
	if (s->capacity >= 0 && s->queued >= s->capacity)
		return -ENOSPC;
	s->queued++;
	s->got[s->ngot++] = msg_id;
	return 0;
}

static void rx_take(struct sim *s, const struct pkt *p);

static void rx_one(struct sim *s, const struct pkt *p)
{
	enum rel_verdict v;

	if (p->fwd && rel_rx_forward(&s->rx, p->sess, p->psn)) {
		s->held = 0; /* what was held, its sender failed */
		s->cur_frag = 0;
	}
	v = rel_rx_check(&s->rx, p->sess, p->psn);
	if (v == REL_FOREIGN)
		s->foreign++;
	if (p->ackreq && s->rx.joined)
		rel_rx_ask_ack(&s->rx);
	if (v == REL_AHEAD) {
		if (s->no_sack)
			rel_rx_unhold(&s->rx, p->psn);
		else
			s->ahead[p->psn % REL_SACK_BITS] = *p;
		return;
	}
	if (v != REL_ACCEPT)
		return;
	rx_take(s, p);
	/* what was kept past the gap, now in order */
	while (!s->held && rel_rx_ready(&s->rx)) {
		struct pkt q = s->ahead[s->rx.nxt % REL_SACK_BITS];

		assert_int_equal(q.psn, s->rx.nxt);
		rel_rx_unhold(&s->rx, s->rx.nxt);
		rx_take(s, &q);
	}
}

/* The datagram at nxt, in order. */
static void rx_take(struct sim *s, const struct pkt *p)
{
	if (s->held) {
		/* the retransmitted last fragment: try the held one again */
		if (!rx_deliver(s, p->msg_id)) {
			s->held = 0;
			s->rx.blocked = 0;
			s->cur_frag = 0;
			rel_rx_advance(&s->rx);
		} else {
			s->rx.ack_due = 1; /* still alive, still blocked */
		}
		return;
	}
	/* in psn order, fragments of a message come in order */
	assert_int_equal(p->frag, s->cur_frag);
	if (p->frag + 1 < p->nfrag) {
		s->cur_frag++;
		rel_rx_advance(&s->rx);
		return;
	}
	if (rx_deliver(s, p->msg_id)) {
		s->held = 1;
		s->rx.blocked = 1;
		s->rx.ack_due = 1;
		return;
	}
	s->cur_frag = 0;
	rel_rx_advance(&s->rx);
}

/* The receiver acks what it has taken. */
static void rx_ack(struct sim *s)
{
	struct pkt p;

	memset(&p, 0, sizeof(p));
	p.is_ack = 1;
	p.sess = s->rx.sess;
	p.ack = s->rx.nxt;
	p.credit = rel_rx_credit(&s->rx);
	p.nak = s->rx.nak_due;
	p.sack = rel_rx_sack(&s->rx);
	rel_rx_acked(&s->rx);
	link_put(&s->back, s->now, &p);
}

/* One millisecond of the world. */
static void sim_step(struct sim *s)
{
	struct rel_msg *m;
	uint32_t frag, psn;
	struct pkt p;
	int go;

	while ((go = rel_tx_next(&s->tx, s->now, &m, &frag, &psn))) {
		memset(&p, 0, sizeof(p));
		p.ackreq = go == REL_GO_LAST;
		p.fwd = rel_tx_fwd(&s->tx, psn);
		p.sess = s->tx.sess;
		p.psn = psn;
		p.frag = frag;
		p.nfrag = m->nfrag;
		p.msg_id = m->msg_id;
		s->sent++;
		/* past the cwnd only the timer's probe at una goes */
		assert_true(s->tx.pipe <= s->tx.cwnd || psn == s->tx.una);
		if (rel_tx_inflight(&s->tx) > s->max_inflight)
			s->max_inflight = rel_tx_inflight(&s->tx);
		link_put(&s->fwd, s->now, &p);
	}
	while (link_get(&s->fwd, s->now, &p)) {
		rx_one(s, &p);
		if (s->ack_each && rel_rx_ack_urgent(&s->rx))
			rx_ack(s);
	}
	if (s->rx.ack_due && s->rx.joined)
		rx_ack(s);
	while (link_get(&s->back, s->now, &p))
		rel_tx_ack(&s->tx, p.sess, p.ack, p.credit, p.nak, p.sack, NULL,
			   s->now);
	rel_tx_tick(&s->tx, s->now);
	drain_done(s);
	s->now++;
}

static void run_msgs(struct sim *s, int nmsg, int maxfrag, uint64_t limit_ms)
{
	uint64_t end = s->now + limit_ms;
	int i;

	for (i = 0; i < nmsg; i++)
		rel_tx_queue(
			&s->tx,
			mk_msg(s, (uint32_t)i, 1 + (uint32_t)(rnd() % maxfrag)),
			s->now);
	while (s->ndone + s->nfail < nmsg && s->now < end)
		sim_step(s);
}

static void check_exactly_once(struct sim *s, int nmsg)
{
	int i;

	assert_int_equal(s->nfail, 0);
	assert_int_equal(s->ndone, nmsg);
	assert_int_equal(s->ngot, nmsg);
	for (i = 0; i < nmsg; i++)
		assert_int_equal(s->got[i], (uint32_t)i);
}

#endif
