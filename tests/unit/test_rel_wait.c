/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for rel_wait.c with reliable.c: refusals (reliable.h,
 * "Refusals").  A sender and a receiver joined by a simulated link that
 * loses datagrams and acks; the receiver has one queue per channel, and
 * follows tp_rel_refuse.c's rule (once a channel refused for a full
 * queue, later messages to it not flagged retry are refused until a
 * retry goes in).  Checks that a refusal's code reaches the sender though
 * acks are lost, that a full channel does not stop another, that a
 * channel's messages arrive in order, each once, across retries, and that
 * a refusal for good fails its writer with its errno while the next
 * message arrives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "reliable.h"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define MAXQ  4096
#define NCHAN 3
#define NMSG  64

static uint64_t rnd_state = 88172645463325252ull;

/* The next number of the link's stream. */
static uint64_t rnd(void)
{
	return unit_xorshift(&rnd_state);
}

/* A datagram (sender to receiver) or an ack (back). */
struct pkt {
	uint64_t at;
	uint32_t psn, frag, nfrag, msg_id;
	int chan, retry;
	struct rel_ack a;
};

struct link {
	struct pkt q[MAXQ];
	int n, loss_pct;
};

/* What a channel at the receiver does with a whole message. */
enum rx_mode {
	RX_TAKE,  /* queue it, up to cap */
	RX_NOSPC, /* refuse it for good (the channel cap) */
	RX_BIG,	  /* refuse it for good (larger than the queue) */
};

struct sim {
	struct rel_tx tx;
	struct rel_rx rx;
	struct link fwd, back;
	uint64_t now;
	/* receiver: per channel, its mode, room and what went in */
	enum rx_mode mode[NCHAN];
	int cap[NCHAN], full[NCHAN];
	uint32_t got[NCHAN][NMSG];
	int ngot[NCHAN];
	/* sender: each message's channel and what became of it */
	int chan_of[NMSG], status[NMSG], finished[NMSG];
	int nmsg;
	struct pkt ahead[REL_SACK_BITS]; /* kept past a gap, by psn */
};

static const char *const chans[NCHAN] = {"full", "other", "bad"};

static void link_put(struct link *l, uint64_t now, const struct pkt *p)
{
	if ((int)(rnd() % 100) < l->loss_pct)
		return;
	assert_true(l->n < MAXQ);
	l->q[l->n] = *p;
	l->q[l->n].at = now + 1;
	l->n++;
}

/* The oldest packet due (a fabric does not reorder). */
static int link_get(struct link *l, uint64_t now, struct pkt *out)
{
	if (!l->n || l->q[0].at > now)
		return 0;
	*out = l->q[0];
	memmove(&l->q[0], &l->q[1], (size_t)(l->n - 1) * sizeof(l->q[0]));
	l->n--;
	return 1;
}

static void sim_init(struct sim *s)
{
	int c;

	memset(s, 0, sizeof(*s));
	rel_tx_init(&s->tx, 7, 64, 5000);
	rel_rx_init(&s->rx, 64);
	rel_rx_join(&s->rx, 7); /* the session the bootstrap agreed on */
	for (c = 0; c < NCHAN; c++)
		s->cap[c] = NMSG;
	s->now = 1000;
}

/* A writer writes a message of nfrag datagrams to channel c. */
static void sim_write(struct sim *s, int c, uint32_t nfrag)
{
	struct rel_msg *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	assert_true(s->nmsg < NMSG);
	m->msg_id = (uint32_t)s->nmsg;
	m->nfrag = nfrag;
	strcpy(m->chan, chans[c]);
	s->chan_of[s->nmsg++] = c;
	rel_tx_queue(&s->tx, m, s->now);
}

/* The receiver's rule for a whole message msg to channel c. */
static enum rel_code rx_whole(struct sim *s, int c, uint32_t msg, int retry)
{
	if (s->mode[c] == RX_NOSPC)
		return REL_CODE_NOSPC;
	if (s->mode[c] == RX_BIG)
		return REL_CODE_MSGSIZE;
	if (s->full[c] && !retry)
		return REL_CODE_FULL; /* it waits its turn */
	if (s->ngot[c] >= s->cap[c]) {
		s->full[c] = 1;
		return REL_CODE_FULL;
	}
	s->full[c] = 0;
	s->got[c][s->ngot[c]++] = msg;
	return REL_CODE_NONE;
}

/* Take the datagram at nxt. */
static void rx_take(struct sim *s, const struct pkt *p)
{
	if (p->frag + 1 < p->nfrag)
		rel_rx_advance(&s->rx);
	else
		rel_rx_refuse(&s->rx,
			      rx_whole(s, p->chan, p->msg_id, p->retry));
}

