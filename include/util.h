/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Small rules every module shares, each written once: the clock, the
 * big-endian codec of the wire and the hello, how a GID is printed, and
 * what makes a node or channel name.  No state, no locks: any thread.
 */
#ifndef IBFS_UTIL_H
#define IBFS_UTIL_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

union ibv_gid;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Longest node or channel name, without its NUL. */
#define UTIL_NAME_MAX 63

/* Room for a GID as text: an IPv6 address. */
#define UTIL_GID_STRLEN 46

/*
 * Milliseconds of the monotonic clock: timeouts, backoff and expiry.  The
 * coarse clock (a tick, 1-4 ms) is read from the vDSO without touching
 * the clock source: on VMs whose source is HPET or ACPI PM the precise
 * clock traps into the kernel on every message.  Timeouts are tens of ms.
 */
static inline uint64_t util_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * poll's or epoll_wait's timeout from now until wake (util_now_ms
 * times): -1, no timeout, when wake is INT64_MAX (nothing timed, so an
 * idle thread sleeps until an event), 0 when due.
 */
static inline int util_wait_ms(int64_t now, int64_t wake)
{
	if (wake == INT64_MAX)
		return -1;
	if (wake <= now)
		return 0;
	return wake - now > INT32_MAX ? INT32_MAX : (int)(wake - now);
}

/* Milliseconds since the epoch (wall clock): times a user reads. */
static inline int64_t util_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Room for util_utc_str's "2026-12-02T00:15:03.042Z". */
#define UTIL_UTC_STRLEN 32

/* ms since the epoch as UTC ISO 8601 with milliseconds; "" for 0. */
const char *util_utc_str(int64_t ms, char *buf, size_t len);

/* Store a big-endian u16 at p, whatever p's alignment. */
static inline void util_put16(uint8_t *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, sizeof(v));
}

/* Store a big-endian u32 at p, whatever p's alignment. */
static inline void util_put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

/* Load a big-endian u16 from p, whatever p's alignment. */
static inline uint16_t util_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

/* Load a big-endian u32 from p, whatever p's alignment. */
static inline uint32_t util_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

/* gid as ibv_devinfo prints it (an IPv6 address) in buf; returns buf. */
const char *util_gid_str(const union ibv_gid *gid, char *buf, size_t len);

/*
 * 16 bytes as ::ffff:a.b.c.d: an IPv4 address (4 bytes, network order)
 * in IPv6 form, which is also the RoCE v2 GID of that address.
 */
void util_v4mapped(uint8_t raw[16], const void *ip4);
/* Whether 16 bytes are IPv4-mapped (::ffff:a.b.c.d). */
int util_is_v4mapped(const uint8_t raw[16]);

/*
 * Node and channel names become file names under the mount: 1 to 63
 * bytes, no '/', no NUL, no control byte (below 0x20, or 0x7f), not
 * starting with '.'.  NULL when name (len
 * bytes, not NUL-terminated) obeys that, else what is wrong, in words.
 */
const char *util_name_problem_n(const char *name, size_t len);

/* The same for a NUL-terminated name (NULL counts as empty). */
const char *util_name_problem(const char *name);

/*
 * What group or others may do to a file that holds a secret (its
 * st_mode): "read", "write or run", or NULL when nothing.  The one rule
 * for secret_file, a config with a secret, and a certificate's key.
 */
const char *util_mode_exposed(unsigned int mode);

/* The length of a valid name, or 0 when the name is not one. */
size_t util_name_len(const char *name);

/*
 * 32 random bits (getrandom, never blocking); when the pool cannot give
 * them, the clock mixed with salt, so that values taken together still
 * differ.  For session numbers, message ids and jitter seeds: not keys.
 */
uint32_t util_random32(uint32_t salt);

#define UTIL_FNV1A_INIT 0x811c9dc5u

/* 32-bit FNV-1a of len bytes, continuing from h (UTIL_FNV1A_INIT). */
static inline uint32_t util_fnv1a(const void *buf, size_t len, uint32_t h)
{
	const unsigned char *p = buf;

	while (len--) {
		h ^= *p++;
		h *= 0x01000193u;
	}
	return h;
}

#endif
