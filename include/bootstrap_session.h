/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bootstrap's insides, shared by its two files and by nothing else
 * (bootstrap.h is the public API):
 *
 *   bootstrap.c          the thread and its epoll loop: listening, meeting
 *                        peers on demand (dial rate, backoff, jitter),
 *                        idle sessions, accepting, open and close
 *   bootstrap_session.c  one TCP session: its handshake, step by step, and
 *                        what it does to its peer (up, moved, down)
 *   bootstrap_hello.c    the hello codec and the HMAC proof (pure)
 */
#ifndef IBFS_BOOTSTRAP_SESSION_H
#define IBFS_BOOTSTRAP_SESSION_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "bootstrap.h"

#define BS_READY_MAGIC	    0x49424852u /* "IBHR": dialer has us up */
#define BS_BYE_MAGIC	    0x49424859u /* "IBHY": closing, for want of use */
#define BS_READY_LEN	    4		/* and BYE's */
#define BS_BACKOFF_MIN_MS   100
#define BS_BACKOFF_MAX_MS   2000
#define BS_HELLO_TIMEOUT_MS 5000 /* at least; peer_timeout if longer */
#define BS_LISTEN_BACKLOG   128
#define BS_DIAL_RATE	    100 /* dials started per second, at most */
#define BS_DIAL_BURST	    32	/* ... and at once after a quiet while */
#define BS_DIAL_INFLIGHT    64	/* outgoing handshakes under way at once */
#define BS_EVENTS	    64	/* epoll events taken per wait */

enum bs_state {
	BS_CONNECTING, /* outgoing: connect in progress */
	BS_READ_HELLO, /* either: our hello queued, theirs awaited */
	BS_READ_PROOF, /* either, with a secret: the other's proof awaited */
	BS_READ_READY, /* incoming: our hello queued, READY awaited */
	BS_UP,	       /* handshake done; BYE or EOF ends the session */
};

/* One TCP session, outgoing or incoming: malloc'ed while it lasts. */
struct bs_conn {
	TAILQ_ENTRY(bs_conn) link; /* in b->conns, then b->dead */
	int fd;			   /* -1 once closed */
	int outgoing;
	int peer; /* node index; -1 until an incoming hello */
	enum bs_state st;
	int live;	  /* counted in its peer's live sessions */
	int bye;	  /* BYE sent or seen: the peer goes idle, not down */
	uint32_t armed;	  /* the epoll events registered for fd */
	int64_t deadline; /* ms; 0 = none */
	uint8_t tx[HELLO_WIRE_LEN];
	size_t txlen, txoff;
	uint8_t rx[HELLO_WIRE_LEN];
	size_t rxlen, rxwant;
	struct hello h;			/* what the other side announced */
	uint8_t mine[HELLO_WIRE_LEN];	/* our hello, as sent */
	uint8_t theirs[HELLO_WIRE_LEN]; /* theirs, as received */
	uint8_t nonce[HELLO_NONCE_LEN]; /* our challenge in this session */
};

TAILQ_HEAD(bs_connq, bs_conn);

/*
 * Bootstrap's view of one node: small, since there is one per configured
 * node; a session costs only while it stands.
 */
struct bs_peer {
	TAILQ_ENTRY(bs_peer) want_link; /* in b->want while wanted */
	struct bs_conn *out;		/* our session to it, or NULL */
	int64_t next_try;		/* ms: no dial before */
	int64_t want_until;		/* ms: a send waits until then */
	int64_t active_ms;		/* when its traffic last moved */
	uint64_t seen;			/* messages both ways, then */
	int backoff_ms;
	int live;	       /* sessions that reached BS_UP */
	int up;		       /* we called tp_peer_up */
	int wanted;	       /* in b->want */
	int queued;	       /* in needq (under need_lock) */
	struct peer_addr addr; /* what is installed */
};

struct bootstrap {
	const struct config *cfg;
	struct peer *peers;
	struct tp *tp;
	struct route *rt;
	struct hello me;
	const char *secret; /* "" = no authentication */
	size_t secret_len;
	int lfd, efd, ep; /* listener, wake-up eventfd, epoll */
	atomic_int stop;
	int timeout_ms;
	struct bs_peer *bp;
	struct bs_connq conns;	    /* every open session */
	struct bs_connq dead;	    /* closed, freed after the event batch */
	int nin, max_in;	    /* incoming sessions, and their cap */
	int dialing;		    /* outgoing sessions not up yet */
	TAILQ_HEAD(, bs_peer) want; /* peers a send waits for */
	double tokens;		    /* dials that may start now */
	int64_t tokens_ms;
	unsigned seed; /* jitter */

	/* needs: senders' threads ask, the bootstrap thread takes */
	pthread_mutex_t need_lock;
	int *needq;
	int nneed;

	pthread_t thr;
	int thr_started;
};

/*
 * A bootstrap failure of peer pi ("bootstrap: NAME: why"), logged once
 * per reason and kept as its last_error; err is what a writer waiting
 * for it learns (EHOSTUNREACH, or anything else for ENOTCONN).
 */
void bs_session_fail(struct bootstrap *b, int pi, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* End the outgoing session to pi and schedule the next attempt (with
 * jitter, while a send still wants pi). */
void bs_session_retry(struct bootstrap *b, int pi, int was_up);

/* Close session c (it moves to b->dead); the last live one of its peer
 * takes the peer down, or idle after a BYE. */
void bs_conn_close(struct bootstrap *b, struct bs_conn *c);

/* Events re (or a deadline) on session c: advance it, or end it. */
void bs_session_event(struct bootstrap *b, struct bs_conn *c, short re,
		      int64_t now);

#endif