/* One datagram arrives: taken in order, kept past a gap. */
static void rx_datagram(struct sim *s, const struct pkt *p)
{
	enum rel_verdict v = rel_rx_check(&s->rx, 7, p->psn);
	uint32_t nxt;

	if (v == REL_AHEAD)
		s->ahead[p->psn % REL_SACK_BITS] = *p;
	if (v != REL_ACCEPT)
		return;
	rx_take(s, p);
	while (rel_rx_ready(&s->rx)) {
		nxt = rel_rx_next(&s->rx);
		rel_rx_unhold(&s->rx, nxt);
		rx_take(s, &s->ahead[nxt % REL_SACK_BITS]);
	}
}

/* Finished messages: each once. */
static void take_done(struct sim *s)
{
	struct rel_msg *m, *next;

	for (m = rel_tx_take_done(&s->tx); m; m = next) {
		next = m->next;
		assert_false(s->finished[m->msg_id]);
		s->finished[m->msg_id] = 1;
		s->status[m->msg_id] = m->status;
		free(m);
	}
}

/* One millisecond of both ends and the link. */
static void sim_step(struct sim *s)
{
	struct rel_msg *m;
	uint32_t frag, psn;
	struct pkt p;
	int c;

	while (rel_tx_next(&s->tx, s->now, &m, &frag, &psn)) {
		memset(&p, 0, sizeof(p));
		p.psn = psn;
		p.frag = frag;
		p.nfrag = m->nfrag;
		p.msg_id = m->msg_id;
		p.retry = m->retry;
		for (c = 0; strcmp(chans[c], m->chan); c++)
			;
		p.chan = c;
		link_put(&s->fwd, s->now, &p);
	}
	while (link_get(&s->fwd, s->now, &p))
		rx_datagram(s, &p);
	if (rel_rx_ack_wanted(&s->rx, 1)) {
		memset(&p, 0, sizeof(p));
		rel_rx_ack_take(&s->rx, 1, &p.a);
		link_put(&s->back, s->now, &p);
	}
	while (link_get(&s->back, s->now, &p))
		if (p.a.ack)
			rel_tx_ack(&s->tx, p.a.sess, p.a.nxt, p.a.credit,
				   p.a.nak, p.a.bits,
				   p.a.refuse ? &p.a.codes : NULL, s->now);
	rel_tx_tick(&s->tx, s->now);
	take_done(s);
	s->now++;
}

static void sim_run(struct sim *s, int ms)
{
	while (ms-- > 0)
		sim_step(s);
}

/* Messages of channel c that finished. */
static int finished_on(const struct sim *s, int c)
{
	int i, n = 0;

	for (i = 0; i < s->nmsg; i++)
		n += s->chan_of[i] == c && s->finished[i];
	return n;
}

/* Channel c got the first of its messages in the order written, each
 * once. */
static void assert_in_order(const struct sim *s, int c)
{
	int i, k = 0;

	for (i = 0; i < s->nmsg && k < s->ngot[c]; i++)
		if (s->chan_of[i] == c) {
			assert_int_equal(s->got[c][k], i);
			k++;
		}
	assert_int_equal(k, s->ngot[c]);
}

/*
 * The ack that carried a refusal is lost; the next one, covering more,
 * carries the code too: the refused message (to "full") waits, its
 * writer not told "delivered", and the one after it, on another channel,
 * is done.
 */
static void refuse_under_lost_ack(struct sim *sp)
{
	struct rel_msg *m;
	struct rel_ack a;
	uint32_t frag, psn;

	sim_init(sp);
	sim_write(sp, 0, 1);
	sim_write(sp, 1, 1);
	assert_true(rel_tx_next(&sp->tx, sp->now, &m, &frag, &psn));
	assert_true(rel_tx_next(&sp->tx, sp->now, &m, &frag, &psn));
	assert_int_equal(rel_rx_check(&sp->rx, 7, 0), REL_ACCEPT);
	rel_rx_refuse(&sp->rx, REL_CODE_FULL);
	rel_rx_ack_take(&sp->rx, 0, &a);
	assert_false(a.ack);		 /* never in a DATA datagram */
	rel_rx_ack_take(&sp->rx, 1, &a); /* this one is lost */
	assert_int_equal(rel_rx_check(&sp->rx, 7, 1), REL_ACCEPT);
	rel_rx_advance(&sp->rx);
	rel_rx_ack_take(&sp->rx, 1, &a);
	assert_true(a.ack && a.refuse);
	assert_int_equal(a.nxt, 2);
	rel_tx_ack(&sp->tx, a.sess, a.nxt, a.credit, a.nak, a.bits, &a.codes,
		   sp->now);
	take_done(sp);
	assert_false(sp->finished[0]);
	assert_true(sp->finished[1]);
	assert_int_equal(sp->status[1], 0);
	assert_int_equal(sp->tx.nwaiting, 1);
	assert_int_equal(sp->tx.refused, 1);
	assert_true(rel_tx_busy(&sp->tx));
	assert_true(rel_tx_would_block(&sp->tx, "full"));
	assert_false(rel_tx_would_block(&sp->tx, "other"));
	/* the same ack again (a duplicate) changes nothing */
	rel_tx_ack(&sp->tx, a.sess, a.nxt, a.credit, a.nak, a.bits, &a.codes,
		   sp->now);
	assert_int_equal(sp->tx.nwaiting, 1);
}

