/* SPDX-License-Identifier: BSD-2-Clause */
/* The shared rules of util.h that are not inline. */
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "util.h"

/* ip4 as ::ffff:a.b.c.d in raw. */
void util_v4mapped(uint8_t raw[16], const void *ip4)
{
	memset(raw, 0, 10);
	raw[10] = raw[11] = 0xff;
	memcpy(raw + 12, ip4, 4);
}

/* Whether raw holds ::ffff:a.b.c.d. */
int util_is_v4mapped(const uint8_t raw[16])
{
	static const uint8_t pfx[12] = {[10] = 0xff, [11] = 0xff};

	return !memcmp(raw, pfx, sizeof(pfx));
}

/* Print a GID the way ibv_devinfo does, as an IPv6 address. */
const char *util_gid_str(const union ibv_gid *gid, char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid->raw, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/*
 * The bytes a name may not hold, by byte: '/' splits a path, NUL ends a
 * string, and a control byte (below 0x20, or 0x7f) would let a name from
 * the wire forge a second log line or garble a terminal.  A table, so
 * that the check every message sent and received makes costs one load
 * a byte.
 */
enum util_name_byte { NAME_OK, NAME_SLASH, NAME_NUL, NAME_CTRL };

#define NAME_CTRL8(b)                                                          \
	[b] = NAME_CTRL, [b + 1] = NAME_CTRL, [b + 2] = NAME_CTRL,             \
	[b + 3] = NAME_CTRL, [b + 4] = NAME_CTRL, [b + 5] = NAME_CTRL,         \
	[b + 6] = NAME_CTRL, [b + 7] = NAME_CTRL

static const uint8_t util_name_bytes[256] = {
	[0] = NAME_NUL,	    [1] = NAME_CTRL,  [2] = NAME_CTRL,
	[3] = NAME_CTRL,    [4] = NAME_CTRL,  [5] = NAME_CTRL,
	[6] = NAME_CTRL,    [7] = NAME_CTRL,  NAME_CTRL8(0x08),
	NAME_CTRL8(0x10),   NAME_CTRL8(0x18), ['/'] = NAME_SLASH,
	[0x7f] = NAME_CTRL,
};

static const char *const util_name_why[] = {
	[NAME_SLASH] = "contains '/'",
	[NAME_NUL] = "contains a NUL byte",
	[NAME_CTRL] = "contains a control byte",
};

/* The first byte of name[0..len) a name may not hold, or NAME_OK. */
static enum util_name_byte util_name_bad_byte(const char *name, size_t len)
{
	size_t i;
	uint8_t c;

	for (i = 0; i < len; i++) {
		c = util_name_bytes[(unsigned char)name[i]];
		if (c)
			return (enum util_name_byte)c;
	}
	return NAME_OK;
}

/* The name rule, on len bytes that need no NUL. */
const char *util_name_problem_n(const char *name, size_t len)
{
	enum util_name_byte c;

	if (!name || !len)
		return "is empty";
	if (len > UTIL_NAME_MAX)
		return "is longer than 63 bytes";
	if (*name == '.')
		return "starts with '.'";
	c = util_name_bad_byte(name, len);
	return c ? util_name_why[c] : NULL;
}

/* The name rule on a C string. */
const char *util_name_problem(const char *name)
{
	if (!name)
		return "is empty";
	return util_name_problem_n(name, strnlen(name, UTIL_NAME_MAX + 1));
}

/* A valid name's length; 0 otherwise.  It runs for every message sent:
 * one scan, which the NUL ends, reading at most UTIL_NAME_MAX + 1 bytes. */
size_t util_name_len(const char *name)
{
	size_t n;
	uint8_t c = NAME_OK;

	if (!name || *name == '.')
		return 0;
	for (n = 0; n <= UTIL_NAME_MAX; n++) {
		c = util_name_bytes[(unsigned char)name[n]];
		if (c)
			break;
	}
	return c == NAME_NUL && n ? n : 0;
}

/* Random, or the clock and salt when the pool will not say (see util.h). */
uint32_t util_random32(uint32_t salt)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == sizeof(r))
		return r;
	return (uint32_t)util_now_ms() * 2654435761u + salt;
}

/* gmtime_r, so any thread may format; a year past 9999 is not ours. */
const char *util_utc_str(int64_t ms, char *buf, size_t len)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (ms <= 0 || !gmtime_r(&s, &tm))
		return buf;
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (int)(ms % 1000));
	return buf;
}

const char *util_mode_exposed(unsigned int mode)
{
	if (!(mode & (S_IRWXG | S_IRWXO)))
		return NULL;
	return mode & (S_IRGRP | S_IROTH) ? "read" : "write or run";
}
