/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reliable delivery over UD: the per-peer state machines, pure logic (no
 * verbs, no threads, no clock of its own; callers pass now in ms and hold
 * whatever lock guards the state).  Modelled on UCX's UD transport: every
 * datagram of a reliable stream carries a packet sequence number (psn);
 * the receiver takes datagrams only in psn order (go-back-N: anything out
 * of order is dropped and answered with a NAK), acks cumulatively
 * (ack = the next psn it expects) and advertises credit (datagrams it is
 * willing to take now; 0 while a whole message is being offered to its
 * queue, a moment).
 * The sender keeps up to cwnd datagrams on the wire (sent, neither known
 * received nor known lost) within a window of psns past the oldest unacked
 * one; the window is the longer, so that holes being repaired do not stop
 * new datagrams, while the short queue on the way keeps a resent hole from
 * waiting behind a whole window.  It resends what acks show lost, probes
 * with the oldest unacked one when its timer fires (exponential backoff),
 * and fails its messages with ETIMEDOUT when the peer stays silent for
 * peer_timeout.
 *
 * Selective acks: the receiver keeps (the caller stores) datagrams that
 * arrive beyond a gap, up to REL_SACK_BITS ahead, and every ack carries a
 * bitmap of them; going back, the sender skips what the bitmap covers, so
 * one loss costs one retransmission instead of a window of them.
 *
 * Which psns are lost is decided as RACK (RFC 8985) does, with the order
 * of transmission for time, since a fabric does not reorder: a psn is lost
 * once a datagram put on the wire after its last copy is known received.
 * So a hole goes again once per lost copy, though the receiver NAKs at
 * every gap it drains to; a lost retransmission goes again at the next
 * ack, not at the timer; and when the timer fires, one probe at una is
 * enough, its ack showing what else is lost (resending the window would
 * duplicate whatever was only queued).  The timer follows the measured
 * round trip (srtt + 4 rttvar, Jacobson/Karels; samples from the newest
 * datagram an ack reports, if sent once: Karn).  Once all that is queued
 * went out, a loss at its end has nothing after it to show it: a tail
 * probe (RACK-TLP) goes at 1.25 srtt, before the timer.
 *
 * Sessions.  A stream is named by a session number that both ends agree
 * on through the bootstrap, never through a datagram: every daemon picks a
 * random boot id when it starts, and every hello carries it (authenticated
 * when there is a secret: the TCP hellos are MACed, and with bootstrap =
 * multicast a boot id is trusted only once its challenge is answered).  The
 * stream from A to B is then named by a function of A's and B's boot ids
 * (an HMAC under the secret when there is one, so nobody without it can
 * name the stream), which each end computes on its own when the bootstrap
 * meets the other: the sender starts it at psn 0 (rel_tx_reset) and the
 * receiver follows it from psn 0 (rel_rx_join).  A datagram of any other
 * session is dropped (REL_FOREIGN, counted): one of an old incarnation
 * still in flight, or a forgery, which therefore cannot move the stream.
 *
 * So a session lasts as long as both incarnations do, and a reset within
 * it (the peer went down and came back, or stayed silent for peer_timeout)
 * starts no new session: the sender fails what was queued and goes on at
 * the next psn (rel_tx_abandon), and the datagram at that psn carries a
 * forward mark (FWD), which tells the receiver that nothing before it will
 * come (rel_rx_forward: it drops what it held of the abandoned messages
 * and moves on), as SCTP's FORWARD TSN does.  It goes as often as that
 * datagram does, so a lost mark is repaired like lost data.  psn
 * comparisons use serial-number arithmetic, so wrapping is harmless.
 *
 * Refusals.  A whole message the receiver's channel queue refuses is not
 * held (that stopped every channel behind one full one): its psns are
 * consumed and acked like any others, and the refusal goes with the ack
 * as a code for the psn that completed it (REL_CODE_*).  The receiver
 * keeps the codes of the last REL_SACK_BITS psns: the sender's una is
 * never further back than that (top - una <= window <= REL_SACK_BITS),
 * so every ack that may be the first to cover a refused psn carries them.
 * They travel in standalone ACKs only; while any is in [nxt -
 * REL_SACK_BITS, nxt) no ack goes in a DATA datagram (as with the sack),
 * so losing acks loses nothing.  The sender, when an ack covers the last
 * psn of a message: a permanent code fails its writer with its errno;
 * REL_CODE_FULL (no room now) puts it on its channel's wait list, in the
 * order the messages were first queued.  Each channel that waits sends
 * its oldest message again, flagged retry, one at a time, after a
 * backoff (REL_RETRY_MIN_MS doubling to REL_RETRY_MAX_MS), and new
 * messages to it join the list instead of the stream; its writers stay
 * parked (backpressure: the receiver answers, so no peer timeout).  To
 * keep a channel's order, once the receiver refused one message of
 * channel X for FULL it refuses FULL every later one to X not flagged
 * retry, until a retry to X goes in: psns are taken in order, and while
 * X waits only retries to X go, so nothing overtakes on X.  Other
 * channels go on meanwhile.
 */
