/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for hostlist.c: no expression may crash it, leak, or
 * come back with more names than max, an empty or overlong name, or an
 * error without a message.  The first input byte picks max (0 to 1017:
 * 8 times its low 7 bits, plus its top bit), so that the seeds are plain
 * text ('~' is 1008, '"' 272); the rest, up to a NUL, is the expression.
 * Each success is checked against the cap: the same expression with
 * max = n expands to the same names, and with max = n - 1 it is -E2BIG.
 *
 * clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *	-Iinclude tests/fuzz/fuzz_hostlist.c src/hostlist.c
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "fuzz.h"

/* A successful expansion keeps every promise of hostlist.h. */
static void check_names(const struct hostlist *h, size_t max)
{
	size_t i, len;

	CHECK(h->n >= 1 && h->n <= max);
	CHECK(h->names != NULL);
	for (i = 0; i < h->n; i++) {
		CHECK(h->names[i] != NULL);
		len = strlen(h->names[i]);
		CHECK(len >= 1 && len <= HOSTLIST_NAME_MAX);
		CHECK(!strpbrk(h->names[i], ",[]"));
	}
}

/* The cap is exact: max = n gives the same names, n - 1 is -E2BIG. */
static void check_cap(const char *expr, const struct hostlist *h)
{
	struct hostlist again;
	char err[128];
	size_t i;

	CHECK(hostlist_expand(expr, h->n, &again, err, sizeof(err)) == 0);
	CHECK(again.n == h->n && err[0] == '\0');
	for (i = 0; i < h->n; i++)
		CHECK(strcmp(again.names[i], h->names[i]) == 0);
	hostlist_free(&again);
	CHECK(hostlist_expand(expr, h->n - 1, &again, err, sizeof(err)) ==
	      -E2BIG);
	CHECK(again.names == NULL && again.n == 0 && err[0] != '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hostlist h;
	char err[128];
	size_t max;
	char *expr;
	int rc;

	if (size < 1)
		return 0;
	max = (size_t)(data[0] & 0x7f) * 8 + (data[0] >> 7);
	expr = malloc(size);
	if (!expr)
		return 0;
	memcpy(expr, data + 1, size - 1);
	expr[size - 1] = '\0';
	rc = hostlist_expand(expr, max, &h, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL || rc == -E2BIG || rc == -ENOMEM);
	if (rc == 0) {
		CHECK(err[0] == '\0');
		check_names(&h, max);
		if (!strchr(expr, '[') && !strchr(expr, ','))
			CHECK(h.n == 1 && strcmp(h.names[0], expr) == 0);
		check_cap(expr, &h);
	} else {
		CHECK(h.names == NULL && h.n == 0);
		CHECK(err[0] != '\0' && strlen(err) < sizeof(err));
	}
	hostlist_free(&h);
	CHECK(h.names == NULL && h.n == 0);
	free(expr);
	return 0;
}
