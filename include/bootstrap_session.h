/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bootstrap's insides, shared by its two files and by nothing else
 * (bootstrap.h is the public API):
 *
 *   bootstrap.c          the thread and its poll loop: listening, dialling
 *                        with backoff, accepting, open and close
 *   bootstrap_session.c  one TCP session: its handshake, step by step, and
 *                        what it does to its peer (up, moved, down)
 *   bootstrap_hello.c    the hello codec and the HMAC proof (pure)
 */
#ifndef IBFS_BOOTSTRAP_SESSION_H
#define IBFS_BOOTSTRAP_SESSION_H

#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"

#define BS_READY_MAGIC	    0x49424852u /* "IBHR": dialer has us up */
#define BS_READY_LEN	    4
#define BS_BACKOFF_MIN_MS   100
#define BS_BACKOFF_MAX_MS   2000
#define BS_HELLO_TIMEOUT_MS 5000 /* at least; peer_timeout if longer */
#define BS_LISTEN_BACKLOG   64

enum bs_state {
	BS_IDLE,       /* outgoing: waiting for the next attempt */
	BS_CONNECTING, /* outgoing: connect in progress */
	BS_READ_HELLO, /* either: our hello queued, theirs awaited */
	BS_READ_PROOF, /* either, with a secret: the other's proof awaited */
	BS_READ_READY, /* incoming: our hello queued, READY awaited */
	BS_UP,	       /* handshake done; EOF ends the session */
};

/* One TCP session, outgoing or incoming. */
struct bs_conn {
	int fd;
	int outgoing;
	int peer; /* node index; -1 until an incoming hello */
	enum bs_state st;
	int live;	  /* counted in its peer's live sessions */
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

/* Bootstrap's view of one node. */
struct bs_peer {
	struct bs_conn out; /* our session to it (unused for local) */
	int64_t next_try;
	int backoff_ms;
	int live;	       /* sessions that reached BS_UP */
	int up;		       /* we called tp_peer_up */
	struct peer_addr addr; /* what is installed */
	char last_err[160];    /* repeated failures are logged once */
};

struct bootstrap {
	const struct config *cfg;
	struct peer *peers;
	struct tp *tp;
	struct route *rt;
	struct hello me;
	const char *secret; /* "" = no authentication */
	size_t secret_len;
	int lfd, efd;
	int timeout_ms;
	struct bs_peer *bp;
	struct bs_conn *in; /* incoming sessions */
	int nin, max_in;
	struct pollfd *pfd;
	struct bs_conn **pconn; /* the session of each pfd entry */
	pthread_t thr;
	int thr_started;
};

/* A bootstrap failure of peer pi ("bootstrap: NAME: why"), logged once. */
void bs_session_fail(struct bootstrap *b, int pi, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* End the outgoing session to pi and schedule the next attempt. */
void bs_session_retry(struct bootstrap *b, int pi, int was_up);

/* Events re (or a deadline) on session c: advance it, or end it. */
void bs_session_event(struct bootstrap *b, struct bs_conn *c, short re,
		      int64_t now);

#endif
