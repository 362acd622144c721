/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The reliable trailer of delivery = reliable (its layout: wire.h), and
 * the standalone ACK that carries one alone.  Pure logic, as wire.c.
 */
#include <errno.h>
#include <string.h>

#include "util.h"
#include "wire.h"

/* One bitmap of WIRE_SACK_WORDS words at b, most significant first. */
static void wire_rel_put_bits(uint8_t *b, const uint64_t *w)
{
	int k;

	for (k = 0; k < WIRE_SACK_WORDS; k++) {
		uint64_t x = w[WIRE_SACK_WORDS - 1 - k];

		util_put32(b + 8 * k, (uint32_t)(x >> 32));
		util_put32(b + 8 * k + 4, (uint32_t)x);
	}
}

/* Read what wire_rel_put_bits wrote. */
static void wire_rel_get_bits(const uint8_t *b, uint64_t *w)
{
	int k;

	for (k = 0; k < WIRE_SACK_WORDS; k++)
		w[WIRE_SACK_WORDS - 1 - k] = (uint64_t)util_get32(b + 8 * k)
						     << 32 |
					     util_get32(b + 8 * k + 4);
}

/* Append the reliable trailer and set the flag (see wire.h). */
size_t wire_rel_put(void *dgram, size_t len, const struct wire_rel *r)
{
	uint8_t *b = dgram;
	int j;

	wire_set_flag(b, WIRE_FLAG_REL);
	b += len;
	if (r->rflags & WIRE_REL_CODES) {
		for (j = 0; j < WIRE_REL_PLANES; j++)
			wire_rel_put_bits(b + j * WIRE_REL_SACK_LEN,
					  r->codes[j]);
		b += WIRE_REL_CODES_LEN;
		len += WIRE_REL_CODES_LEN;
	}
	if (r->rflags & WIRE_REL_SACK) {
		wire_rel_put_bits(b, r->sack);
		b += WIRE_REL_SACK_LEN;
		len += WIRE_REL_SACK_LEN;
	}
	util_put32(b, r->sess);
	util_put32(b + 4, r->psn);
	util_put32(b + 8, r->ack_sess);
	util_put32(b + 12, r->ack);
	util_put32(b + 16, r->credit);
	util_put32(b + 20, r->rflags);
	return len + WIRE_REL_LEN;
}

/* Parse the reliable trailer; the header must be decodable already. */
long wire_rel_get(const void *dgram, size_t len, struct wire_rel *r)
{
	const uint8_t *b = dgram;
	int j;

	if (len < WIRE_HDR_LEN + WIRE_REL_LEN ||
	    !(wire_peek_flags(b, len) & WIRE_FLAG_REL))
		return -EBADMSG;
	len -= WIRE_REL_LEN;
	r->sess = util_get32(b + len);
	r->psn = util_get32(b + len + 4);
	r->ack_sess = util_get32(b + len + 8);
	r->ack = util_get32(b + len + 12);
	r->credit = util_get32(b + len + 16);
	r->rflags = util_get32(b + len + 20);
	memset(r->sack, 0, sizeof(r->sack));
	memset(r->codes, 0, sizeof(r->codes));
	if (r->rflags & WIRE_REL_SACK) {
		if (len < WIRE_HDR_LEN + WIRE_REL_SACK_LEN)
			return -EBADMSG;
		len -= WIRE_REL_SACK_LEN;
		wire_rel_get_bits(b + len, r->sack);
	}
	if (r->rflags & WIRE_REL_CODES) {
		if (len < WIRE_HDR_LEN + WIRE_REL_CODES_LEN)
			return -EBADMSG;
		len -= WIRE_REL_CODES_LEN;
		for (j = 0; j < WIRE_REL_PLANES; j++)
			wire_rel_get_bits(b + len + j * WIRE_REL_SACK_LEN,
					  r->codes[j]);
	}
	return (long)len;
}

/* A bare ACK: header with no channel, then the trailer. */
size_t wire_ack_build(void *buf, uint32_t src, const struct wire_rel *r)
{
	wire_bare_hdr(buf, WIRE_ACK, src, 0);
	return wire_rel_put(buf, WIRE_HDR_LEN, r);
}
