/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the bootstrap handshake (issue 20): the session
 * code of bootstrap_session.c and bootstrap_admit.c, driven over a
 * socketpair as the epoll loop drives it, against whatever bytes the
 * other end sends.  The first input byte chooses the case:
 *
 *   bit 0  alpha has a secret (else none)
 *   bit 1  alpha dialed beta (else the other end dialed alpha)
 *   bit 2  incoming: from a stranger's address (else from beta's)
 *
 * and the rest is what the other end writes, then it closes.  Whatever
 * the bytes, the session ends closed with every count back at zero, and:
 * with a secret nobody is ever expected or up (a proof cannot be guessed),
 * and a stranger's hello (strict_source) never touches beta at all, not
 * even its last_error.  The transport and routing are stubs here that
 * count what the session asks of them.
 *
 * clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *	-Iinclude tests/fuzz/fuzz_bshake.c src/bootstrap_session.c \
 *	src/bootstrap_admit.c src/bootstrap_hello.c src/config*.c \
 *	src/hostlist.c src/peer.c src/wire.c src/util.c src/log.c \
 *	-lcrypto -linih
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "bootstrap.h"
#include "bootstrap_session.h"
#include "fuzz.h"
#include "log.h"
#include "util.h"

#define ALPHA 0
#define BETA  1
#define CONF                                                                   \
	"[global]\npeer_timeout = 2s\n%s"                                      \
	"[node alpha]\naddr = 10.0.2.15\n"                                     \
	"[node beta]\naddr = 10.0.2.16\n"                                      \
	"[node gamma]\naddr = 10.0.2.17\n"

/* What the session asked of the transport, this input. */
static struct {
	int expect, up, down, failed;
} calls;

/* One daemon per case: without and with a secret. */
static struct config cfg[2];
static struct peer *peers[2];
static struct bootstrap bs[2];

/* Stubs of the transport: count, and check who is asked for. */
int tp_peer_up(struct tp *tp, struct peer *p, const struct peer_addr *addr,
	       struct ibv_ah *ah, enum config_route route)
{
	CHECK(p->idx == BETA && addr->qpn);
	calls.up++;
	return 0;
}

void tp_peer_expect(struct tp *tp, struct peer *p, const struct peer_addr *addr)
{
	CHECK(p->idx == BETA);
	calls.expect++;
}

int tp_addr_holder(struct tp *tp, const struct peer *p,
		   const struct peer_addr *addr)
{
	return -1; /* no other node is up */
}

void tp_peer_down(struct tp *tp, struct peer *p)
{
	calls.down++;
}

void tp_peer_failed(struct tp *tp, struct peer *p)
{
	calls.failed++;
}

void tp_peer_idle(struct tp *tp, struct peer *p)
{
}

int route_install(struct route *r, struct peer *p,
		  const struct peer_addr *remote)
{
	return -EHOSTUNREACH;
}

int route_install_start(struct route *r, struct peer *p,
			const struct peer_addr *remote,
			void (*done)(void *arg, int rc), void *arg,
			struct route_req **req)
{
	*req = NULL;
	return -EHOSTUNREACH;
}

void route_cancel(struct route *r, struct route_req *q)
{
}

/* A daemon "alpha" as bootstrap_open would set it up, minus the thread. */
static void daemon_init(int i, const char *secret)
{
	char text[512], err[CONFIG_ERR_MAX];
	struct bootstrap *b = &bs[i];

	snprintf(text, sizeof(text), CONF, secret);
	CHECK(!config_load_string(text, "fuzz.conf", &cfg[i], err,
				  sizeof(err)));
	CHECK(!config_select_local(&cfg[i], "alpha", err, sizeof(err)));
	CHECK(!peer_table_open(&peers[i], &cfg[i]));
	b->cfg = &cfg[i];
	b->peers = peers[i];
	b->secret = cfg[i].secret;
	b->secret_len = strlen(cfg[i].secret);
	b->timeout_ms = 5000;
	b->max_in = 4 * cfg[i].nnodes + 16;
	b->max_strangers = b->max_in / 2;
	b->bp = calloc(cfg[i].nnodes, sizeof(*b->bp));
	CHECK(b->bp && !bs_admit_open(b));
	/* the session arms its socket in an epoll set, as the loop's */
	b->ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(b->ep >= 0);
	b->me.version = HELLO_VERSION;
	strcpy(b->me.name, "alpha");
	b->me.addr.qpn = 0x11;
	b->me.addr.qkey = cfg[i].qkey;
	b->me.addr.mtu = IBV_MTU_1024;
	b->me.addr.link_layer = IBV_LINK_LAYER_ETHERNET;
	TAILQ_INIT(&b->conns);
	TAILQ_INIT(&b->dead);
	TAILQ_INIT(&b->want);
	TAILQ_INIT(&b->strangers);
}

