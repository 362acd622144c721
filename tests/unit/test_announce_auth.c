/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bootstrap = multicast with a secret: the challenge and response of
 * announce_auth.c, alpha (D) against beta (L), message by message as the
 * datagrams would carry them (each through the announce codec, as the
 * receive path decodes it).  Good: both end trusting the other's hello.
 * Refused: a wrong secret at either end, a replayed exchange, a proof
 * reflected back, a CONFIRM borrowed from the other direction, and
 * messages of no exchange.  Lost datagrams: resends and duplicates give
 * the same messages again, never a forked exchange.
 */
#include <errno.h>
#include <string.h>

#include "unit.h"
#include "announce.h"
#include "ann_hello.h"

static const struct ann_key key = {.secret = "sesame", .len = 6};
static const struct ann_key other_key = {.secret = "sesamf", .len = 6};

/* One end: its hello and its exchange state. */
struct end {
	struct hello me;
	struct ann_auth a;
	uint8_t fresh[HELLO_NONCE_LEN];
};

static struct end alpha, beta;

/* Fresh ends; each draws nonces from its own counter. */
static int setup(void **state)
{
	memset(&alpha, 0, sizeof(alpha));
	memset(&beta, 0, sizeof(beta));
	hello_of(&alpha.me, "alpha", 0x11);
	hello_of(&beta.me, "beta", 0x12);
	memset(alpha.fresh, 0xa0, sizeof(alpha.fresh));
	memset(beta.fresh, 0xb0, sizeof(beta.fresh));
	return 0;
}

/* A message as the wire carries it: encoded, then decoded. */
static struct ann_msg wire(const struct ann_msg *m)
{
	uint8_t buf[ANN_WIRE_LEN];
	struct ann_msg d;

	assert_int_equal(ann_msg_encode(m, buf), ANN_WIRE_LEN);
	assert_int_equal(ann_msg_decode(&d, buf, sizeof(buf)), 0);
	return d;
}

/* e starts an exchange as D: the CHALLENGE in *out. */
static void start_at(struct end *e, struct ann_msg *out)
{
	ann_auth_start(&e->a, &key, &e->me, e->fresh, out);
	e->fresh[0]++;
}

/* Give end e message in with key k; its return, *out, *who. */
static int recv_at(struct end *e, const struct ann_key *k,
		   const struct ann_msg *in, struct ann_msg *out,
		   struct hello *who)
{
	struct ann_msg w = wire(in);
	int rc;

	rc = ann_auth_recv(&e->a, k, &e->me, e->fresh, &w, out, who, NULL, 0);
	e->fresh[0]++; /* the next nonce differs */
	return rc;
}

/* The first three messages, alpha D, beta L with key lk: the PROOF. */
static void to_proof(const struct ann_key *lk, struct ann_msg *chal,
		     struct ann_msg *answer, struct ann_msg *proof)
{
	start_at(&alpha, chal);
	assert_int_equal(recv_at(&beta, lk, chal, answer, NULL),
			 ANN_AUTH_REPLY);
	assert_int_equal(recv_at(&alpha, &key, answer, proof, NULL),
			 ANN_AUTH_REPLY);
}

/* The four messages of one exchange, alpha D, beta L, one key each. */
struct run {
	struct ann_msg chal, answer, proof, confirm;
	struct hello who_at_beta, who_at_alpha;
};

/* Run an exchange to its end; both must trust. */
static void exchange(struct run *r)
{
	start_at(&alpha, &r->chal);
	assert_int_equal(r->chal.kind, ANN_CHALLENGE);
	assert_int_equal(recv_at(&beta, &key, &r->chal, &r->answer, NULL),
			 ANN_AUTH_REPLY);
	assert_int_equal(r->answer.kind, ANN_ANSWER);
	assert_int_equal(recv_at(&alpha, &key, &r->answer, &r->proof, NULL),
			 ANN_AUTH_REPLY);
	assert_int_equal(r->proof.kind, ANN_PROOF);
	assert_int_equal(
		recv_at(&beta, &key, &r->proof, &r->confirm, &r->who_at_beta),
		ANN_AUTH_REPLY | ANN_AUTH_OK);
	assert_int_equal(r->confirm.kind, ANN_CONFIRM);
	assert_int_equal(
		recv_at(&alpha, &key, &r->confirm, NULL, &r->who_at_alpha),
		ANN_AUTH_OK);
}

