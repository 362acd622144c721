/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What reliable.c and rel_wait.c share of the sender's state machine and
 * nobody else calls.  Same rules as reliable.h: pure logic, the caller
 * holds whatever lock guards the stream.
 */
#ifndef IBFS_REL_INT_H
#define IBFS_REL_INT_H

#include "reliable.h"

/* Give m its psns at the end of the stream (nfrag set). */
void rel_tx_enqueue(struct rel_tx *tx, struct rel_msg *m, uint64_t now);

/* Move m to the done list with status st. */
void rel_tx_finish(struct rel_tx *tx, struct rel_msg *m, int st);

/* m's channel waits: m joins its list (1), or 0 when it does not wait. */
int rel_wait_join(struct rel_tx *tx, struct rel_msg *m, uint64_t now);

/* m is wholly acked, refused with code (or not): done, or to wait. */
void rel_wait_settle(struct rel_tx *tx, struct rel_msg *m, enum rel_code code,
		     uint64_t now);

/* Put the channels whose wait is over back on the stream; ms until the
 * next one is due, -1 for none. */
int rel_wait_tick(struct rel_tx *tx, uint64_t now);

/* Fail every waiting message not on the stream with err. */
void rel_wait_fail(struct rel_tx *tx, struct rel_msg *waiting, int err);

/* Whether chan waits for room at the receiver. */
int rel_wait_has(const struct rel_tx *tx, const char *chan);

#endif