/* ... and it goes again, flagged retry, after REL_RETRY_MIN_MS. */
static void test_code_survives_lost_ack(void **state)
{
	struct sim s;
	struct rel_msg *m;
	uint32_t frag, psn;

	refuse_under_lost_ack(&s);
	/* not before its backoff */
	assert_int_equal(rel_tx_tick(&s.tx, s.now + 1), REL_RETRY_MIN_MS - 1);
	assert_false(rel_tx_next(&s.tx, s.now + 1, &m, &frag, &psn));
	rel_tx_tick(&s.tx, s.now + REL_RETRY_MIN_MS);
	assert_true(
		rel_tx_next(&s.tx, s.now + REL_RETRY_MIN_MS, &m, &frag, &psn));
	assert_int_equal(m->msg_id, 0);
	assert_true(m->retry);
	assert_int_equal(psn, 2);
	rel_tx_reset(&s.tx, -ENOTCONN, 8);
	take_done(&s);
	assert_int_equal(s.status[0], -ENOTCONN);
}

/* The peer goes (rel_tx_abandon): a message waiting for room fails too. */
static void test_abandon_fails_waiting(void **state)
{
	struct sim s;

	refuse_under_lost_ack(&s);
	rel_tx_abandon(&s.tx, -ENOTCONN);
	take_done(&s);
	assert_true(s.finished[0]);
	assert_int_equal(s.status[0], -ENOTCONN);
	assert_int_equal(s.tx.nwaiting, 0);
	assert_false(rel_tx_busy(&s.tx));
	assert_false(rel_tx_would_block(&s.tx, "full"));
}

/*
 * A full, unread channel stops no other: with a tenth of the datagrams
 * and a third of the acks lost, every message to "other" arrives, in
 * order, while those to "full" wait (none failed, none dropped); once
 * "full" is read, they all arrive, in order, each once.
 */
static void test_full_channel_alone(void **state)
{
	struct sim s;
	int i;

	sim_init(&s);
	s.fwd.loss_pct = 10;
	s.back.loss_pct = 33;
	s.cap[0] = 2;
	for (i = 0; i < 40; i++)
		sim_write(&s, i % 2, 1 + (uint32_t)(i % 3));
	sim_run(&s, 3000);
	assert_int_equal(s.ngot[1], 20);
	assert_in_order(&s, 1);
	assert_int_equal(finished_on(&s, 1), 20);
	assert_int_equal(s.ngot[0], 2);
	assert_in_order(&s, 0);
	assert_int_equal(finished_on(&s, 0), 2);
	assert_int_equal(s.tx.nwaiting, 18);
	assert_true(s.tx.refused >= 18);
	/* written while the channel waits: it joins the wait, in order */
	sim_write(&s, 0, 2);
	sim_write(&s, 1, 1);
	sim_run(&s, 1000);
	assert_int_equal(s.ngot[1], 21);
	assert_int_equal(s.tx.nwaiting, 19);
	/* the reader reads */
	s.cap[0] = NMSG;
	sim_run(&s, 5000);
	assert_int_equal(s.ngot[0], 21);
	assert_in_order(&s, 0);
	for (i = 0; i < s.nmsg; i++) {
		assert_true(s.finished[i]);
		assert_int_equal(s.status[i], 0);
	}
	assert_int_equal(s.tx.nwaiting, 0);
	assert_false(rel_tx_busy(&s.tx));
	assert_int_equal(s.tx.timeouts, 0);
}

