/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reliable delivery state machines (see include/reliable.h).  Cumulative
 * and selective acks, NAK on a gap, credit, RACK-style loss detection by
 * order of transmission, and a retransmission timer from the measured
 * round trip with exponential backoff.  Pure logic.
 * The sender's wait lists of messages a full receiver refused are
 * rel_wait.c's (rel_int.h), which hands back what leaves them: this file
 * alone puts a message on the stream or finishes it.
 */
#include <errno.h>
#include <string.h>

#include "rel_int.h"

/* a - b as a signed distance in psn space. */
static int32_t rel_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

void rel_tx_init(struct rel_tx *tx, uint32_t sess, uint32_t window,
		 uint32_t peer_timeout_ms)
{
	memset(tx, 0, sizeof(*tx));
	tx->sess = sess;
	tx->window = window ? window : REL_WINDOW_DEFAULT;
	/* the send-time ring and the sack bitmap cover REL_SACK_BITS */
	if (tx->window > REL_SACK_BITS)
		tx->window = REL_SACK_BITS;
	tx->credit = tx->window;
	tx->cwnd =
		REL_PIPE_DEFAULT < tx->window ? REL_PIPE_DEFAULT : tx->window;
	tx->rto_base = tx->rto_ms = REL_RTO_INIT_MS;
	tx->peer_timeout_ms = peer_timeout_ms;
	tx->done_tail = &tx->done;
}

/* Move m to the done list with status st. */
static void rel_tx_finish(struct rel_tx *tx, struct rel_msg *m, int st)
{
	m->status = st;
	m->next = NULL;
	*tx->done_tail = m;
	tx->done_tail = &m->next;
}

/* Give m its psns at the end of the stream (nfrag set). */
static void rel_tx_enqueue(struct rel_tx *tx, struct rel_msg *m, uint64_t now)
{
	m->first_psn = tx->end;
	tx->end += m->nfrag;
	m->next = NULL;
	if (!tx->head) {
		tx->head = m;
		/* Silence is measured from when we started waiting. */
		tx->heard_at = now;
	} else {
		tx->tail->next = m;
	}
	tx->tail = m;
}

void rel_tx_queue(struct rel_tx *tx, struct rel_msg *m, uint64_t now)
{
	if (!m->nfrag)
		m->nfrag = 1;
	m->order = ++tx->orders;
	m->retry = 0;
	if (!rel_wait_join(tx, m, now))
		rel_tx_enqueue(tx, m, now);
}

/* What went on the wire for psn (in [una, top): one slot each). */
static struct rel_sent *rel_tx_slot(struct rel_tx *tx, uint32_t psn)
{
	return &tx->sent[psn % REL_SACK_BITS];
}

/* Whether the receiver said it holds psn (a selective ack). */
static int rel_tx_sacked(const struct rel_tx *tx, uint32_t psn)
{
	uint32_t d = psn - tx->una - 1;

	return rel_diff(psn, tx->una) > 0 && rel_bit(&tx->sacked, d);
}

/*
 * Whether psn (not held) is lost: something put on the wire after its last
 * copy is known received.  If not, that copy may still be on its way.
 */
static int rel_tx_lost(const struct rel_tx *tx, uint32_t psn)
{
	return tx->sent[psn % REL_SACK_BITS].xmit < tx->delivered;
}

/*
 * The receiver has psn; keep the newest copy known received, whose round
 * trip is the freshest (*newest: its psn, if it is newer than any before).
 */
static void rel_tx_got(struct rel_tx *tx, uint32_t psn, uint32_t *newest,
		       int *any)
{
	uint64_t x = rel_tx_slot(tx, psn)->xmit;

	if (x > tx->delivered) {
		tx->delivered = x;
		*newest = psn;
		*any = 1;
	}
}