#ifndef IBFS_RELIABLE_H
#define IBFS_RELIABLE_H

#include <stddef.h>
#include <stdint.h>

#include "peer.h"

/* psns past the oldest unacked one, per peer */
#define REL_WINDOW_DEFAULT 512
/* datagrams that may be on the wire at once */
#define REL_PIPE_DEFAULT 256
/* retransmission timeout before a round trip is measured (the first
 * window may queue) */
#define REL_RTO_INIT_MS 100
/* its floor after: two timer ticks (a needless timeout costs one probe) */
#define REL_RTO_MIN_MS 10
/* backoff ceiling */
#define REL_RTO_MAX_MS 1000
/* how far past a gap a receiver keeps */
#define REL_SACK_BITS  512
#define REL_SACK_WORDS (REL_SACK_BITS / 64)
#define REL_ACK_EVERY  32 /* datagrams arrived before an ack goes at once */
/* a channel whose queue is full is tried again after this, doubling */
#define REL_RETRY_MIN_MS 10
#define REL_RETRY_MAX_MS 250

/* Why the receiver refused a message (its channel queue said no). */
enum rel_code {
	REL_CODE_NONE = 0, /* taken */
	REL_CODE_FULL,	   /* no room now: the sender tries again */
	REL_CODE_NOSPC,	   /* for good: max_channels reached (ENOSPC) */
	REL_CODE_INVAL,	   /* for good: a name or message refused (EINVAL) */
	REL_CODE_MSGSIZE,  /* for good: larger than its queue (EMSGSIZE) */
	REL_CODE_MAX = 7,  /* the wire has REL_CODE_PLANES bits for one */
};
#define REL_CODE_PLANES 3

/* The code for deliver's refusal err (-errno; see tp_ops.deliver). */
enum rel_code rel_code_of(int err);

/* The errno (negative) a writer gets for a permanent code. */
int rel_code_errno(enum rel_code c);

/* The drop that deliver's refusal err (-errno) counts as. */
enum peer_drop rel_drop_of(int err);

/* A bitmap of REL_SACK_BITS psns (word 0 holds bits 0..63). */
typedef struct {
	uint64_t w[REL_SACK_WORDS];
} rel_bits;

/* Bit i of b (0 past the end). */
static inline int rel_bit(const rel_bits *b, uint32_t i)
{
	return i < REL_SACK_BITS && (b->w[i / 64] >> (i % 64)) & 1;
}

/* Set or clear bit i (< REL_SACK_BITS) of b. */
static inline void rel_bit_put(rel_bits *b, uint32_t i, int on)
{
	uint64_t m = (uint64_t)1 << (i % 64);

	b->w[i / 64] = on ? b->w[i / 64] | m : b->w[i / 64] & ~m;
}

/* Whether any bit of b is set. */
static inline int rel_bits_any(const rel_bits *b)
{
	uint64_t any = 0;
	int k;

	for (k = 0; k < REL_SACK_WORDS; k++)
		any |= b->w[k];
	return any != 0;
}

