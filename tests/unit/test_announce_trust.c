/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bootstrap = multicast with a secret, on the announce thread's side
 * (announce_trust.c), against strangers: alpha is this node, beta a
 * configured node at address R, and a stranger speaks as beta from
 * address S (its own QPN and GID, which the transport checked).  A
 * stranger's CHALLENGE does not reset beta's exchange with us; our
 * challenge to the stranger does not hold off the one to beta; what we
 * send again to beta goes to R, never to S; and strangers cost a bounded
 * number of exchanges and AHs.  The transport and the route are fakes
 * that record what is sent where; beta's and the stranger's ends run
 * announce_auth.c directly.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "../../src/announce_int.h"
#include "ann_hello.h"
#include "log.h"

#define ALPHA	 0
#define BETA	 1
#define SENT_MAX 64

static const char conf_text[] = "[global]\nsecret = sesame-sesame-16\n"
				"[node alpha]\naddr = 10.0.2.15\n"
				"[node beta]\naddr = 10.0.2.16\n";

/* What the fakes saw. */
static struct {
	struct ann_msg m[SENT_MAX];
	struct peer_addr to[SENT_MAX];
	struct ibv_ah *ah[SENT_MAX];
	int n;
	uintptr_t nah;	     /* AHs made */
	int live_ah;	     /* made and not retired or kept */
	int expected;	     /* tp_peer_expect calls */
	struct peer_addr up; /* where tp_peer_up put beta */
	int ups;
	struct peer_counters totals;
	struct tp_info info;
	char note[256]; /* bootstrap_note's last, as it would log it */
	int note_err;
} f;

/* ---- fakes of the transport, the route and the bootstrap ---- */

int tp_ann_send_to(struct tp *tp, struct ibv_ah *ah,
		   const struct peer_addr *addr, const struct ann_msg *m)
{
	assert_true(f.n < SENT_MAX);
	f.m[f.n] = *m;
	f.to[f.n] = *addr;
	f.ah[f.n++] = ah;
	return 0;
}

int tp_ann_send(struct tp *tp, struct peer *p, const struct ann_msg *m)
{
	assert_true(f.n < SENT_MAX);
	f.m[f.n] = *m;
	f.to[f.n] = p ? f.up : (struct peer_addr){0};
	f.ah[f.n++] = NULL;
	return 0;
}

void tp_ah_retire(struct tp *tp, struct ibv_ah *ah)
{
	if (ah)
		f.live_ah--;
}

int route_resolve(struct route *r, const struct config_node *node,
		  const struct peer_addr *remote, struct ibv_ah **ah)
{
	*ah = (struct ibv_ah *)++f.nah;
	f.live_ah++;
	return 0;
}

void tp_peer_expect(struct tp *tp, struct peer *p, const struct peer_addr *addr)
{
	f.expected++;
	f.up = *addr;
}

int tp_peer_up(struct tp *tp, struct peer *p, const struct peer_addr *addr,
	       struct ibv_ah *ah, enum config_route route)
{
	f.up = *addr;
	f.ups++;
	if (ah)
		f.live_ah--; /* the transport keeps it now */
	return 0;
}

int bootstrap_peer_up(struct tp *tp, struct route *rt, struct peer *p,
		      const struct peer_addr *addr, enum config_route route)
{
	f.up = *addr;
	f.ups++;
	return 1;
}

void tp_peer_down(struct tp *tp, struct peer *p)
{
}

void tp_peer_failed(struct tp *tp, struct peer *p)
{
}

/* No fabric event flushes an AH here. */
int tp_peer_flushed(struct tp *tp, struct peer *p)
{
	return 0;
}

void bootstrap_note(struct tp *tp, struct peer *p, int err, const char *prefix,
		    const char *msg)
{
	snprintf(f.note, sizeof(f.note), "%s %s: %s", prefix, p->conf->name,
		 msg);
	f.note_err = err;
}

void bootstrap_recovered(struct peer *p)
{
}

struct peer_counters *tp_totals(struct tp *tp)
{
	return &f.totals;
}

void tp_info_get(struct tp *tp, struct tp_info *out)
{
	*out = f.info;
}

void tp_set_announce(struct tp *tp,
		     void (*fn)(void *arg, const struct ann_msg *m), void *arg)
{
}

void tp_set_need(struct tp *tp, void (*need)(void *arg, struct peer *p),
		 void *arg)
{
}