/* Recount what may be on the wire: not held, not known lost. */
static void rel_tx_count_pipe(struct rel_tx *tx)
{
	uint32_t p;

	tx->pipe = 0;
	for (p = tx->una; p != tx->top; p++)
		if (!rel_tx_sacked(tx, p) && !rel_tx_lost(tx, p))
			tx->pipe++;
}

/* Record that psn goes on the wire now. */
static void rel_tx_sent(struct rel_tx *tx, uint32_t psn, uint64_t now)
{
	struct rel_sent *s = rel_tx_slot(tx, psn);

	if (rel_diff(psn, tx->top) >= 0)
		s->n = 1;
	else if (s->n < UINT8_MAX)
		s->n++;
	s->at = now;
	s->xmit = ++tx->xmits;
}

/*
 * Fold the round trip of psn (just acked) into srtt and rttvar and derive
 * the timeout; a resent psn says nothing about which copy was acked (Karn).
 */
static void rel_tx_sample(struct rel_tx *tx, uint32_t psn, uint64_t now)
{
	struct rel_sent *s = rel_tx_slot(tx, psn);
	int64_t m, err;
	uint32_t rto;

	if (s->n != 1 || now < s->at)
		return;
	m = (int64_t)(now - s->at);
	if (m > REL_RTO_MAX_MS)
		m = REL_RTO_MAX_MS;
	if (!tx->srtt8) {
		tx->srtt8 = (uint32_t)(m << 3);
		tx->rttvar4 = (uint32_t)(m << 1);
	} else {
		err = m - (tx->srtt8 >> 3);
		tx->srtt8 = (uint32_t)((int64_t)tx->srtt8 + err);
		if (err < 0)
			err = -err;
		err -= tx->rttvar4 >> 2;
		tx->rttvar4 = (uint32_t)((int64_t)tx->rttvar4 + err);
	}
	rto = (tx->srtt8 >> 3) + tx->rttvar4;
	if (rto < REL_RTO_MIN_MS)
		rto = REL_RTO_MIN_MS;
	if (rto > REL_RTO_MAX_MS)
		rto = REL_RTO_MAX_MS;
	tx->rto_base = rto;
}

uint32_t rel_tx_srtt(const struct rel_tx *tx)
{
	return tx->srtt8 >> 3;
}

uint32_t rel_tx_inflight(const struct rel_tx *tx)
{
	return tx->top - tx->una;
}

int rel_tx_busy(const struct rel_tx *tx)
{
	return tx->head || tx->waiting;
}

/*
 * Where rel_tx_next would look for the next datagram (without moving
 * nxt): past what the receiver holds and what may still be on its way.
 * end when everything queued went out and none of it is known lost.
 */
static uint32_t rel_tx_scan(const struct rel_tx *tx)
{
	uint32_t p = tx->nxt;

	while (p != tx->end && rel_diff(p, tx->top) < 0 &&
	       (rel_tx_sacked(tx, p) || !rel_tx_lost(tx, p)))
		p++;
	return p;
}

/*
 * Everything queued went out and waits for acks: if the last of it or of
 * its resends is lost, no later datagram will show it, so a tail probe
 * goes (RACK-TLP, RFC 8985) rather than waiting for the retransmission
 * timeout, which a standing queue makes several round trips long.  RFC
 * 8985 waits 2 srtt to cover a delayed ack; ours asks for an immediate
 * one (REL_GO_LAST), so a quarter more than srtt will do, and a needless
 * probe costs one datagram.  One probe per silence, none when the
 * timeout comes first; re-armed by every ack.
 */
static void rel_tx_arm_tail(struct rel_tx *tx, uint64_t now)
{
	uint32_t pto = (tx->srtt8 >> 3) + (tx->srtt8 >> 5);

	tx->pto_at = 0;
	if (tx->tlp_out || !tx->srtt8 || tx->top == tx->una)
		return;
	if (pto < REL_RTO_MIN_MS)
		pto = REL_RTO_MIN_MS;
	if (!tx->rto_at || now + pto < tx->rto_at)
		tx->pto_at = now + pto;
}