/* b shifted down by one: bit i + 1 becomes bit i. */
static inline rel_bits rel_bits_down(rel_bits b)
{
	int k;

	for (k = 0; k < REL_SACK_WORDS; k++)
		b.w[k] = b.w[k] >> 1 |
			 (k + 1 < REL_SACK_WORDS ? b.w[k + 1] << 63 : 0);
	return b;
}

/* The refusal codes of REL_SACK_BITS psns: bit j of psn base + i's code
 * is bit i of plane[j], base = ack - REL_SACK_BITS. */
typedef struct {
	rel_bits plane[REL_CODE_PLANES];
} rel_codes;

/* The code of psn in c, for an ack of ack (0 outside its span). */
enum rel_code rel_codes_get(const rel_codes *c, uint32_t ack, uint32_t psn);

/* The last copy of one psn put on the wire. */
struct rel_sent {
	uint64_t xmit; /* rel_tx.xmits when it went */
	uint64_t at;   /* ... and the time (ms) */
	uint8_t n;     /* copies of this psn so far (max 255) */
};

/* One message a writer waits for; freed by whoever calls done. */
struct rel_msg {
	struct rel_msg *next;
	uint32_t first_psn; /* psn of fragment 0 */
	uint32_t nfrag;
	uint32_t msg_id; /* wire msg_id, fixed across retransmissions */
	uint32_t mtu;	 /* datagram size it was cut for */
	int status;	 /* 0 acked, -ETIMEDOUT, -ENOTCONN, a refusal */
	char chan[64];
	uint64_t order;	       /* when first queued (keeps a channel's order) */
	int retry;	       /* sent flagged retry: heads a channel's wait */
	struct rel_msg *rnext; /* the next waiting message of its channel */
	struct rel_msg *rchan; /* a head's: the next waiting channel */
	uint64_t due;	       /* a head's: when it goes again */
	uint32_t backoff;      /* a head's: the wait after a refusal */
	int out;	       /* a head's: in the stream now */
	void *data;	       /* the sender's own copy */
	size_t len;
	void (*done)(void *arg, int status, size_t len);
	void *arg;
};

/* One peer's sending stream.  Every field under the caller's lock (the
 * transport's rel.lock, struct tp_rel), as is every rel_msg on it. */
struct rel_tx {
	uint32_t sess;	    /* this stream's session number */
	uint32_t una;	    /* oldest unacked psn */
	uint32_t nxt;	    /* next psn to (re)send */
	uint32_t top;	    /* one past the highest psn ever sent */
	uint32_t end;	    /* one past the last queued psn */
	uint32_t window;    /* our limit on top - una */
	uint32_t credit;    /* the receiver's limit (last ack) */
	uint32_t cwnd;	    /* our limit on pipe */
	uint32_t pipe;	    /* sent, not known received, not known lost */
	rel_bits sacked;    /* bit i: una + 1 + i is held by the receiver */
	int probe;	    /* the timer fired: resend una, lost or not */
	uint32_t rto_base;  /* timeout from the measured round trip */
	uint32_t rto_ms;    /* current timeout (rto_base, backed off) */
	uint32_t srtt8;	    /* smoothed round trip, 1/8 ms (0: no sample) */
	uint32_t rttvar4;   /* its mean deviation, x4, in ms */
	uint64_t xmits;	    /* datagrams put on the wire, ever */
	uint64_t delivered; /* highest xmit of a copy known received */
	struct rel_sent sent[REL_SACK_BITS]; /* by psn mod REL_SACK_BITS */
	uint64_t rto_at;   /* when to go back to una; 0 = not armed */
	uint64_t pto_at;   /* tail probe due (all sent); 0 = not armed */
	int tlp_out;	   /* a tail probe went, no news since */
	uint64_t heard_at; /* last ack of this session, or queue start */
	uint32_t fwd;	   /* first psn after the last abandon ... */
	int fwd_on;	   /* ... while not acked: its datagram says FWD */
	uint32_t peer_timeout_ms;
	struct rel_msg *head, *tail; /* queued, in psn order */
	struct rel_msg *done;	     /* finished, for rel_tx_take_done */
	struct rel_msg **done_tail;
	struct rel_msg *waiting;    /* heads of the channels that wait */
	uint64_t orders;	    /* messages queued, ever */
	uint64_t nwaiting;	    /* messages waiting for room (gauge) */
	uint64_t retrans, timeouts; /* counters */
	uint64_t tail_probes, rtos; /* ... probes, timer expiries */
	uint64_t refused;	    /* ... refusals for a full queue */
};

