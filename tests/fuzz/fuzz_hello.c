/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the bootstrap hello: hello_decode takes the first
 * HELLO_WIRE_LEN bytes a peer (or anyone who reaches the TCP port) sends.
 * Whatever they are, it accepts or refuses them with -EBADMSG or -EPROTO,
 * reads nothing past them, and what it accepts satisfies every check the
 * daemon relies on and encodes back to the same hello.  With HELLO_F_AUTH
 * the proof over the hello, built and checked as a session does, holds,
 * and any one flipped bit of it fails; with HELLO_F_CERT the certificate
 * step's head that follows is read within its limits.
 *
 * The codec and the proofs are bootstrap_hello.c alone, apart from the
 * session code, so the target links without the transport or routing:
 *
 * clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *	-Iinclude tests/fuzz/fuzz_hello.c src/bootstrap_hello.c src/util.c \
 *	-lcrypto
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "fuzz.h"
#include "util.h"

/* Field by field: struct padding is not part of a hello. */
static int hello_same(const struct hello *a, const struct hello *b)
{
	return a->version == b->version && !strcmp(a->name, b->name) &&
	       a->delivery == b->delivery && a->addr.qpn == b->addr.qpn &&
	       a->addr.qkey == b->addr.qkey && a->addr.lid == b->addr.lid &&
	       a->addr.mtu == b->addr.mtu &&
	       a->addr.link_layer == b->addr.link_layer &&
	       !memcmp(a->addr.gid.raw, b->addr.gid.raw, 16) &&
	       a->addr.max_message == b->addr.max_message &&
	       a->flags == b->flags &&
	       !memcmp(a->nonce, b->nonce, HELLO_NONCE_LEN);
}

/* What an accepted hello promises to bs_check_hello and route_resolve. */
static void check_accepted(const struct hello *h)
{
	static const uint8_t zero[HELLO_NONCE_LEN];

	CHECK(h->version == HELLO_VERSION);
	CHECK(memchr(h->name, '\0', sizeof(h->name)) != NULL);
	CHECK(!util_name_problem(h->name));
	CHECK(h->delivery == DELIVERY_DATAGRAM ||
	      h->delivery == DELIVERY_RELIABLE);
	CHECK(h->addr.qpn >= 1 && h->addr.qpn <= 0xffffff);
	CHECK(h->addr.mtu >= IBV_MTU_256 && h->addr.mtu <= IBV_MTU_4096);
	CHECK((h->flags & ~(HELLO_F_AUTH | HELLO_F_CERT)) == 0);
	if (!(h->flags & (HELLO_F_AUTH | HELLO_F_CERT)))
		CHECK(!memcmp(h->nonce, zero, HELLO_NONCE_LEN));
}

/*
 * With HELLO_F_CERT, what follows the hello is read as the certificate
 * step's head (bs_cert_head): what it accepts stays within the limits
 * bs_conn's buffer is sized for.
 */
static void check_cert_step(const uint8_t *data, size_t size)
{
	size_t derlen, siglen;

	if (size < BS_CERT_HEAD || bs_cert_head(data, &derlen, &siglen))
		return;
	CHECK(derlen >= 1 && derlen <= CERT_DER_MAX);
	CHECK(siglen >= 1 && siglen <= CERT_SIG_MAX);
	CHECK(BS_CERT_HEAD + derlen + siglen <= BS_CERT_MSG_MAX);
}

/* The proof over this hello (as both sides' hello) and a wrong one. */
static void check_proof(const struct hello *h, const uint8_t *wire,
			const uint8_t *data, size_t size)
{
	uint8_t proof[BS_PROOF_LEN];
	size_t slen = size < 32 ? size : 32;
	enum bs_role who = size & 1 ? BS_ROLE_LISTENER : BS_ROLE_DIALER;
	unsigned bit;

	if (!slen)
		return;
	CHECK(bootstrap_proof(data, slen, who, h->nonce, wire, wire, proof) ==
	      0);
	CHECK(bootstrap_proof_check(data, slen, who, h->nonce, wire, wire,
				    proof) == 0);
	bit = data[size - 1] % (8 * BS_PROOF_LEN);
	proof[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	CHECK(bootstrap_proof_check(data, slen, who, h->nonce, wire, wire,
				    proof) == -EACCES);
}

/* One input is the bytes a peer sent, from the first on. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t wire[HELLO_WIRE_LEN], *copy;
	struct hello h, again;
	int rc, rc2;

	/* An exact-size heap copy, so that ASan sees any read past it. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	memset(&h, 0, sizeof(h));
	rc = hello_decode(&h, copy, size);
	CHECK(rc == 0 || rc == -EBADMSG || rc == -EPROTO);
	if (size < HELLO_WIRE_LEN) {
		CHECK(rc == -EBADMSG);
		free(copy);
		return 0;
	}
	/* Only the first HELLO_WIRE_LEN bytes count. */
	rc2 = hello_decode(&again, copy, HELLO_WIRE_LEN);
	CHECK(rc2 == rc);
	CHECK(hello_decode(&again, copy, HELLO_WIRE_LEN - 1) == -EBADMSG);
	if (rc) {
		free(copy);
		return 0;
	}
	check_accepted(&h);
	CHECK(hello_encode(&h, wire) == HELLO_WIRE_LEN);
	/* The fixed fields travel as they came (name, pad, reserved and a
	 * nonce without AUTH are normalised). */
	CHECK(!memcmp(wire, copy, 8));
	CHECK(!memcmp(wire + 72, copy + 72, 11));
	CHECK(!memcmp(wire + 84, copy + 84, 24));
	memset(&again, 0, sizeof(again));
	CHECK(hello_decode(&again, wire, sizeof(wire)) == 0);
	CHECK(hello_same(&h, &again));
	if (h.flags & HELLO_F_AUTH)
		check_proof(&h, wire, copy, size);
	if (h.flags & HELLO_F_CERT)
		check_cert_step(copy + HELLO_WIRE_LEN, size - HELLO_WIRE_LEN);
	free(copy);
	return 0;
}