int rel_tx_next(struct rel_tx *tx, uint64_t now, struct rel_msg **m,
		uint32_t *frag, uint32_t *psn)
{
	uint32_t limit = tx->window < tx->credit ? tx->window : tx->credit;
	int probe = tx->probe;
	struct rel_msg *x;
	uint32_t next;

	/* With no credit, one datagram still goes: the probe at una. */
	if (!limit)
		limit = 1;
	/* Going back: only what is lost goes again, not what the receiver
	 * holds or what may still be on its way; the timer's probe (nxt is
	 * una then) goes regardless. */
	tx->probe = 0;
	if (!probe)
		tx->nxt = rel_tx_scan(tx);
	if (tx->nxt == tx->end || tx->nxt - tx->una >= limit)
		return 0;
	/* A short queue on the way keeps a resent hole from waiting behind
	 * a whole window; the span past una may be longer (see cwnd). */
	if (tx->pipe >= tx->cwnd && !probe)
		return 0;
	for (x = tx->head; x; x = x->next)
		if (tx->nxt - x->first_psn < x->nfrag)
			break;
	if (!x)
		return 0; /* cannot happen: psns between una and end are queued
			   */
	*m = x;
	*frag = tx->nxt - x->first_psn;
	*psn = tx->nxt;
	if (rel_diff(tx->nxt, tx->top) < 0)
		tx->retrans++;
	rel_tx_sent(tx, tx->nxt, now);
	tx->pipe++;
	tx->nxt++;
	if (rel_diff(tx->nxt, tx->top) > 0)
		tx->top = tx->nxt;
	if (!tx->rto_at)
		tx->rto_at = now + tx->rto_ms;
	next = rel_tx_scan(tx);
	if (next == tx->end) {
		rel_tx_arm_tail(tx, now);
		return REL_GO_LAST;
	}
	/* the span or the cwnd is full */
	if (next - tx->una >= limit || tx->pipe >= tx->cwnd)
		return REL_GO_LAST;
	return REL_GO;
}

int rel_tx_ack(struct rel_tx *tx, uint32_t sess, uint32_t ack, uint32_t credit,
	       int nak, rel_bits sack, const rel_codes *codes, uint64_t now)
{
	enum rel_code code;
	uint32_t newest = 0;
	int fresh = 0;
	struct rel_msg *m;

	if (sess != tx->sess)
		return 0;
	tx->heard_at = now;
	tx->credit = credit;
	/* Only an ack within what was sent counts. */
	if (rel_diff(ack, tx->una) > 0 && rel_diff(ack, tx->top) <= 0) {
		for (; tx->una != ack; tx->una++)
			rel_tx_got(tx, tx->una, &newest, &fresh);
		if (tx->fwd_on && rel_diff(tx->una, tx->fwd) > 0)
			tx->fwd_on = 0; /* the receiver moved past the mark */
		if (rel_diff(tx->nxt, tx->una) < 0)
			tx->nxt = tx->una;
		tx->rto_ms = tx->rto_base;
		/* Armed while anything sent is unacked, even if going back
		 * skipped it (it may be lost too). */
		tx->rto_at = tx->top != tx->una ? now + tx->rto_ms : 0;
		while ((m = tx->head) &&
		       rel_diff(tx->una, m->first_psn + m->nfrag) >= 0) {
			tx->head = m->next;
			if (!tx->head)
				tx->tail = NULL;
			/* A refusal is the code of the psn that completed
			 * the message at the receiver: its last one. */
			code = codes ? rel_codes_get(codes, ack,
						     m->first_psn + m->nfrag -
							     1)
				     : REL_CODE_NONE;
			if (!rel_wait_settle(tx, m, code, now))
				rel_tx_finish(tx, m, rel_code_errno(code));
		}
	}
	/* The bitmap is relative to ack: only one about una tells us now. */
	if (ack == tx->una) {
		uint32_t i;

		tx->sacked = sack;
		for (i = 0; i < REL_SACK_BITS; i++)
			if (!sack.w[i / 64])
				i |= 63; /* skip an empty word */
			else if (rel_bit(&sack, i))
				rel_tx_got(tx, ack + 1 + i, &newest, &fresh);
	}
	/* Not ack - 1: behind a gap it may have waited for the hole. */
	if (fresh)
		rel_tx_sample(tx, newest, now);
	rel_tx_count_pipe(tx);
	/* Something newer is known received, or the receiver saw a gap:
	 * go back now for what that shows lost instead of waiting for the
	 * timer (rel_tx_next picks the lost ones). */
	if ((fresh || nak) && ack == tx->una && tx->top != tx->una) {
		tx->nxt = tx->una;
		if (nak)
			tx->rto_at = now + tx->rto_ms;
	}
	if (fresh)
		tx->tlp_out = 0;
	if (rel_tx_scan(tx) == tx->end)
		rel_tx_arm_tail(tx, now);
	else
		tx->pto_at = 0; /* something goes now, and is the new tail */
	return 1;
}