/* Fresh sender state for session sess. */
void rel_tx_init(struct rel_tx *tx, uint32_t sess, uint32_t window,
		 uint32_t peer_timeout_ms);

/* Append m (nfrag set); assigns its psns.  Starts the liveness clock.
 * While m's channel waits for room at the receiver, m joins its wait
 * list instead. */
void rel_tx_queue(struct rel_tx *tx, struct rel_msg *m, uint64_t now);

enum rel_go {
	REL_GO = 1,  /* a datagram to send; more may follow */
	REL_GO_LAST, /* ... the last that may go now: ask for an ack in
		      * it, or the sender learns of a loss near it only
		      * at the receiver's timer tick or at ours */
};

/*
 * The next datagram to put on the wire now, if the window and credit let
 * one go: returns REL_GO or REL_GO_LAST with *m, *frag and *psn set (and
 * counts a retransmission when psn was sent before), 0 when nothing may
 * go.
 */
int rel_tx_next(struct rel_tx *tx, uint64_t now, struct rel_msg **m,
		uint32_t *frag, uint32_t *psn);

/*
 * An ack from the peer for session sess: ack is the next psn it expects,
 * credit what it takes now, nak that it saw a gap at ack, sack the psns
 * past ack it holds (bit i: ack + 1 + i), codes the refusals of the
 * REL_SACK_BITS psns before ack (NULL: none).  Messages wholly acked move
 * to the done list with status 0 or their refusal's errno, or, refused
 * for a full queue, to their channel's wait list.  Returns 1 when sess
 * is ours.
 */
int rel_tx_ack(struct rel_tx *tx, uint32_t sess, uint32_t ack, uint32_t credit,
	       int nak, rel_bits sack, const rel_codes *codes, uint64_t now);

/*
 * Timers: the retransmission timeout (go back to una, back off), the peer
 * timeout (every queued message fails -ETIMEDOUT: rel_tx_abandon; only
 * while something is on the wire: a channel that waits for room is not
 * silence) and the retries of waiting channels.
 * Returns ms until the next timer, or -1 for none.
 */
int rel_tx_tick(struct rel_tx *tx, uint64_t now);

/* Fail every queued message with err and start session new_sess at psn 0
 * (the bootstrap met a new incarnation of either end). */
void rel_tx_reset(struct rel_tx *tx, int err, uint32_t new_sess);

/* Fail every queued message with err, in the same session: what comes
 * next goes on at the next psn, its first datagram marked FWD. */
void rel_tx_abandon(struct rel_tx *tx, int err);

/*
 * Whether the stream may be let go: nothing queued, waiting, finished
 * and not taken, or unacked.  Where it stands is then its session and
 * nxt alone, and rel_tx_resume makes it again (the transport frees the
 * streams of a peer that idled out).
 */
int rel_tx_quiet(const struct rel_tx *tx);

/* Fresh sender state (as rel_tx_init) going on in session sess at psn,
 * its first datagram marked FWD, as after rel_tx_abandon. */
void rel_tx_resume(struct rel_tx *tx, uint32_t sess, uint32_t psn,
		   uint32_t window, uint32_t peer_timeout_ms);

/* Whether the datagram at psn must carry the forward mark. */
int rel_tx_fwd(const struct rel_tx *tx, uint32_t psn);

