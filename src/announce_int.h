/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The announce's insides, shared by its two thread-side files and by
 * nothing else (announce.h is the public API and the pure parts).  The
 * files layer without a cycle, each calling only the ones above it in
 * this list (scripts/lint-deps.sh finds any cycle):
 *
 *   announce_msg.c    the codec and the judgements (pure)
 *   announce_auth.c   the challenge and response itself (pure)
 *   announce_trust.c  with a secret or a ca: whom to trust, the challenges this
 *                     node runs (resent on loss, given up at
 *                     peer_timeout), and the AHs to nodes not up yet; a
 *                     node proven is the caller's to install (its verdict)
 *   announce.c        the thread: its start-up announces, the hooks'
 *                     inbox, what is heard (known, installed, answered),
 *                     the nodes a write wants (met, asked for, given
 *                     up), open and close
 *
 * Locks: a->lock guards the fields that say so (struct announce), taken by
 * the hooks (progress thread, senders) and by the thread to take them; a
 * leaf, no upcall under it.  Everything else is the announce thread's
 * alone.
 */
#ifndef IBFS_ANNOUNCE_INT_H
#define IBFS_ANNOUNCE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/queue.h>

#include "announce.h"

#define ANN_INBOX 256 /* announces queued for the thread; more drop */
/* The certificates those carry, copied beside them: some 50 of the
 * usual 300 to 600 bytes; more drop (a stranger's flood costs no more) */
#define ANN_INBOX_DER	    (16 * CERT_DER_MAX)
#define ANN_STRANGER_LOG_MS 1000 /* lines about strangers: one a second */

/* ms: a challenge or query unanswered is sent again, and a MEET answers
 * one node's queries at most this often */
#define ANN_RTO_MIN 200
#define ANN_RTO_MAX                                                            \
	1000 /* ... at most this far apart; and the time a                     \
	      * node installed from what was heard of it has                   \
	      * to answer our probe before it is asked for */

/*
 * Exchanges at once per node, one per address speaking for it: a
 * stranger who announces or challenges under a node's name gets a slot
 * of its own beside the node's, and a new one takes the slot heard from
 * least recently, so strangers cost a bounded table and cannot take the
 * node's own exchange from it unless they outpace its round trips.
 */
#define ANN_XCHG_MAX 4

/*
 * One exchange with one address that speaks for a node (its QPN and GID,
 * as the transport checked them): our challenge to it (as D), its
 * challenge to us (as L), and the AH that reaches it, so that every
 * answer and resend goes back to that address and to no other.
 */
struct ann_xchg {
	TAILQ_ENTRY(ann_xchg) plink; /* in a->pend while our challenge waits */
	int node;		     /* index in the config */
	int used;
	struct peer_addr addr; /* whom: the key */
	struct ann_auth auth;  /* both directions' state */
	struct ibv_ah *ah;     /* reaches addr, while it is not installed */
	int64_t heard;	       /* ms: its last message (eviction order) */
	int sure;    /* addr is the node's (ann_xchg_sure): kept from others */
	int pending; /* in a->pend */
	int rto;     /* ms to the next resend */
	int64_t next, until, after; /* resend; give up; no new one before */
};

/* One configured node, as this thread knows it. */
struct ann_peer {
	TAILQ_ENTRY(ann_peer) slink; /* in a->seek while wanted */
	struct ann_known k;

	/* while a write wants it (ann_want) */
	int wanted;
	int asked;	     /* queried: resends name it alone */
	int fresh;	     /* asked for the first time in this pass */
	int rto;	     /* ms to the next query */
	int64_t next, until; /* next step; give up */
	int64_t met;	     /* ms: our last MEET answering its query */

	/* with a secret or a ca (announce_trust.c) */
	struct ann_xchg *x; /* ANN_XCHG_MAX of them, made when first met */
	int trusted;	    /* tboot and taddr proved themselves */
	uint64_t tgen;	    /* ... under our certificates' der_gen */
	uint32_t tboot;
	struct peer_addr taddr;
};

struct announce {
	const struct config *cfg;
	struct peer *peers;
	struct tp *tp;
	struct route *rt;
	struct ann_msg mine; /* our announce */
	struct ann_msg meet; /* ... as a MEET */
	uint32_t self_id;    /* our wire id: queries for us name it */
	/* the secret (len 0 without one), and with a ca the node's
	 * certificate, key.der our own in DER (der_gen: the generation it
	 * was read at, cert_generation) */
	struct ann_key key;
	uint8_t der[CERT_DER_MAX];
	uint64_t der_gen;
	struct ann_peer *ap;
	TAILQ_HEAD(, ann_xchg) pend; /* our challenges waiting */
	TAILQ_HEAD(, ann_peer) seek; /* wanted by a write, not up yet */
	int64_t next_ann;	     /* the next start-up announce, or never */
	int nann;		     /* start-up announces sent */
	unsigned seed;
	uint64_t stranger_ms;
	unsigned long stranger_quiet;

	/* the hooks queue, the thread takes */
	pthread_mutex_t lock;
	struct ann_msg *inbox; /* under lock: ANN_INBOX, nin of them queued */
	int nin;	       /* under lock */
	uint8_t *inder; /* under lock: their certificates, ANN_INBOX_DER */
	size_t nder;	/* under lock: bytes of inder in use */
	/* under lock: how many announces ann_admit refused for their
	 * address since the thread last looked, and the last one, for the
	 * thread to log (the progress thread logs nothing) */
	unsigned long misplaced;
	struct hello misplaced_h;
	/* under lock: the nodes a write waits for (the need hook), each
	 * queued once: needq[0..nneed), flagged in needs */
	uint8_t *needs;
	int *needq;
	int nneed;
	int *workq;	      /* the thread's: swapped with needq */
	int retell;	      /* under lock: the device is back (ann_retell) */
	struct ann_msg *work; /* the thread's: swapped with inbox under lock */
	uint8_t *workder;     /* the thread's: swapped with inder */
	int efd;	      /* wakes the thread (set at open) */
	atomic_int stop;

	pthread_t thr;
	int thr_started;
};

/* announce.c, for its unit test: what the thread does with a message of
 * node i's exchange */
void ann_exchange_in(struct announce *a, int i, const struct ann_msg *m,
		     int64_t now);

/* announce_trust.c */
int ann_proves(const struct announce *a);
int ann_cert_fresh(struct announce *a);
int ann_trusted(const struct announce *a, int i, const struct hello *h);
void ann_challenge(struct announce *a, int i, const struct hello *h,
		   int64_t now);
enum ann_verdict ann_exchange(struct announce *a, int i,
			      const struct ann_msg *m, int64_t now,
			      struct hello *who);
struct ibv_ah *ann_take_ah(struct announce *a, int i,
			   const struct peer_addr *addr);
int64_t ann_pending(struct announce *a, int64_t now, int64_t wake);
void ann_reprove(struct announce *a, int64_t now);
void ann_trust_free(struct announce *a, int i);

#endif