/* Move every queued message to the done list with status err. */
static void rel_tx_fail_all(struct rel_tx *tx, struct rel_msg *m, int err)
{
	while (m) {
		struct rel_msg *next = m->next;

		rel_tx_finish(tx, m, err);
		m = next;
	}
}

void rel_tx_reset(struct rel_tx *tx, int err, uint32_t new_sess)
{
	struct rel_msg *m, *done = tx->done, *waiting = tx->waiting;
	struct rel_msg **done_tail = tx->done_tail;
	uint32_t window = tx->window, pt = tx->peer_timeout_ms;
	uint64_t retrans = tx->retrans, timeouts = tx->timeouts;
	uint64_t probes = tx->tail_probes, rtos = tx->rtos;
	uint64_t refused = tx->refused;

	if (!done)
		done_tail = NULL;
	m = tx->head;
	tx->head = NULL;
	rel_tx_init(tx, new_sess, window, pt);
	tx->retrans = retrans;
	tx->timeouts = timeouts;
	tx->tail_probes = probes;
	tx->rtos = rtos;
	tx->refused = refused;
	if (done) {
		tx->done = done;
		tx->done_tail = done_tail;
	}
	rel_tx_fail_all(tx, m, err);
	rel_tx_fail_all(tx, rel_wait_fail(waiting), err);
}

void rel_tx_abandon(struct rel_tx *tx, int err)
{
	struct rel_msg *m = tx->head, *waiting = tx->waiting;

	tx->head = tx->tail = NULL;
	/* Those waiting for room fail too: their peer went away. */
	tx->waiting = NULL;
	tx->nwaiting = 0;
	rel_tx_fail_all(tx, m, err);
	rel_tx_fail_all(tx, rel_wait_fail(waiting), err);
	/* Nothing in flight is wanted any more: the next psn starts afresh,
	 * and says so (FWD) until it is acked. */
	tx->una = tx->nxt = tx->top = tx->end;
	tx->pipe = 0;
	memset(&tx->sacked, 0, sizeof(tx->sacked));
	tx->probe = tx->tlp_out = 0;
	tx->rto_at = tx->pto_at = 0;
	tx->rto_ms = tx->rto_base;
	tx->fwd = tx->end;
	tx->fwd_on = 1;
}

int rel_tx_quiet(const struct rel_tx *tx)
{
	return tx->una == tx->top && tx->top == tx->end && !tx->head &&
	       !tx->waiting && !tx->done;
}

