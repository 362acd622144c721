/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hostlist expansion (hostlist.h).  Two passes over the expression: the
 * first checks all of it and counts the names, saturating so that no
 * count overflows; the second, once the count is known to be at most
 * max, allocates the array and writes the names.  Both read an item the
 * same way, into a struct hl_item on the stack: no recursion, and no
 * allocation but the result.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

/* Most digits in a number: 999999999 fits an unsigned long anywhere. */
#define HL_DIGITS_MAX 9

/* Each bracket adds a byte or more to a name, so a name has this many. */
#define HL_SETS_MAX HOSTLIST_NAME_MAX

/* One range of a bracket, lo-hi, printed at least width digits wide. */
struct hl_range {
	unsigned long lo, hi;
	int width;
};

/* One bracket: where it stands, what it holds, and where pass 2 is in it. */
struct hl_set {
	const char *open;  /* its '[' */
	const char *close; /* the byte after its ']' */
	size_t count;	   /* numbers it holds, saturating at SIZE_MAX */
	int width;	   /* the most bytes one of them prints as */
	const char *next;  /* pass 2: the byte after the range being walked */
	struct hl_range r; /* pass 2: that range */
	unsigned long val; /* pass 2: the number being printed */
};

/* One top-level item: its bytes, its brackets, how many names it makes. */
struct hl_item {
	const char *start, *end;
	struct hl_set set[HL_SETS_MAX];
	size_t nsets;
	size_t count; /* saturating at SIZE_MAX */
};

/* What every step needs: the expression, for offsets, and the message. */
struct hl_ctx {
	const char *expr;
	char *err;
	size_t errlen;
};