/* Detach the finished messages (oldest first); the caller calls done. */
struct rel_msg *rel_tx_take_done(struct rel_tx *tx);

/* Smoothed round trip in ms (0 before the first sample). */
uint32_t rel_tx_srtt(const struct rel_tx *tx);

/* Datagrams in flight (sent, not acked). */
uint32_t rel_tx_inflight(const struct rel_tx *tx);

/* Whether messages are waiting for acks or for room. */
int rel_tx_busy(const struct rel_tx *tx);

/* The session number the stream sends under now. */
uint32_t rel_tx_sess(const struct rel_tx *tx);

/* Whether a new message to chan would only wait: messages in flight and
 * no credit, or chan waits for room at the receiver. */
int rel_tx_would_block(const struct rel_tx *tx, const char *chan);

enum rel_verdict {
	REL_ACCEPT = 1, /* in order: process it, then rel_rx_advance */
	REL_DUP,	/* seen before: drop, ack again */
	REL_OOO,	/* beyond a gap: drop */
	REL_FOREIGN,	/* not the session agreed (or none yet): drop, count */
	REL_AHEAD,	/* beyond a gap, close: the caller keeps it for later
			 * (or calls rel_rx_unhold) */
};

/* One peer's receiving stream: every field under the caller's lock (the
 * transport's rel.lock). */
struct rel_rx {
	int joined;		     /* sess is valid */
	uint32_t sess;		     /* the sender's session we follow */
	uint32_t nxt;		     /* next psn expected */
	uint32_t window;	     /* credit advertised while not blocked */
	int blocked;		     /* a whole message waits for queue space */
	int ack_due;		     /* an ack should go out */
	int ack_now;		     /* ... at once, not at the next tick */
	uint32_t arrived;	     /* datagrams of the stream since the last
				      * ack, taken or kept past a gap */
	int nak_due;		     /* ... saying there is a gap at nxt */
	int nak_sent;		     /* a NAK for this nxt went already */
	rel_bits ahead;		     /* bit i: the caller holds psn nxt + i */
	uint8_t code[REL_SACK_BITS]; /* by psn mod REL_SACK_BITS: the
				      * refusals of [nxt - REL_SACK_BITS,
				      * nxt) */
	uint32_t ncodes;	     /* ... how many are not REL_CODE_NONE */
	uint64_t dups;		     /* counter */
};

void rel_rx_init(struct rel_rx *rx, uint32_t window);

/* Forget the session: nothing is taken until the next rel_rx_join. */
void rel_rx_forget(struct rel_rx *rx);

/* Follow session sess from psn 0: the bootstrap met the sender's new
 * incarnation (the caller drops what it held of the old one). */
void rel_rx_join(struct rel_rx *rx, uint32_t sess);

/* Whether the stream may be let go: joined, nothing held past a gap, no
 * refusal code that an ack may still owe, no message blocked. */
int rel_rx_quiet(const struct rel_rx *rx);

/* Fresh receiver state following session sess from psn on: a stream let
 * go while quiet (rel_rx_quiet) and made again. */
void rel_rx_resume(struct rel_rx *rx, uint32_t sess, uint32_t psn,
		   uint32_t window);

/*
 * A datagram (sess, psn) marked FWD: nothing before psn will come.  Returns
 * 1 when the stream moved there (the caller drops what it held of the
 * messages abandoned), 0 when the mark says nothing new or is not of the
 * session followed.
 */
int rel_rx_forward(struct rel_rx *rx, uint32_t sess, uint32_t psn);

/* Classify a datagram (sess, psn); only the session joined is taken. */
enum rel_verdict rel_rx_check(struct rel_rx *rx, uint32_t sess, uint32_t psn);

/* The datagram at nxt was taken (or its message queued): move on. */
void rel_rx_advance(struct rel_rx *rx);

/* The message the datagram at nxt completed was refused with code: move
 * on, and say so (in standalone acks) while the sender may not know. */
void rel_rx_refuse(struct rel_rx *rx, enum rel_code code);