void rel_tx_resume(struct rel_tx *tx, uint32_t sess, uint32_t psn,
		   uint32_t window, uint32_t peer_timeout_ms)
{
	rel_tx_init(tx, sess, window, peer_timeout_ms);
	tx->una = tx->nxt = tx->top = tx->end = psn;
	/* the peer's receiver may have moved on less far (its own copy
	 * let go before ours was acked): the mark makes it follow */
	tx->fwd = psn;
	tx->fwd_on = 1;
}

int rel_tx_fwd(const struct rel_tx *tx, uint32_t psn)
{
	return tx->fwd_on && psn == tx->fwd;
}

int rel_tx_tick(struct rel_tx *tx, uint64_t now)
{
	struct rel_msg *back, *m;
	int wait_ms = rel_wait_tick(tx, now, &back);
	uint64_t due;
	int64_t left;

	/* The channels whose wait is over go again, in the order found. */
	while ((m = back)) {
		back = m->next;
		rel_tx_enqueue(tx, m, now);
	}
	/* Silence counts only while something waits for an ack. */
	if (!tx->head)
		return wait_ms;
	due = tx->heard_at + tx->peer_timeout_ms;
	if (now >= due) {
		tx->timeouts++;
		rel_tx_abandon(tx, -ETIMEDOUT);
		return -1;
	}
	if (tx->pto_at && now >= tx->pto_at &&
	    (!tx->rto_at || now < tx->rto_at)) {
		/* Tail probe: una, as the timer's; no backoff, and the
		 * timer waits for the probe's answer. */
		tx->pto_at = 0;
		tx->tlp_out = 1;
		tx->nxt = tx->una;
		tx->probe = 1;
		tx->rto_at = now + tx->rto_ms;
		tx->tail_probes++;
	} else if (tx->rto_at && now >= tx->rto_at) {
		tx->pto_at = 0;
		tx->rtos++;
		/* Silence: probe with una; its ack shows what else is lost
		 * (resending all not held would duplicate what is queued). */
		tx->nxt = tx->una;
		tx->probe = 1;
		tx->rto_ms *= 2;
		if (tx->rto_ms > REL_RTO_MAX_MS)
			tx->rto_ms = REL_RTO_MAX_MS;
		tx->rto_at = now + tx->rto_ms;
	}
	if (tx->rto_at && tx->rto_at < due)
		due = tx->rto_at;
	if (tx->pto_at && tx->pto_at < due)
		due = tx->pto_at;
	if (wait_ms >= 0 && now + (uint64_t)wait_ms < due)
		due = now + (uint64_t)wait_ms;
	left = (int64_t)(due - now);
	return left > 0 ? (int)left : 0;
}

struct rel_msg *rel_tx_take_done(struct rel_tx *tx)
{
	struct rel_msg *m = tx->done;

	tx->done = NULL;
	tx->done_tail = &tx->done;
	return m;
}

void rel_rx_init(struct rel_rx *rx, uint32_t window)
{
	memset(rx, 0, sizeof(*rx));
	rx->window = window ? window : REL_WINDOW_DEFAULT;
}

void rel_rx_forget(struct rel_rx *rx)
{
	rx->joined = 0;
	memset(&rx->ahead, 0, sizeof(rx->ahead));
	rx->blocked = 0;
	rx->ack_due = rx->nak_due = rx->nak_sent = rx->ack_now = 0;
}

void rel_rx_join(struct rel_rx *rx, uint32_t sess)
{
	rel_rx_forget(rx);
	rx->joined = 1;
	rx->sess = sess;
	rx->nxt = 0;
	rx->ack_now = 1; /* the first ack of a session goes at once */
}

int rel_rx_quiet(const struct rel_rx *rx)
{
	return rx->joined && !rel_bits_any(&rx->ahead) && !rx->ncodes &&
	       !rx->blocked;
}

void rel_rx_resume(struct rel_rx *rx, uint32_t sess, uint32_t psn,
		   uint32_t window)
{
	rel_rx_init(rx, window);
	rel_rx_join(rx, sess);
	rx->nxt = psn;
}