/* ---- the harness ---- */

/* A far end: its hello, its exchange state, its nonces. */
struct end {
	struct hello me;
	struct ann_auth auth;
	uint8_t fresh[HELLO_NONCE_LEN];
};

static struct config cfg;
static struct peer *peers;
static struct announce *a;
static const struct ann_key key = {.secret = "sesame-sesame-16", .len = 16};
static struct end beta, stranger;

/* alpha's announce thread state, beta at R (qpn 0x12), a stranger. */
static int setup(void **state)
{
	char err[CONFIG_ERR_MAX];

	memset(&f, 0, sizeof(f));
	assert_int_equal(
		config_load_string(conf_text, "t.ini", &cfg, err, sizeof(err)),
		0);
	assert_int_equal(config_select_local(&cfg, "alpha", err, sizeof(err)),
			 0);
	assert_int_equal(peer_table_open(&peers, &cfg), 0);
	a = calloc(1, sizeof(*a));
	assert_non_null(a);
	a->cfg = &cfg;
	a->peers = peers;
	a->key = key;
	a->ap = calloc(cfg.nnodes, sizeof(*a->ap));
	assert_non_null(a->ap);
	TAILQ_INIT(&a->pend);
	TAILQ_INIT(&a->seek);
	hello_of(&a->mine.h, "alpha", 0x11);
	memset(&beta, 0, sizeof(beta));
	memset(&stranger, 0, sizeof(stranger));
	hello_of(&beta.me, "beta", 0x12);
	hello_of(&stranger.me, "beta", 0x66);
	memset(beta.fresh, 0xb0, sizeof(beta.fresh));
	memset(stranger.fresh, 0x50, sizeof(stranger.fresh));
	return 0;
}

/* Everything goes, and every AH made is retired or kept. */
static int teardown(void **state)
{
	int i;

	for (i = 0; i < cfg.nnodes; i++)
		ann_trust_free(a, i);
	assert_int_equal(f.live_ah, 0);
	free(a->ap);
	free(a);
	peer_table_close(peers, cfg.nnodes);
	config_free(&cfg);
	return 0;
}

/* The last message alpha sent: of kind, to e's address. */
static const struct ann_msg *sent_to(const struct end *e, int kind)
{
	assert_true(f.n > 0);
	assert_int_equal(f.m[f.n - 1].kind, kind);
	assert_true(peer_addr_same(&f.to[f.n - 1], &e->me.addr));
	return &f.m[f.n - 1];
}

/* e, as D, challenges alpha. */
static void challenge_from(struct end *e, int64_t now)
{
	struct ann_msg m;

	ann_auth_start(&e->auth, &key, &e->me, e->fresh, &m);
	e->fresh[0]++;
	ann_exchange_in(a, BETA, &m, now);
}

/* e takes alpha's message in (with its key); *out is its reply. */
static int end_recv(struct end *e, const struct ann_msg *in,
		    struct ann_msg *out)
{
	struct hello who;
	int rc = ann_auth_recv(&e->auth, &key, &e->me, e->fresh, in, out, &who,
			       NULL, 0);

	e->fresh[0]++;
	return rc;
}

/* S1: a stranger's CHALLENGE under beta's name, between beta's
 * CHALLENGE and its PROOF, leaves beta's exchange standing. */
static void test_stranger_challenge(void **state)
{
	struct ann_msg answer, proof, sanswer;

	challenge_from(&beta, 1000);
	answer = *sent_to(&beta, ANN_ANSWER);
	challenge_from(&stranger, 1001);
	sanswer = *sent_to(&stranger, ANN_ANSWER);
	(void)sanswer;
	assert_int_equal(end_recv(&beta, &answer, &proof), ANN_AUTH_REPLY);
	ann_exchange_in(a, BETA, &proof, 1002);
	sent_to(&beta, ANN_CONFIRM);
	assert_int_equal(f.expected, 1);
	assert_true(peer_addr_same(&f.up, &beta.me.addr));
	assert_true(ann_trusted(a, BETA, &beta.me));
}

/* S1: many strangers' CHALLENGEs cost a bounded table and AHs, and
 * beta, challenging after them, still gets through. */