/* Both ways: each trusts the other's hello, QPN and boot id as sent. */
static void test_good(void **state)
{
	struct ann_msg out;
	struct run r;

	exchange(&r);
	assert_string_equal(r.who_at_beta.name, "alpha");
	assert_int_equal(r.who_at_beta.addr.qpn, 0x11);
	assert_int_equal(r.who_at_beta.addr.boot, alpha.me.addr.boot);
	assert_string_equal(r.who_at_alpha.name, "beta");
	assert_int_equal(r.who_at_alpha.addr.qpn, 0x12);
	assert_int_equal(r.who_at_alpha.addr.boot, beta.me.addr.boot);
	/* the nonces travel in the hellos, the echoes answer them */
	assert_memory_equal(r.answer.echo, r.chal.h.nonce, HELLO_NONCE_LEN);
	assert_memory_equal(r.proof.echo, r.answer.h.nonce, HELLO_NONCE_LEN);
	assert_memory_equal(r.confirm.echo, r.chal.h.nonce, HELLO_NONCE_LEN);
	assert_true(r.chal.h.flags & HELLO_F_AUTH);
	/* D is done: nothing to send again */
	assert_int_equal(ann_auth_resend(&alpha.a, &out), 0);
}

/* Proofs are the TCP handshake's: bootstrap_proof over the same input. */
static void test_same_proof_as_tcp(void **state)
{
	uint8_t want[BS_PROOF_LEN];
	struct run r;

	exchange(&r);
	assert_int_equal(bootstrap_proof(key.secret, key.len, BS_ROLE_DIALER,
					 r.answer.h.nonce, r.chal.hello,
					 r.answer.hello, want),
			 0);
	assert_memory_equal(r.proof.proof, want, BS_PROOF_LEN);
	assert_int_equal(bootstrap_proof(key.secret, key.len, BS_ROLE_LISTENER,
					 r.chal.h.nonce, r.chal.hello,
					 r.answer.hello, want),
			 0);
	assert_memory_equal(r.confirm.proof, want, BS_PROOF_LEN);
}

/* L with another secret refuses D's proof and proves nothing itself. */
static void test_wrong_secret_at_l(void **state)
{
	struct ann_msg chal, answer, proof, out;
	struct hello who;

	to_proof(&other_key, &chal, &answer, &proof);
	memset(&out, 0, sizeof(out));
	assert_int_equal(recv_at(&beta, &other_key, &proof, &out, &who),
			 -EACCES);
	assert_int_equal(out.kind, 0);
	/* the exchange stands (a forged proof must not end it); the same
	 * proof fails again */
	assert_int_equal(beta.a.l, ANN_AUTH_ANSWERED);
	assert_int_equal(recv_at(&beta, &other_key, &proof, &out, &who),
			 -EACCES);
}

/* D refuses a CONFIRM made with another secret. */
static void test_wrong_secret_at_d(void **state)
{
	struct ann_msg chal, answer, proof, confirm;
	struct hello who;

	to_proof(&key, &chal, &answer, &proof);
	confirm = answer;
	confirm.kind = ANN_CONFIRM;
	memcpy(confirm.echo, chal.h.nonce, HELLO_NONCE_LEN);
	assert_int_equal(bootstrap_proof(other_key.secret, other_key.len,
					 BS_ROLE_LISTENER, chal.h.nonce,
					 chal.hello, answer.hello,
					 confirm.proof),
			 0);
	assert_int_equal(recv_at(&alpha, &key, &confirm, NULL, &who), -EACCES);
	/* still waiting: the real CONFIRM would do */
	assert_int_equal(alpha.a.d, ANN_AUTH_PROVED);
	assert_int_equal(recv_at(&beta, &key, &proof, &confirm, &who),
			 ANN_AUTH_REPLY | ANN_AUTH_OK);
	assert_int_equal(recv_at(&alpha, &key, &confirm, NULL, &who),
			 ANN_AUTH_OK);
}

