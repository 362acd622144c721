/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for bootstrap = multicast's announces: anybody on the
 * fabric can send a WIRE_ANN datagram to the group or to our QP, and the
 * receive path decodes it before any source filter.  Whatever the bytes,
 * ann_datagram_decode accepts or refuses them with -EBADMSG, reads
 * nothing past them, and what it accepts is a hello the daemon may rely
 * on, which builds back into the same datagram.  An accepted message is
 * then taken by the challenge and response (announce_auth.c) of a node
 * with a secret, twice (a duplicate), and the answers are what the
 * protocol allows: nothing trusted without a proof.  A PROOF or CONFIRM
 * may carry a certificate step (with a ca): its DER lies inside the
 * datagram, and the body builds back the same, step included.
 *
 * clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *	-Iinclude tests/fuzz/fuzz_ann.c src/announce_msg.c \
 *	src/announce_auth.c src/bootstrap_hello.c src/cert.c src/peer.c \
 *	src/wire.c src/config*.c src/hostlist.c src/util.c src/log.c \
 *	-lcrypto -linih
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "announce.h"
#include "fuzz.h"
#include "util.h"

#define DG_LEN (WIRE_HDR_LEN + ANN_WIRE_LEN)
#define DG_MAX (WIRE_HDR_LEN + ANN_MSG_MAX)

/* What the announce thread relies on in an accepted message. */
static void check_accepted(const struct ann_msg *m)
{
	CHECK(m->kind >= ANN_ANNOUNCE && m->kind < ANN_KIND_MAX);
	CHECK(!util_name_problem(m->h.name));
	CHECK(m->h.addr.qpn >= 1 && m->h.addr.qpn <= 0xffffff);
	CHECK(m->h.addr.mtu >= IBV_MTU_256 && m->h.addr.mtu <= IBV_MTU_4096);
	CHECK(m->h.addr.boot != 0);
	/* the exchange's kinds carry a nonce; the on-demand ones need none */
	CHECK(m->kind == ANN_ANNOUNCE || m->kind == ANN_QUERY ||
	      m->kind == ANN_MEET ||
	      (m->h.flags & (HELLO_F_AUTH | HELLO_F_CERT)));
	/* only a query names a target */
	CHECK(m->kind == ANN_QUERY || m->target == 0);
	CHECK(ann_msg_from(m, m->h.addr.qpn, &m->h.addr.gid, 0) == 0);
	CHECK(!m->der || ((m->kind == ANN_PROOF || m->kind == ANN_CONFIRM) &&
			  (m->h.flags & HELLO_F_CERT) && m->derlen &&
			  m->derlen <= CERT_DER_MAX && m->siglen &&
			  m->siglen <= CERT_SIG_MAX));
}

/* A node with a secret takes m twice; nothing is proven without one. */
static void check_auth(const struct ann_msg *m)
{
	static const struct ann_key key = {.secret = "fuzz-secret", .len = 11};
	static const uint8_t fresh[HELLO_NONCE_LEN] = {1, 2, 3};
	struct ann_msg out, first;
	struct ann_auth a;
	struct hello me, who;
	int rc, rc2;

	memset(&a, 0, sizeof(a));
	memset(&me, 0, sizeof(me));
	me.version = HELLO_VERSION;
	strcpy(me.name, "alpha");
	me.addr.qpn = 1;
	me.addr.mtu = IBV_MTU_1024;
	me.addr.boot = 1;
	rc = ann_auth_recv(&a, &key, &me, fresh, m, &out, &who, NULL, 0);
	/* a fresh node proves nobody: only a CHALLENGE gets an answer */
	CHECK(rc == -EPROTO || rc == ANN_AUTH_REPLY);
	if (rc != ANN_AUTH_REPLY)
		return;
	CHECK(m->kind == ANN_CHALLENGE && out.kind == ANN_ANSWER);
	CHECK(!memcmp(out.echo, m->h.nonce, HELLO_NONCE_LEN));
	first = out;
	rc2 = ann_auth_recv(&a, &key, &me, fresh, m, &out, &who, NULL, 0);
	CHECK(rc2 == ANN_AUTH_REPLY && !memcmp(&out, &first, sizeof(out)));
}

/* One input is one datagram, header onward. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy, again[DG_MAX];
	struct ann_msg m;
	int rc;

	copy = malloc(size ? size : 1); /* ASan sees reads past it */
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	rc = ann_datagram_decode(&m, copy, size);
	CHECK(rc == 0 || rc == -EBADMSG);
	if (!rc) {
		CHECK(size == DG_LEN ||
		      (m.der && size > DG_LEN && size <= DG_MAX));
		check_accepted(&m);
		CHECK(!m.der ||
		      (m.der > copy && m.der + m.derlen <= copy + size));
		CHECK(ann_datagram_build(again, wire_node_id(m.h.name), &m) ==
		      size);
		/* the body as it came (the header's flags and msg_id are
		 * not read) */
		CHECK(!memcmp(again + WIRE_HDR_LEN, copy + WIRE_HDR_LEN,
			      size - WIRE_HDR_LEN));
		check_auth(&m);
	}
	free(copy);
	return 0;
}
