/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Common includes for unit tests, which use cmocka.  Each test file is one
 * binary; scripts/check.sh runs it with CMOCKA_MESSAGE_OUTPUT=TAP.
 */
#ifndef IBFS_UNIT_H
#define IBFS_UNIT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

/* xorshift64: the same stream from the same seed, for simulated links. */
static inline uint64_t unit_xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#endif