int rel_rx_forward(struct rel_rx *rx, uint32_t sess, uint32_t psn)
{
	if (!rx->joined || sess != rx->sess || rel_diff(psn, rx->nxt) <= 0)
		return 0;
	/* What was held before psn belongs to messages the sender failed;
	 * what is held past it was kept relative to the old nxt. */
	rx->nxt = psn;
	rx->blocked = 0;
	rx->nak_sent = 0;
	rx->nak_due = 0;
	memset(&rx->ahead, 0, sizeof(rx->ahead));
	rx->ack_due = 1;
	rx->ack_now = 1;
	return 1;
}

enum rel_verdict rel_rx_check(struct rel_rx *rx, uint32_t sess, uint32_t psn)
{
	uint32_t d;

	/* Only the session the bootstrap agreed on: a datagram never names
	 * a new one (a forged one would take the stream away). */
	if (!rx->joined || sess != rx->sess)
		return REL_FOREIGN;
	rx->arrived++;
	d = psn - rx->nxt;
	if (rel_bit(&rx->ahead, d)) {
		rx->ack_due = 1;
		rx->ack_now = 1;
		rx->dups++; /* held already (at nxt: the caller drains it) */
		return REL_DUP;
	}
	if (psn == rx->nxt)
		return REL_ACCEPT;
	rx->ack_due = 1;
	if (rel_diff(psn, rx->nxt) < 0) {
		rx->ack_now = 1; /* our ack was lost or late */
		rx->dups++;
		return REL_DUP;
	}
	if (!rx->nak_sent) {
		rx->nak_due = 1;
		rx->nak_sent = 1;
	}
	/* Keep it, unless blocked: then only the probe at nxt matters. */
	if (d < REL_SACK_BITS && !rx->blocked) {
		rel_bit_put(&rx->ahead, d, 1);
		return REL_AHEAD;
	}
	return REL_OOO;
}

/* Record code for psn nxt, which takes the slot of nxt - REL_SACK_BITS. */
static void rel_rx_put_code(struct rel_rx *rx, enum rel_code code)
{
	uint8_t *c = &rx->code[rx->nxt % REL_SACK_BITS];

	rx->ncodes -= *c != REL_CODE_NONE;
	*c = (uint8_t)code;
	rx->ncodes += code != REL_CODE_NONE;
}

/* Move past nxt, whose message was taken or refused with code. */
static void rel_rx_step(struct rel_rx *rx, enum rel_code code)
{
	rel_rx_put_code(rx, code);
	rx->nxt++;
	rx->ahead = rel_bits_down(rx->ahead);
	rx->ack_due = 1;
	rx->nak_sent = 0;
	rx->nak_due = 0;
	/* Stopped at a gap with more held past it: say so now, or the
	 * sender only learns at its timeout. */
	if (rel_bits_any(&rx->ahead) && !rel_bit(&rx->ahead, 0)) {
		rx->nak_due = 1;
		rx->nak_sent = 1;
	}
}

void rel_rx_advance(struct rel_rx *rx)
{
	rel_rx_step(rx, REL_CODE_NONE);
}

void rel_rx_refuse(struct rel_rx *rx, enum rel_code code)
{
	rel_rx_step(rx, code);
	rx->ack_now = 1; /* its writer waits for the answer */
}

int rel_rx_ready(const struct rel_rx *rx)
{
	return rel_bit(&rx->ahead, 0);
}

void rel_rx_unhold(struct rel_rx *rx, uint32_t psn)
{
	uint32_t d = psn - rx->nxt;

	if (d < REL_SACK_BITS)
		rel_bit_put(&rx->ahead, d, 0);
}

rel_bits rel_rx_sack(const struct rel_rx *rx)
{
	return rel_bits_down(rx->ahead);
}

uint32_t rel_rx_credit(const struct rel_rx *rx)
{
	return rx->blocked ? 0 : rx->window;
}

