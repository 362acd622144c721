/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every libFuzzer target here shares: the entry point's prototype
 * (-Wmissing-prototypes) and CHECK, which dies loudly so that libFuzzer
 * keeps the input that broke an invariant.
 */
#ifndef IBFS_FUZZ_H
#define IBFS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                               \
	do {                                                                   \
		if (!(x))                                                      \
			__builtin_trap();                                      \
	} while (0)

#endif