/*
 * Refusals for good, acks lost: each writer gets its errno (the channel
 * cap: ENOSPC; larger than the queue: EMSGSIZE), nothing waits, and the
 * messages after them arrive.
 */
static void test_refused_for_good(void **state)
{
	struct sim s;
	int i;

	sim_init(&s);
	s.fwd.loss_pct = 10;
	s.back.loss_pct = 50;
	s.mode[2] = RX_NOSPC;
	for (i = 0; i < 12; i++)
		sim_write(&s, i % 3, 1 + (uint32_t)(i % 2));
	sim_run(&s, 5000);
	for (i = 0; i < s.nmsg; i++) {
		assert_true(s.finished[i]);
		assert_int_equal(s.status[i], s.chan_of[i] == 2 ? -ENOSPC : 0);
	}
	assert_int_equal(s.ngot[0], 4);
	assert_int_equal(s.ngot[1], 4);
	assert_int_equal(s.ngot[2], 0);
	s.mode[2] = RX_BIG;
	sim_write(&s, 2, 1);
	sim_write(&s, 0, 1);
	sim_run(&s, 3000);
	assert_int_equal(s.status[12], -EMSGSIZE);
	assert_int_equal(s.status[13], 0);
	assert_int_equal(s.ngot[0], 5);
	assert_int_equal(s.tx.nwaiting, 0);
	assert_int_equal(s.tx.refused, 0);
}

/*
 * Retries back off: a channel that stays full is tried again after
 * REL_RETRY_MIN_MS, doubling to REL_RETRY_MAX_MS, one message at a time
 * (its writers wait without limit: the receiver answers), and the peer
 * timeout never fires.
 */
static void test_retry_backoff(void **state)
{
	struct sim s;
	uint64_t r0;

	sim_init(&s);
	s.cap[0] = 0;
	sim_write(&s, 0, 1);
	sim_write(&s, 0, 1);
	sim_write(&s, 0, 1);
	sim_run(&s, 100);
	r0 = s.tx.refused;
	assert_true(r0 >= 4 && r0 <= 8); /* 3, then 10, 20, 40 ms */
	sim_run(&s, 10000);
	/* about 40 more at one per 250 ms, the retry one message */
	assert_true(s.tx.refused - r0 >= 36 && s.tx.refused - r0 <= 44);
	assert_int_equal(s.tx.nwaiting, 3);
	assert_int_equal(s.tx.timeouts, 0);
	assert_int_equal(finished_on(&s, 0), 0);
	s.cap[0] = NMSG;
	sim_run(&s, 1000);
	assert_int_equal(s.ngot[0], 3);
	assert_in_order(&s, 0);
	assert_int_equal(finished_on(&s, 0), 3);
}

/* One table answers both planes: each refusal's wire code, its drop in
 * datagram mode and the writer's errno agree, and an errno deliver never
 * named is refused for good (no retry), not as a full queue. */
static void test_refusal_table(void **state)
{
	static const struct {
		int err, code, drop, writer;
	} want[] = {
		{-EAGAIN, REL_CODE_FULL, DROP_QUEUE_FULL, -EAGAIN},
		{-ENOMEM, REL_CODE_FULL, DROP_MEMORY_LIMIT, -EAGAIN},
		{-ENOBUFS, REL_CODE_FULL, DROP_MEMORY_LIMIT, -EAGAIN},
		{-ENOSPC, REL_CODE_NOSPC, DROP_MAX_CHANNELS, -ENOSPC},
		{-EMSGSIZE, REL_CODE_MSGSIZE, DROP_QUEUE_FULL, -EMSGSIZE},
		{-EINVAL, REL_CODE_INVAL, DROP_BAD_NAME, -EINVAL},
		{-EIO, REL_CODE_INVAL, DROP_BAD_NAME, -EINVAL},
	};
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(*want); i++) {
		assert_int_equal(rel_code_of(want[i].err), want[i].code);
		assert_int_equal(rel_drop_of(want[i].err), want[i].drop);
		assert_int_equal(rel_code_errno(rel_code_of(want[i].err)),
				 want[i].writer);
	}
	assert_int_equal(rel_code_of(0), REL_CODE_NONE);
	assert_int_equal(rel_code_errno(REL_CODE_NONE), 0);
	assert_int_equal(rel_code_errno(REL_CODE_MAX), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_code_survives_lost_ack),
		cmocka_unit_test(test_abandon_fails_waiting),
		cmocka_unit_test(test_full_channel_alone),
		cmocka_unit_test(test_refused_for_good),
		cmocka_unit_test(test_retry_backoff),
		cmocka_unit_test(test_refusal_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