void rel_rx_acked(struct rel_rx *rx)
{
	rx->ack_due = 0;
	rx->nak_due = 0;
	rx->ack_now = 0;
	rx->arrived = 0;
}

void rel_rx_ask_ack(struct rel_rx *rx)
{
	if (!rx->joined)
		return;
	rx->ack_due = 1;
	rx->ack_now = 1;
}

int rel_rx_ack_urgent(const struct rel_rx *rx)
{
	return rx->ack_due &&
	       (rx->nak_due || rx->ack_now || rx->arrived >= REL_ACK_EVERY);
}

uint32_t rel_tx_sess(const struct rel_tx *tx)
{
	return tx->sess;
}

int rel_tx_would_block(const struct rel_tx *tx, const char *chan)
{
	return (tx->head && !tx->credit) || rel_wait_has(tx, chan);
}

int rel_rx_ack_wanted(const struct rel_rx *rx, int tick)
{
	return rx->joined && (tick ? rx->ack_due : rel_rx_ack_urgent(rx));
}

int rel_rx_ack_pending(const struct rel_rx *rx)
{
	return rx->ack_due;
}

uint32_t rel_rx_next(const struct rel_rx *rx)
{
	return rx->nxt;
}

/* The refusals of [nxt - REL_SACK_BITS, nxt), as an ack carries them. */
static void rel_rx_codes(const struct rel_rx *rx, rel_codes *out)
{
	uint32_t base = rx->nxt - REL_SACK_BITS, i;
	unsigned c;
	int j;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < REL_SACK_BITS; i++) {
		c = rx->code[(base + i) % REL_SACK_BITS];
		for (j = 0; j < REL_CODE_PLANES; j++)
			if (c >> j & 1)
				rel_bit_put(&out->plane[j], i, 1);
	}
}

void rel_rx_ack_take(struct rel_rx *rx, int room, struct rel_ack *a)
{
	memset(a, 0, sizeof(*a));
	a->credit = rel_rx_credit(rx);
	if (!rx->joined)
		return;
	a->bits = rel_rx_sack(rx);
	if ((rel_bits_any(&a->bits) || rx->ncodes) && !room) {
		if (rx->ack_due)
			rx->ack_now = 1;
		return;
	}
	a->sack = rel_bits_any(&a->bits);
	a->refuse = rx->ncodes != 0;
	if (a->refuse)
		rel_rx_codes(rx, &a->codes);
	a->ack = 1;
	a->sess = rx->sess;
	a->nxt = rx->nxt;
	a->nak = rx->nak_due;
	rel_rx_acked(rx);
}

void rel_rx_block(struct rel_rx *rx)
{
	rx->blocked = 1;
}

void rel_rx_unblock(struct rel_rx *rx)
{
	rx->blocked = 0;
	rel_rx_advance(rx);
	rx->ack_now = 1;
}

void rel_rx_unblock_refused(struct rel_rx *rx, enum rel_code code)
{
	rx->blocked = 0;
	rel_rx_refuse(rx, code);
}

void rel_rx_drop(struct rel_rx *rx)
{
	rx->blocked = 0;
	memset(&rx->ahead, 0, sizeof(rx->ahead));
	memset(rx->code, 0, sizeof(rx->code));
	rx->ncodes = 0;
}

void rel_stats_get(const struct rel_tx *tx, const struct rel_rx *rx,
		   struct rel_stats *s)
{
	s->window = tx->window < tx->credit ? tx->window : tx->credit;
	s->inflight = rel_tx_inflight(tx);
	s->srtt_ms = rel_tx_srtt(tx);
	s->rto_ms = tx->rto_ms;
	s->retrans = tx->retrans;
	s->dups = rx->dups;
	s->timeouts = tx->timeouts;
	s->probes = tx->tail_probes;
	s->rtos = tx->rtos;
	s->waiting = tx->nwaiting;
	s->refused = tx->refused;
}