/* A recorded exchange, played into a later one, fails at every step. */
static void test_replay(void **state)
{
	struct ann_msg chal2, answer2, out;
	struct hello who;
	struct run old;

	exchange(&old);
	/* alpha starts again (a restart of beta, say): new nD, then nL */
	start_at(&alpha, &chal2);
	assert_int_equal(recv_at(&beta, &key, &chal2, &answer2, NULL),
			 ANN_AUTH_REPLY);
	/* the old ANSWER echoes the old nD */
	assert_int_equal(recv_at(&alpha, &key, &old.answer, &out, NULL),
			 -EPROTO);
	/* the old PROOF: the old hello(D) and the old nL */
	assert_int_equal(recv_at(&beta, &key, &old.proof, &out, &who), -EPROTO);
	/* the old CONFIRM: alpha has proved nothing in this one yet */
	assert_int_equal(recv_at(&alpha, &key, &old.confirm, NULL, &who),
			 -EPROTO);
	assert_int_equal(recv_at(&alpha, &key, &answer2, &out, NULL),
			 ANN_AUTH_REPLY);
	assert_int_equal(recv_at(&alpha, &key, &old.confirm, NULL, &who),
			 -EPROTO);
	/* and the old PROOF with today's echo forged in: the MAC says no */
	out = old.proof;
	memcpy(out.echo, answer2.h.nonce, HELLO_NONCE_LEN);
	memcpy(out.hello, chal2.hello, HELLO_WIRE_LEN);
	assert_int_equal(recv_at(&beta, &key, &out, &out, &who), -EACCES);
}

/* D's own proof sent back as L's: the label differs, it fails. */
static void test_reflection(void **state)
{
	struct ann_msg chal, answer, proof, refl;
	struct hello who;

	to_proof(&key, &chal, &answer, &proof);
	refl = answer; /* beta's hello, as alpha expects it */
	refl.kind = ANN_CONFIRM;
	memcpy(refl.echo, chal.h.nonce, HELLO_NONCE_LEN);
	memcpy(refl.proof, proof.proof, BS_PROOF_LEN);
	assert_int_equal(recv_at(&alpha, &key, &refl, NULL, &who), -EACCES);
}

/*
 * Two exchanges at once, alpha D to beta and beta D to alpha: a CONFIRM
 * of one is no CONFIRM of the other, and neither proof serves the other
 * direction.
 */
static void test_crossed(void **state)
{
	struct ann_msg ca, cb, aa, ab, pa, pb, out;
	struct hello who;

	start_at(&alpha, &ca);
	start_at(&beta, &cb);
	assert_int_equal(recv_at(&beta, &key, &ca, &ab, NULL), ANN_AUTH_REPLY);
	assert_int_equal(recv_at(&alpha, &key, &cb, &aa, NULL), ANN_AUTH_REPLY);
	assert_int_equal(recv_at(&alpha, &key, &ab, &pa, NULL), ANN_AUTH_REPLY);
	assert_int_equal(recv_at(&beta, &key, &aa, &pb, NULL), ANN_AUTH_REPLY);
	/* beta's PROOF (as D) offered to alpha's D side as a CONFIRM, its
	 * hello and echo made to fit: the label differs */
	out = pb;
	out.kind = ANN_CONFIRM;
	assert_int_equal(recv_at(&alpha, &key, &out, NULL, &who), -EPROTO);
	memcpy(out.hello, ab.hello, HELLO_WIRE_LEN);
	memcpy(out.echo, ca.h.nonce, HELLO_NONCE_LEN);
	assert_int_equal(recv_at(&alpha, &key, &out, NULL, &who), -EACCES);
	/* both finish properly */
	assert_int_equal(recv_at(&beta, &key, &pa, &out, &who),
			 ANN_AUTH_REPLY | ANN_AUTH_OK);
	assert_int_equal(recv_at(&alpha, &key, &out, NULL, &who), ANN_AUTH_OK);
	assert_string_equal(who.name, "beta");
	assert_int_equal(recv_at(&alpha, &key, &pb, &out, &who),
			 ANN_AUTH_REPLY | ANN_AUTH_OK);
	assert_int_equal(recv_at(&beta, &key, &out, NULL, &who), ANN_AUTH_OK);
	assert_string_equal(who.name, "alpha");
}