static void test_strangers_bounded(void **state)
{
	struct ann_msg answer, proof;
	int i;

	for (i = 0; i < 40; i++) {
		hello_of(&stranger.me, "beta", 0x100 + i);
		challenge_from(&stranger, 1000 + i);
		sent_to(&stranger, ANN_ANSWER);
		assert_true(f.live_ah <= ANN_XCHG_MAX);
	}
	challenge_from(&beta, 2000);
	answer = *sent_to(&beta, ANN_ANSWER);
	assert_int_equal(end_recv(&beta, &answer, &proof), ANN_AUTH_REPLY);
	ann_exchange_in(a, BETA, &proof, 2001);
	sent_to(&beta, ANN_CONFIRM);
	assert_int_equal(f.expected, 1);
}

/* alpha challenges beta at now, beta answers, alpha proves: beta's
 * CONFIRM, not yet taken. */
static struct ann_msg beta_confirms(int64_t now)
{
	struct ann_msg chal, answer, proof, confirm;

	ann_challenge(a, BETA, &beta.me, now);
	chal = *sent_to(&beta, ANN_CHALLENGE);
	assert_int_equal(end_recv(&beta, &chal, &answer), ANN_AUTH_REPLY);
	ann_exchange_in(a, BETA, &answer, now + 1);
	proof = *sent_to(&beta, ANN_PROOF);
	assert_int_equal(end_recv(&beta, &proof, &confirm),
			 ANN_AUTH_REPLY | ANN_AUTH_OK);
	return confirm;
}

/* S2: our challenge to a stranger announcing as beta does not hold off
 * the one to beta, which then comes up at R. */
static void test_two_pending(void **state)
{
	struct ann_msg confirm;

	ann_challenge(a, BETA, &stranger.me, 1000);
	sent_to(&stranger, ANN_CHALLENGE);
	confirm = beta_confirms(1001);
	ann_exchange_in(a, BETA, &confirm, 1003);
	assert_int_equal(f.ups, 1);
	assert_true(peer_addr_same(&f.up, &beta.me.addr));
	assert_true(a->ap[BETA].k.up);
}

/* S3: after a stranger's CHALLENGE was answered at S, our challenge to
 * beta is sent again to R, through R's AH. */
static void test_resend_to_own_address(void **state)
{
	struct ibv_ah *ah;

	ann_challenge(a, BETA, &beta.me, 1000);
	sent_to(&beta, ANN_CHALLENGE);
	ah = f.ah[f.n - 1];
	challenge_from(&stranger, 1001);
	sent_to(&stranger, ANN_ANSWER);
	assert_ptr_not_equal(f.ah[f.n - 1], ah);
	ann_pending(a, 1000 + ANN_RTO_MIN, INT64_MAX);
	sent_to(&beta, ANN_CHALLENGE);
	assert_ptr_equal(f.ah[f.n - 1], ah);
}

/* A PROOF that does not check out is beta's last_error in the TCP
 * handshake's words (the reason ann_auth_recv gives), and nothing is
 * confirmed or installed. */
static void test_refusal_noted(void **state)
{
	struct ann_msg answer, proof;

	challenge_from(&beta, 1000);
	answer = *sent_to(&beta, ANN_ANSWER);
	assert_int_equal(end_recv(&beta, &answer, &proof), ANN_AUTH_REPLY);
	proof.proof[0] ^= 1;
	ann_exchange_in(a, BETA, &proof, 1001);
	assert_string_equal(f.note, "peer beta: authentication failed: wrong "
				    "proof (a different secret?)");
	assert_int_equal(f.note_err, EACCES);
	sent_to(&beta, ANN_ANSWER); /* nothing sent since */
	assert_int_equal(f.expected, 0);
	assert_false(ann_trusted(a, BETA, &beta.me));
}

/* Our challenge answered, but beta's CONFIRM refused: when it runs out,
 * alpha does not say beta did not answer. */
static void test_answered_not_silent(void **state)
{
	struct ann_msg confirm = beta_confirms(1000);

	confirm.proof[0] ^= 1;
	ann_exchange_in(a, BETA, &confirm, 1002);
	assert_string_equal(f.note, "peer beta: authentication failed: wrong "
				    "proof (a different secret?)");
	f.note[0] = 0;
	ann_pending(a, 1000 + cfg.peer_timeout_ms, INT64_MAX);
	assert_string_equal(f.note, "");
	assert_false(ann_trusted(a, BETA, &beta.me));
}

/* New certificate files (a SIGHUP's new generation): beta, proven
 * before, is trusted again only once it proves itself again. */
