/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hostlists as Slurm writes them: "cn[001-064]", "rack[1-2]n[01-02]-ib",
 * "10.0.2.[15-78]", "a,b,c".  Top-level items are separated by commas; a
 * bracket holds a comma list of numbers and ranges lo-hi (at most 9
 * digits each, lo <= hi), printed as wide as lo is written (so "[08-10]"
 * gives 08 09 10 and "[8-10]" gives 8 9 10); several brackets multiply,
 * the leftmost varying slowest.  Every other byte, '.' and ':' included,
 * is ordinary.  Each resulting name is 1 to HOSTLIST_NAME_MAX bytes.
 * Written here rather than taken from libslurm, whose soname changes with
 * every release.
 *
 * Threads: none; pure (no state, no locks): any thread.
 */
#ifndef IBFS_HOSTLIST_H
#define IBFS_HOSTLIST_H

#include <stddef.h>

/* Longest resulting name, without its NUL (the node name rule's). */
#define HOSTLIST_NAME_MAX 63

struct hostlist {
	char **names; /* n names, each malloc'ed, in order */
	size_t n;
};

/*
 * Expand expr into out: 0; or -EINVAL with what is wrong and where (the
 * byte offset: "at byte 7") in err; or -E2BIG when it names more than max
 * entries (checked before allocating any of them); or -ENOMEM.  Syntax
 * errors win over -E2BIG: the whole expression is checked first.  On any
 * error out is left empty ({NULL, 0}); on success err is "".  err may be
 * NULL when errlen is 0.
 */
int hostlist_expand(const char *expr, size_t max, struct hostlist *out,
		    char *err, size_t errlen);

/* Free every name and the array; h is left empty.  NULL is fine. */
void hostlist_free(struct hostlist *h);

#endif