/* Write what is wrong into the caller's buffer; returns -EINVAL. */
__attribute__((format(printf, 2, 3))) static int fail(const struct hl_ctx *c,
						      const char *fmt, ...)
{
	va_list ap;

	if (c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The byte offset of p in the expression. */
static size_t at(const struct hl_ctx *c, const char *p)
{
	return (size_t)(p - c->expr);
}

/* a + b, or SIZE_MAX where that overflows. */
static size_t add_sat(size_t a, size_t b)
{
	size_t r;

	return __builtin_add_overflow(a, b, &r) ? SIZE_MAX : r;
}

/* a * b, or SIZE_MAX where that overflows. */
static size_t mul_sat(size_t a, size_t b)
{
	size_t r;

	return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

/* How many digits v prints as, unpadded. */
static int ndigits(unsigned long v)
{
	int d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* The error for byte p, where the bracket opened at open wanted `want`. */
static int bad_byte(const struct hl_ctx *c, const char *open, const char *p,
		    const char *want)
{
	unsigned char ch = (unsigned char)*p;

	if (!ch)
		return fail(c, "unclosed '[' at byte %zu", at(c, open));
	if (ch == '[')
		return fail(c, "nested '[' at byte %zu", at(c, p));
	if (ch == ']' && p == open + 1)
		return fail(c, "empty brackets at byte %zu", at(c, open));
	if (ch > ' ' && ch < 0x7f)
		return fail(c, "expected %s at byte %zu, found '%c'", want,
			    at(c, p), ch);
	return fail(c, "expected %s at byte %zu, found byte 0x%02x", want,
		    at(c, p), ch);
}

/* Read a number of 1 to 9 digits at *q, inside the bracket at open. */
static int parse_num(const struct hl_ctx *c, const char *open, const char **q,
		     unsigned long *v, int *digits)
{
	const char *p = *q;
	unsigned long n = 0;
	int d = 0;

	while (*p >= '0' && *p <= '9') {
		if (d < HL_DIGITS_MAX)
			n = n * 10 + (unsigned long)(*p - '0');
		d++;
		p++;
	}
	if (!d)
		return bad_byte(c, open, p, "a digit");
	if (d > HL_DIGITS_MAX)
		return fail(c, "number at byte %zu has more than %d digits",
			    at(c, *q), HL_DIGITS_MAX);
	*v = n;
	*digits = d;
	*q = p;
	return 0;
}

/* Read one range or lone number at *q, leaving *q on its ',' or ']'. */
static int parse_range(const struct hl_ctx *c, const char *open, const char **q,
		       struct hl_range *r)
{
	const char *start = *q;
	int rc, dhi;

	rc = parse_num(c, open, q, &r->lo, &r->width);
	if (rc)
		return rc;
	r->hi = r->lo;
	if (**q == '-') {
		(*q)++;
		rc = parse_num(c, open, q, &r->hi, &dhi);
		if (rc)
			return rc;
	}
	if (r->lo > r->hi)
		return fail(c, "range %.*s at byte %zu runs backwards",
			    (int)(*q - start), start, at(c, start));
	if (**q != ',' && **q != ']')
		return bad_byte(c, open, *q, "',' or ']'");
	return 0;
}

/* Read the bracket at *p into s, moving *p past its ']'. */
static int parse_set(const struct hl_ctx *c, const char **p, struct hl_set *s)
{
	const char *q = *p + 1;
	struct hl_range r;
	int rc, w;

	s->open = *p;
	s->count = 0;
	s->width = 0;
	for (;;) {
		rc = parse_range(c, s->open, &q, &r);
		if (rc)
			return rc;
		s->count = add_sat(s->count, r.hi - r.lo + 1);
		w = ndigits(r.hi);
		if (w < r.width)
			w = r.width;
		if (w > s->width)
			s->width = w;
		if (*q++ == ']')
			break;
	}
	s->close = q;
	*p = q;
	return 0;
}

/* The error for an item whose names would be too long. */
static int too_long(const struct hl_ctx *c, const struct hl_item *it)
{
	return fail(c, "item at byte %zu makes names longer than %d bytes",
		    at(c, it->start), HOSTLIST_NAME_MAX);
}

/* Read the item at p, up to a top-level ',' or the end, into it. */
static int parse_item(const struct hl_ctx *c, const char *p, struct hl_item *it)
{
	struct hl_set *s;
	size_t len = 0;
	int rc;

	it->start = p;
	it->nsets = 0;
	it->count = 1;
	while (*p && *p != ',') {
		if (*p == ']')
			return fail(c, "unmatched ']' at byte %zu", at(c, p));
		if (*p != '[') {
			len++;
			p++;
		} else if (it->nsets == HL_SETS_MAX) {
			return too_long(c, it);
		} else {
			s = &it->set[it->nsets];
			rc = parse_set(c, &p, s);
			if (rc)
				return rc;
			it->nsets++;
			len += (size_t)s->width;
			it->count = mul_sat(it->count, s->count);
		}
		if (len > HOSTLIST_NAME_MAX)
			return too_long(c, it);
	}
	if (p == it->start)
		return fail(c, "empty item at byte %zu", at(c, p));
	it->end = p;
	return 0;
}

/* Pass 2: put s back on its first number. */
static void set_rewind(const struct hl_ctx *c, struct hl_set *s)
{
	s->next = s->open + 1;
	(void)parse_range(c, s->open, &s->next, &s->r); /* pass 1 read it */
	s->val = s->r.lo;
}

/* Pass 2: move s to its next number; 1 when it wrapped to its first. */
static int set_step(const struct hl_ctx *c, struct hl_set *s)
{
	if (s->val < s->r.hi) {
		s->val++;
		return 0;
	}
	if (*s->next == ',') {
		s->next++;
		(void)parse_range(c, s->open, &s->next, &s->r);
		s->val = s->r.lo;
		return 0;
	}
	set_rewind(c, s);
	return 1;
}

/* Pass 2: the item's current name, its brackets' numbers filled in. */
static void build_name(const struct hl_item *it, char *name, size_t size)
{
	const char *lit = it->start, *end;
	const struct hl_set *s;
	size_t len = 0, i;

	for (i = 0;; i++) {
		end = i < it->nsets ? it->set[i].open : it->end;
		memcpy(name + len, lit, (size_t)(end - lit));
		len += (size_t)(end - lit);
		if (i == it->nsets)
			break;
		s = &it->set[i];
		len += (size_t)snprintf(name + len, size - len, "%0*lu",
					s->r.width, s->val);
		lit = s->close;
	}
	name[len] = '\0';
}

/* Pass 2: append the item's names to out, leftmost bracket slowest. */
static int emit_item(const struct hl_ctx *c, struct hl_item *it,
		     struct hostlist *out)
{
	char name[HOSTLIST_NAME_MAX + 1];
	size_t k, i;

	for (i = 0; i < it->nsets; i++)
		set_rewind(c, &it->set[i]);
	for (k = 0; k < it->count; k++) {
		build_name(it, name, sizeof(name));
		out->names[out->n] = strdup(name);
		if (!out->names[out->n])
			return -ENOMEM;
		out->n++;
		for (i = it->nsets; i > 0; i--)
			if (!set_step(c, &it->set[i - 1]))
				break;
	}
	return 0;
}

/* Every item in turn: count them (out NULL) or write their names. */
static int walk(const struct hl_ctx *c, struct hostlist *out, size_t *total)
{
	const char *p = c->expr;
	struct hl_item it;
	int rc;

	*total = 0;
	for (;;) {
		rc = parse_item(c, p, &it);
		if (!rc && out)
			rc = emit_item(c, &it, out);
		if (rc)
			return rc;
		*total = add_sat(*total, it.count);
		if (!*it.end)
			return 0;
		p = it.end + 1;
	}
}

/* Check expr, count its names against max, then write them. */
int hostlist_expand(const char *expr, size_t max, struct hostlist *out,
		    char *err, size_t errlen)
{
	struct hl_ctx c = {.expr = expr, .err = err, .errlen = errlen};
	size_t total;
	int rc;

	out->names = NULL;
	out->n = 0;
	if (errlen)
		err[0] = '\0';
	if (!expr || !*expr)
		return fail(&c, "empty expression");
	rc = walk(&c, NULL, &total);
	if (rc)
		return rc;
	if (total > max) {
		if (errlen && total == SIZE_MAX)
			snprintf(err, errlen, "names more than %zu entries",
				 max);
		else if (errlen)
			snprintf(err, errlen, "names %zu entries, over %zu",
				 total, max);
		return -E2BIG;
	}
	out->names = calloc(total, sizeof(*out->names));
	if (out->names)
		rc = walk(&c, out, &total);
	if (!out->names || rc) {
		hostlist_free(out);
		if (errlen)
			snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Free every name and the array. */
void hostlist_free(struct hostlist *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->n; i++)
		free(h->names[i]);
	free(h->names);
	h->names = NULL;
	h->n = 0;
}