static void test_reload_proves_again(void **state)
{
	struct ann_msg answer, proof;
	int i;

	for (i = 0; i < 2; i++) {
		memset(&beta.auth, 0, sizeof(beta.auth));
		challenge_from(&beta, 1000 + 10 * i);
		answer = *sent_to(&beta, ANN_ANSWER);
		assert_int_equal(end_recv(&beta, &answer, &proof),
				 ANN_AUTH_REPLY);
		ann_exchange_in(a, BETA, &proof, 1001 + 10 * i);
		assert_true(ann_trusted(a, BETA, &beta.me));
		a->der_gen++; /* what ann_cert_fresh does after a reload */
		assert_false(ann_trusted(a, BETA, &beta.me));
	}
}

/* Beta challenges alpha, n strangers speaking as beta challenge after
 * it, and then beta's PROOF: whether alpha confirms. */
static int beta_through_strangers(int n, int64_t now)
{
	struct ann_msg answer, proof;
	int i;

	challenge_from(&beta, now);
	answer = *sent_to(&beta, ANN_ANSWER);
	for (i = 0; i < n; i++) {
		hello_of(&stranger.me, "beta", 0x100 + i);
		challenge_from(&stranger, now + 1 + i);
		assert_true(f.live_ah <= ANN_XCHG_MAX);
	}
	assert_int_equal(end_recv(&beta, &answer, &proof), ANN_AUTH_REPLY);
	ann_exchange_in(a, BETA, &proof, now + 100);
	return f.m[f.n - 1].kind == ANN_CONFIRM &&
	       peer_addr_same(&f.to[f.n - 1], &beta.me.addr) &&
	       ann_trusted(a, BETA, &beta.me);
}

/*
 * F4: strangers cannot push beta's exchange out while it is under way,
 * when beta's address is surely its own: on RoCE, a GID that is beta's
 * configured addr (10.0.2.16), whatever strict_source says ...
 */
static void test_strangers_keep_out_roce(void **state)
{
	cfg.strict_source = 0;
	util_v4mapped(
		beta.me.addr.gid.raw,
		&((struct sockaddr_in *)&cfg.nodes[BETA].addr_sa)->sin_addr);
	assert_true(beta_through_strangers(ANN_XCHG_MAX + 4, 1000));
}

/* ... and on InfiniBand, where a GID names no address, the port beta
 * last proved itself from, where it comes back with a new QP after a
 * restart. */
static void test_strangers_keep_out_restart(void **state)
{
	beta.me.addr.gid.raw[0] = 0xfe;
	beta.me.addr.gid.raw[1] = 0x80;
	assert_true(beta_through_strangers(0, 1000));
	beta.me.addr.qpn = 0x13;
	beta.me.addr.boot++;
	assert_true(beta_through_strangers(ANN_XCHG_MAX + 4, 2000));
}

/* alpha challenges beta (D), which proves itself: beta up there. */
static void beta_met_as_d(int64_t now)
{
	struct ann_msg confirm = beta_confirms(now);

	ann_exchange_in(a, BETA, &confirm, now + 2);
	assert_true(a->ap[BETA].k.up);
}

/*
 * S5: a node that restarts again and again (anyone at its address can
 * make it seem so without a secret) costs a bounded number of "peer
 * restarted" lines: at most LOG_RL_BURST a period, and one line saying
 * how many were left out.
 */
static void test_restarts_rate_limited(void **state)
{
	FILE *log = tmpfile();
	int saved = dup(2), i, lines = 0;
	char line[256];

	assert_non_null(log);
	fflush(stderr);
	assert_true(dup2(fileno(log), 2) >= 0);
	for (i = 0; i < 40; i++) {
		f.n = 0; /* what this meeting sends */
		beta.me.addr.boot = 0x2000 + i;
		beta_met_as_d(1000 + 10 * i);
	}
	fflush(stderr);
	assert_true(dup2(saved, 2) >= 0);
	close(saved);
	rewind(log);
	while (fgets(line, sizeof(line), log))
		lines += strstr(line, "peer beta restarted") != NULL;
	fclose(log);
	assert_true(lines > 0);
	assert_true(lines <= LOG_RL_BURST);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refusal_noted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reload_proves_again, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_answered_not_silent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stranger_challenge, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_strangers_bounded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_strangers_keep_out_roce,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_strangers_keep_out_restart,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_restarts_rate_limited,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_pending, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_resend_to_own_address,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