/* Lost datagrams: D resends the same; L answers a duplicate the same. */
static void test_loss(void **state)
{
	struct ann_msg chal, again, answer, answer2, proof, proof2, confirm,
		confirm2, out;
	struct hello who;

	start_at(&alpha, &chal);
	assert_int_equal(ann_auth_resend(&alpha.a, &again), 1);
	assert_memory_equal(&again, &chal, sizeof(chal));
	/* the CHALLENGE arrives twice: one nL, one ANSWER */
	assert_int_equal(recv_at(&beta, &key, &chal, &answer, NULL),
			 ANN_AUTH_REPLY);
	assert_int_equal(recv_at(&beta, &key, &again, &answer2, NULL),
			 ANN_AUTH_REPLY);
	assert_memory_equal(answer.hello, answer2.hello, HELLO_WIRE_LEN);
	/* the PROOF is lost: resent, or made again on a second ANSWER */
	assert_int_equal(recv_at(&alpha, &key, &answer, &proof, NULL),
			 ANN_AUTH_REPLY);
	assert_int_equal(ann_auth_resend(&alpha.a, &again), 1);
	assert_memory_equal(&again, &proof, sizeof(proof));
	assert_int_equal(recv_at(&alpha, &key, &answer2, &proof2, NULL),
			 ANN_AUTH_REPLY);
	assert_memory_equal(proof.proof, proof2.proof, BS_PROOF_LEN);
	/* the CONFIRM is lost: the PROOF again gets it again */
	assert_int_equal(recv_at(&beta, &key, &proof, &confirm, &who),
			 ANN_AUTH_REPLY | ANN_AUTH_OK);
	assert_int_equal(recv_at(&beta, &key, &proof2, &confirm2, &who),
			 ANN_AUTH_REPLY | ANN_AUTH_OK);
	assert_memory_equal(confirm.proof, confirm2.proof, BS_PROOF_LEN);
	assert_int_equal(recv_at(&alpha, &key, &confirm2, NULL, &who),
			 ANN_AUTH_OK);
	/* once done, a late duplicate belongs to no exchange */
	assert_int_equal(recv_at(&alpha, &key, &confirm, NULL, &who), -EPROTO);
	assert_int_equal(recv_at(&alpha, &key, &answer, &out, NULL), -EPROTO);
}

/* What belongs to no exchange, or comes without a secret. */
static void test_strays(void **state)
{
	static const struct ann_key none = {.secret = NULL};
	struct ann_msg chal, out;
	struct hello who;

	start_at(&alpha, &chal);
	/* beta never started: an ANSWER or CONFIRM to beta's D is stray */
	out = chal;
	out.kind = ANN_ANSWER;
	memcpy(out.echo, chal.h.nonce, HELLO_NONCE_LEN);
	assert_int_equal(recv_at(&beta, &key, &out, &out, NULL), -EPROTO);
	/* a PROOF before any CHALLENGE */
	out.kind = ANN_PROOF;
	out.proof[0] = 1;
	assert_int_equal(recv_at(&beta, &key, &out, &out, &who), -EPROTO);
	/* an announce is no part of an exchange */
	out = chal;
	out.kind = ANN_ANNOUNCE;
	assert_int_equal(ann_auth_recv(&beta.a, &key, &beta.me, beta.fresh,
				       &out, &out, &who, NULL, 0),
			 -EPROTO);
	/* no secret: nothing to prove */
	assert_int_equal(ann_auth_recv(&beta.a, &none, &beta.me, beta.fresh,
				       &chal, &out, &who, NULL, 0),
			 -EPROTO);
	assert_int_equal(ann_auth_resend(&beta.a, &out), 0);
}

/* A challenge must carry a nonce: the codec refuses one without AUTH. */
static void test_codec_kinds(void **state)
{
	uint8_t buf[ANN_WIRE_LEN];
	struct ann_msg chal, d;

	start_at(&alpha, &chal);
	ann_msg_encode(&chal, buf);
	assert_int_equal(ann_msg_decode(&d, buf, sizeof(buf)), 0);
	buf[4 + 103] &= (uint8_t)~HELLO_F_AUTH; /* the hello's flags */
	assert_int_equal(ann_msg_decode(&d, buf, sizeof(buf)), -EBADMSG);
	/* a CHALLENGE has no echo, an ANSWER no proof */
	ann_msg_encode(&chal, buf);
	buf[4 + HELLO_WIRE_LEN] = 1;
	assert_int_equal(ann_msg_decode(&d, buf, sizeof(buf)), -EBADMSG);
	buf[0] = ANN_ANSWER;
	assert_int_equal(ann_msg_decode(&d, buf, sizeof(buf)), 0);
	buf[ANN_WIRE_LEN - 1] = 1;
	assert_int_equal(ann_msg_decode(&d, buf, sizeof(buf)), -EBADMSG);
	buf[0] = ANN_PROOF;
	assert_int_equal(ann_msg_decode(&d, buf, sizeof(buf)), 0);
}

#define T(fn) cmocka_unit_test_setup(fn, setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_good),
		T(test_same_proof_as_tcp),
		T(test_wrong_secret_at_l),
		T(test_wrong_secret_at_d),
		T(test_replay),
		T(test_reflection),
		T(test_crossed),
		T(test_loss),
		T(test_strays),
		T(test_codec_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