/* Whether the caller holds the datagram at nxt (kept as REL_AHEAD). */
int rel_rx_ready(const struct rel_rx *rx);

/* The caller no longer holds psn: it could not keep it (given REL_AHEAD;
 * it will come again), or it takes the datagram at nxt now. */
void rel_rx_unhold(struct rel_rx *rx, uint32_t psn);

/* The selective-ack bitmap to send: bit i is psn nxt + 1 + i. */
rel_bits rel_rx_sack(const struct rel_rx *rx);

/* What to put in an ack now: credit for the sender. */
uint32_t rel_rx_credit(const struct rel_rx *rx);

/* An ack (piggy-backed or standalone) went out. */
void rel_rx_acked(struct rel_rx *rx);

/* The sender asked for an ack at once (it has nothing more to send);
 * ignored before the stream is joined. */
void rel_rx_ask_ack(struct rel_rx *rx);

/*
 * Whether a standalone ack should go now rather than at the next timer
 * tick (a few ms): a NAK, a duplicate (the sender is retransmitting), a
 * new session, REL_ACK_EVERY datagrams arrived (held past a gap too: the
 * sender counts them on the wire until a sack says otherwise), the sender
 * asked, or ack_now set by the caller (a message queued, a blocked
 * receiver answering a probe).  Fewer acks on a one-way stream, none
 * later where it matters.
 */
int rel_rx_ack_urgent(const struct rel_rx *rx);

/* Whether an ack should go alone now: any due one on a tick, else only
 * an urgent one. */
int rel_rx_ack_wanted(const struct rel_rx *rx, int tick);

/* Whether an ack waits for the next timer tick. */
int rel_rx_ack_pending(const struct rel_rx *rx);

/* The psn the stream takes next. */
uint32_t rel_rx_next(const struct rel_rx *rx);

/* The ack half of a trailer. */
struct rel_ack {
	uint32_t credit; /* always */
	int ack;	 /* sess and nxt below say something */
	uint32_t sess;	 /* the sender's session we follow */
	uint32_t nxt;	 /* next psn we take */
	int sack;	 /* bits below is the selective ack */
	rel_bits bits;	 /* bit i: we hold psn nxt + 1 + i */
	int nak;	 /* a gap at nxt */
	int refuse;	 /* codes below say something */
	rel_codes codes; /* refusals of [nxt - REL_SACK_BITS, nxt) */
};

/*
 * What an ack says now, marking it sent when one goes.  Only a standalone
 * ack has room for the sack and the refusals (room): while datagrams are
 * held past a gap, one without it would tell the sender we hold nothing,
 * and while a refusal is in range, one without it could be the first to
 * cover a refused psn, so none goes in a DATA datagram and the one due
 * goes alone, at once.  Before the stream is joined only credit goes.
 */
void rel_rx_ack_take(struct rel_rx *rx, int room, struct rel_ack *a);

/* A whole message waits for queue space: credit 0 until it goes in. */
void rel_rx_block(struct rel_rx *rx);

/* The message that waited is in its queue now: move on, and say so at
 * once (its writer waits for this ack). */
void rel_rx_unblock(struct rel_rx *rx);

/* The message that waited was refused with code (not NONE): move on, and
 * say so at once. */
void rel_rx_unblock_refused(struct rel_rx *rx, enum rel_code code);

/* The caller dropped what it held of the stream: the message waiting and
 * the datagrams past a gap (and the refusals: a new session). */
void rel_rx_drop(struct rel_rx *rx);

/* What a stream shows in .status (peer.h's PEER_COUNTERS_REL and
 * PEER_GAUGES_STREAM, less the rel_ prefix). */
struct rel_stats {
	uint64_t window, inflight, srtt_ms, rto_ms, waiting; /* gauges */
	uint64_t retrans, dups, timeouts, probes, rtos;	     /* counters */
	uint64_t refused;				     /* ... */
};

/* Read both halves of a peer's streams. */
void rel_stats_get(const struct rel_tx *tx, const struct rel_rx *rx,
		   struct rel_stats *s);

#endif
