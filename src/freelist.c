/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Free blocks of one size kept for reuse (include/freelist.h): a stack
 * linked through the blocks themselves, bounded by max.
 */
#include <stdlib.h>

#include "freelist.h"

/* A kept block: its first bytes link it to the next. */
struct freelist_block {
	struct freelist_block *next;
};

void freelist_init(struct freelist *fl, size_t size, unsigned max)
{
	fl->head = NULL;
	fl->size = size < sizeof(struct freelist_block)
			   ? sizeof(struct freelist_block)
			   : size;
	fl->n = 0;
	fl->max = max;
}

void *freelist_get(struct freelist *fl)
{
	struct freelist_block *b = fl->head;

	if (!b)
		return malloc(fl->size);
	fl->head = b->next;
	fl->n--;
	return b;
}

void freelist_put(struct freelist *fl, void *p)
{
	struct freelist_block *b = p;

	if (!b)
		return;
	if (fl->n >= fl->max) {
		free(b);
		return;
	}
	b->next = fl->head;
	fl->head = b;
	fl->n++;
}

void freelist_drain(struct freelist *fl)
{
	struct freelist_block *b;

	while ((b = fl->head)) {
		fl->head = b->next;
		free(b);
	}
	fl->n = 0;
}
