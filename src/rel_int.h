/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rel_wait.c's part of the sender's state machine, for reliable.c and
 * nobody else: the wait lists off the stream.  rel_wait.c calls nothing
 * of reliable.c; what is to go back on the stream, or be done, it hands
 * back.  Same rules as reliable.h: pure logic, the caller holds whatever
 * lock guards the stream (struct rel_tx).
 */
#ifndef IBFS_REL_INT_H
#define IBFS_REL_INT_H

#include "reliable.h"

/* m's channel waits: m joins its list (1), or 0 when it does not wait. */
int rel_wait_join(struct rel_tx *tx, struct rel_msg *m, uint64_t now);

/* m is wholly acked, refused with code (or not): 1 when it waits now, 0
 * when it is done (the caller finishes it with rel_code_errno(code)). */
int rel_wait_settle(struct rel_tx *tx, struct rel_msg *m, enum rel_code code,
		    uint64_t now);

/* The channels whose wait is over: their heads, chained by next in *due,
 * go back on the stream (the caller enqueues them, in that order); ms
 * until the next one is due, -1 for none. */
int rel_wait_tick(struct rel_tx *tx, uint64_t now, struct rel_msg **due);

/* The messages of list waiting not on the stream, chained by next, for
 * the caller to fail. */
struct rel_msg *rel_wait_fail(struct rel_msg *waiting);

/* Whether chan waits for room at the receiver. */
int rel_wait_has(const struct rel_tx *tx, const char *chan);

#endif
