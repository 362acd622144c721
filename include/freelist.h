/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A bounded stack of free blocks of one size, kept for the next to need
 * one: the objects every message received makes and frees (a queued
 * message, a parked read) come from here instead of the allocator, which
 * costs a few hundred instructions a pair.  At most max blocks are kept;
 * beyond that a block goes back to the heap, so a burst leaves no more
 * memory behind than max blocks.
 *
 * Not thread safe on its own: its owner's lock serializes every call
 * (the file system's fs->lock, fs_int.h).  Only freelist_get allocates.
 */
#ifndef IBFS_FREELIST_H
#define IBFS_FREELIST_H

#include <stddef.h>

struct freelist_block;

struct freelist {
	struct freelist_block *head; /* the blocks kept, newest first */
	size_t size;		     /* of each block, at least a pointer */
	unsigned n;		     /* kept now */
	unsigned max;		     /* kept at most */
};

/* An empty list of blocks of size bytes, keeping at most max. */
void freelist_init(struct freelist *fl, size_t size, unsigned max);

/* A block of fl's size, kept or new, not zeroed; NULL without memory. */
void *freelist_get(struct freelist *fl);

/* Keep block p (from freelist_get) for the next get, or free it when
 * fl holds max already; NULL is nothing. */
void freelist_put(struct freelist *fl, void *p);

/* Free every block kept (at close); fl stays usable, empty. */
void freelist_drain(struct freelist *fl);

#endif
