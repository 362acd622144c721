/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Numbers and sizes as people write them in a config: a digit first (no
 * sign, no blanks), then perhaps a unit after blanks.  strtoull alone is
 * too lenient for that, so every number of the config goes through here.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "config_parse.h"

/* Units may follow a number after blanks: "1 MiB", "500 ms". */
const char *config_num_skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/*
 * strtoull skips blanks, takes signs and stops at junk; a config number
 * must start with a digit.  The caller decides what may follow at *end.
 */
int config_num_scan(const char *s, int hex, uint64_t *v, const char **end)
{
	int base = 10;
	char *e;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
	    isxdigit((unsigned char)s[2]))
		base = 16;
	errno = 0;
	*v = strtoull(s, &e, base);
	if (errno)
		return -ERANGE;
	*end = e;
	return 0;
}

/* Sizes read back best in the unit they were probably written in. */
const char *config_num_fmt_size(uint64_t v, char *buf, size_t len)
{
	if (v && !(v % GiB))
		snprintf(buf, len, "%lluG", (unsigned long long)(v / GiB));
	else if (v && !(v % MiB))
		snprintf(buf, len, "%lluM", (unsigned long long)(v / MiB));
	else if (v && !(v % KiB))
		snprintf(buf, len, "%lluk", (unsigned long long)(v / KiB));
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

/* Sizes as people write them; powers of 1024 whatever the spelling. */
int config_parse_size(const char *s, uint64_t *out)
{
	const char *e;
	unsigned int shift = 0;
	uint64_t v;

	if (!s || config_num_scan(s, 0, &v, &e))
		return -EINVAL;
	e = config_num_skip_blanks(e);
	switch (*e) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	}
	if (shift && *++e == 'i' && e[1] == 'B')
		e++;
	if (*e == 'B')
		e++;
	if (*e || v > UINT64_MAX >> shift)
		return -EINVAL;
	*out = v << shift;
	return 0;
}