/* Once: both daemons; the log's lines go nowhere (libFuzzer and the
 * sanitizers write to fd 2 themselves). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *null = fopen("/dev/null", "w");

	if (null)
		stderr = null;
	daemon_init(0, "");
	daemon_init(1, "secret = fuzz-secret-of-16-bytes\n");
	return 0;
}

/* A new session on fd as bs_accept or bs_out_start leaves it. */
static struct bs_conn *session(struct bootstrap *b, int fd, int outgoing,
			       int stranger)
{
	struct sockaddr_storage ss = {.ss_family = AF_INET};
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct bs_conn *c = bs_conn_new(b, fd, outgoing ? BETA : -1);

	CHECK(c);
	if (outgoing) {
		c->outgoing = 1;
		c->st = BS_CONNECTING;
		CHECK(bs_peer_get(b, BETA));
		b->bp[BETA]->out = c;
		b->dialing++;
		return c;
	}
	inet_pton(AF_INET, stranger ? "127.0.0.2" : "10.0.2.16",
		  &sin->sin_addr);
	bs_in_start(b, c, &ss, util_now_ms());
	CHECK(c->stranger == stranger);
	return c;
}

/* Read whatever the session sent, so that its sends never block. */
static void drain(int fd)
{
	char buf[4096];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* The other end sends data, then closes; alpha's side runs to its end. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int mode = size ? data[0] : 0, secret = mode & 1, outgoing = mode & 2;
	int stranger = !outgoing && (mode & 4), sv[2], i;
	struct bootstrap *b = &bs[secret];
	struct peer *beta = &b->peers[BETA];
	struct bs_conn *c;

	if (size > 4096)
		return 0;
	memset(&calls, 0, sizeof(calls));
	peer_set_error(beta, 0, NULL);
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv));
	c = session(b, sv[0], outgoing, stranger);
	if (size > 1)
		CHECK(write(sv[1], data + 1, size - 1) == (ssize_t)(size - 1));
	shutdown(sv[1], SHUT_WR);
	if (outgoing)
		bs_session_event(b, c, POLLOUT, util_now_ms());
	for (i = 0; i < 8 && c->fd >= 0; i++) {
		drain(sv[1]);
		bs_session_event(b, c, POLLIN | POLLOUT, util_now_ms());
	}
	/* still open (up and the EOF not read?): its deadline, then close */
	if (c->fd >= 0)
		bs_session_event(b, c, 0, util_now_ms() + 3600000);
	if (c->fd >= 0 && outgoing)
		bs_session_retry(b, BETA, c->st == BS_UP);
	else if (c->fd >= 0)
		bs_conn_close(b, c);
	CHECK(c->fd < 0);
	while ((c = TAILQ_FIRST(&b->dead))) {
		TAILQ_REMOVE(&b->dead, c, link);
		free(c);
	}
	close(sv[1]);
	CHECK(TAILQ_EMPTY(&b->conns) && !b->nin && !b->dialing);
	CHECK(!b->nstrangers && TAILQ_EMPTY(&b->strangers));
	CHECK(!b->bp[BETA] ||
	      (!b->bp[BETA]->live && !b->bp[BETA]->up && !b->bp[BETA]->out));
	CHECK(calls.down == (calls.up > 0));
	if (secret)
		CHECK(!calls.expect && !calls.up);
	if (stranger)
		CHECK(!calls.expect && !calls.up && !calls.failed &&
		      !beta->last_err &&
		      (!peer_used(beta) || !peer_used(beta)->last_error[0]));
	return 0;
}
