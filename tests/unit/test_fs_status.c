/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for fs_status.c, the text of the .status files, on the host:
 * a tree built by hand (fs_int.h's struct fs, no FUSE, no threads) over a
 * peer table whose counters are known, and the fake transport of
 * fake_tp.c for the local port and the totals.  Each test compares the
 * rendered text line by line with what it set: every counter of peer.h's
 * X lists in their order, the gauges, the parked requests, the local
 * node's port.  Node beta is this node; alpha and gamma peers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "../../src/fs_int.h"

#include "unit.h"
/* fake_tp.c's helpers for the write tests of test_fs_chan.c and
 * test_fs_park.c go unused here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "fake_tp.c"
#pragma GCC diagnostic pop

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define THREE_NODES                                                            \
	"[node alpha]\naddr = 10.0.2.15\n"                                     \
	"[node beta]\naddr = 10.0.2.16\n"                                      \
	"[node gamma]\naddr = 10.0.2.17\n"

#define ALPHA	  0
#define BETA	  1
#define GAMMA	  2
#define NNODES	  3
#define UPTIME	  1000 /* seconds since the fs started */
#define WANT_MAX  96   /* lines a .status may have */
#define WANT_LINE 128

/* The lines a rendering must have, in order; "key=" + any: key only. */
struct want {
	char line[WANT_MAX][WANT_LINE];
	int any[WANT_MAX]; /* the value may be anything (uptime) */
	int n;
};

static struct {
	struct config cfg;
	struct peer *peers;
	struct fs fs;
	struct fs_node nodes[NNODES];
	struct fs_node *nodep[NNODES + 1]; /* fs.nodes: all/ never made */
	struct fs_chan chans[3];
	struct fs_chan *slots[4];
	struct tp tp;
	char *text;
	size_t len;
} t;

/* An IPv6 text as the GID it is. */
static void set_gid(union ibv_gid *gid, const char *text)
{
	assert_int_equal(inet_pton(AF_INET6, text, gid->raw), 1);
}

/*
 * The tree fs_open would build for THREE_NODES, by hand: inode numbers,
 * nodes over the peers, a fake transport with a known port, and an
 * error-checking fs->lock, so that a rendering that took it again would
 * show (a relock fails instead of deadlocking; see render).
 */
static int setup(void **state)
{
	char err[CONFIG_ERR_MAX];
	pthread_mutexattr_t ma;
	int i;

	memset(&t, 0, sizeof(t));
	if (config_load_string(THREE_NODES, "t.ini", &t.cfg, err,
			       sizeof(err)) ||
	    config_select_local(&t.cfg, "beta", err, sizeof(err)) ||
	    t.cfg.nnodes != NNODES || peer_table_open(&t.peers, &t.cfg))
		return -1;
	t.fs.cfg = &t.cfg;
	t.fs.peers = t.peers;
	t.fs.nodes = t.nodep;
	t.fs.nnodes = NNODES;
	for (i = 0; i < NNODES; i++) {
		t.nodep[i] = &t.nodes[i];
		t.nodes[i].peer = &t.peers[i];
		t.nodes[i].ino = fs_node_ino(i, FS_SLOT_DIR);
		LIST_INIT(&t.nodes[i].chans);
	}
	t.fs.chan_base = t.fs.next_ino = fs_node_ino(NNODES, FS_SLOT_DIR);
	t.fs.started = time(NULL) - UPTIME;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&t.fs.lock, &ma);
	pthread_mutexattr_destroy(&ma);
	fake_tp_init(&t.tp, 4096);
	t.tp.info.lid = 7;
	t.tp.info.gid_index = 3;
	t.tp.info.recv_depth = 512;
	t.tp.info.send_depth = 128;
	set_gid(&t.tp.info.gid, "fe80::1:2");
	t.fs.tp = &t.tp;
	return 0;
}

/* Nothing left for the next test or for valgrind. */
static int teardown(void **state)
{
	free(t.text);
	pthread_mutex_destroy(&t.fs.lock);
	fake_tp_free(&t.tp);
	peer_table_close(t.peers, t.cfg.nnodes);
	config_free(&t.cfg);
	return 0;
}

/*
 * Parked requests: two reads and a reliable write on alpha, three reads
 * on gamma; polls parked on one of alpha's two channels and on gamma's
 * one; an empty slot between them, as a freed channel leaves.
 */
static void park_some(void)
{
	int i;

	t.nodes[ALPHA].nparked = 2;
	t.nodes[ALPHA].nwrites = 1;
	t.nodes[ALPHA].nchans = 2;
	t.nodes[GAMMA].nparked = 3;
	t.nodes[GAMMA].nchans = 1;
	t.chans[0].node = &t.nodes[ALPHA];
	t.chans[0].npolls = 1;
	t.chans[1].node = &t.nodes[ALPHA];
	t.chans[2].node = &t.nodes[GAMMA];
	t.chans[2].npolls = 1;
	t.slots[0] = &t.chans[0];
	t.slots[1] = &t.chans[1];
	t.slots[3] = &t.chans[2];
	for (i = 0; i < 4; i++)
		if (t.slots[i])
			t.slots[i]->ino = t.fs.chan_base + i;
	t.fs.chans = t.slots;
	t.fs.nslots = 4;
}

/* Append a line to w, printf-style. */
static void want(struct want *w, const char *fmt, ...)
{
	va_list ap;

	assert_true(w->n < WANT_MAX);
	va_start(ap, fmt);
	vsnprintf(w->line[w->n++], WANT_LINE, fmt, ap);
	va_end(ap);
}

/* Append a line whose key must be there, whatever its value. */
static void want_key(struct want *w, const char *key)
{
	want(w, "%s=", key);
	w->any[w->n - 1] = 1;
}

/* Append the lines of the parked requests' counts. */
static void want_parked(struct want *w, int reads, int polls, int writes)
{
	want(w, "parked_reads=%d", reads);
	want(w, "parked_polls=%d", polls);
	want(w, "waiting_writes=%d", writes);
	want(w, "meeting_writes=0");
}

/* Append the lines that open NODE/.status: who the peer is. */
static void want_peer(struct want *w, int idx, const char *state,
		      const char *last_error, const char *last_attempt)
{
	want(w, "name=%s", t.cfg.nodes[idx].name);
	want(w, "state=%s", state);
	want(w, "local=%d", idx == BETA);
	want(w, "last_error=%s", last_error);
	want(w, "last_attempt=%s", last_attempt);
	want(w, "addr=%s", t.cfg.nodes[idx].addr);
}

/*
 * Give every counter of c a value of its own, the k-th base + k, and
 * append the lines .status shows for them: the traffic counters, the
 * drops and the reliable ones, then the gauges (when gauges: NODE/.status
 * only).  The gauges are set either way, to show the root leaves them.
 */
static void set_counters(struct peer_counters *c, unsigned base, int gauges,
			 struct want *w)
{
	unsigned k = 0;
	int i;

#define SET(name, comment)                                                     \
	atomic_store(&c->name, base + ++k);                                    \
	want(w, #name "=%u", base + k);
	PEER_COUNTERS_TRAFFIC(SET)
	for (i = 0; i < DROP_MAX; i++) {
		atomic_store(&c->drops[i], base + ++k);
		want(w, "drop_%s=%u", peer_drop_names[i], base + k);
	}
	PEER_COUNTERS_REL(SET)
#undef SET
#define SET_GAUGE(name, comment)                                               \
	atomic_store(&c->name, base + ++k);                                    \
	if (gauges)                                                            \
		want(w, #name "=%u", base + k);
	PEER_GAUGES_STREAM(SET_GAUGE)
#undef SET_GAUGE
}

/* The fabric's events set to base + 1, base + 2, ..., the last at when,
 * then the node's gauges; their lines appended to w. */
static void set_fabric(struct fabric_counters *c, unsigned base, int64_t when,
		       struct want *w)
{
	unsigned k = 0;

#define SET(name, comment)                                                     \
	atomic_store(&c->name, base + ++k);                                    \
	want(w, #name "=%u", base + k);
	PEER_COUNTERS_FABRIC(SET)
#undef SET
	atomic_store(&c->last_event, when);
	want(w, "fabric_last_event=%lld", (long long)when);
#define SET(name, comment)                                                     \
	atomic_store(&c->name, base + ++k);                                    \
	want(w, #name "=%u", base + k);
	PEER_GAUGES_NODE(SET)
#undef SET
}

/*
 * Give p the address a hello would (qkey 0x1b1f5000), and append the
 * lines NODE/.status shows for it.
 */
static void set_addr(struct peer *p, uint32_t qpn, uint16_t lid,
		     const char *gid, enum config_route route, struct want *w)
{
	peer_use(p)->addr.qpn = qpn;
	peer_use(p)->addr.qkey = 0x1b1f5000;
	peer_use(p)->addr.lid = lid;
	set_gid(&peer_use(p)->addr.gid, gid);
	peer_use(p)->route_used = route;
	want(w, "qpn=%u", qpn);
	want(w, "qkey=0x1b1f5000");
	want(w, "lid=%u", lid);
	want(w, "gid=%s", gid);
	want(w, "route=%s", route == ROUTE_SA ? "sa" : "gid");
}

/*
 * Render node's .status (the root's when node is NULL) as fs_op_open
 * does, under fs->lock.  The rendering must not take that lock: with the
 * error-checking mutex a relock fails and its unlock releases ours, so
 * our unlock would fail.  Nor may it leave a peer's lock held.
 */
static const char *render(struct fs_node *node)
{
	int i;

	free(t.text);
	t.text = NULL;
	assert_int_equal(pthread_mutex_lock(&t.fs.lock), 0);
	assert_int_equal(fs_status_render(&t.fs, node, &t.text, &t.len), 0);
	assert_int_equal(pthread_mutex_unlock(&t.fs.lock), 0);
	for (i = 0; i < NNODES; i++) {
		assert_int_equal(pthread_mutex_trylock(&t.peers[i].lock), 0);
		pthread_mutex_unlock(&t.peers[i].lock);
	}
	assert_non_null(t.text);
	assert_int_equal(strlen(t.text), t.len);
	return t.text;
}

/* Fail at the caller's line, naming the line of the text that differs. */
static void check_lines(const char *text, const struct want *w,
			const char *file, int line)
{
	const char *at = text, *nl;
	char got[WANT_LINE];
	int i;

	for (i = 0; i < w->n; i++, at = nl + 1) {
		nl = strchr(at, '\n');
		if (!nl) {
			print_error("line %d: want \"%s\", got the end\n",
				    i + 1, w->line[i]);
			_fail(file, line);
		}
		snprintf(got, sizeof(got), "%.*s", (int)(nl - at), at);
		if (w->any[i] ? strncmp(got, w->line[i], strlen(w->line[i]))
			      : strcmp(got, w->line[i])) {
			print_error("line %d: want \"%s%s\", got \"%s\"\n",
				    i + 1, w->line[i], w->any[i] ? "..." : "",
				    got);
			_fail(file, line);
		}
	}
	if (*at) {
		print_error("after line %d, more: \"%.60s\"\n", w->n, at);
		_fail(file, line);
	}
}
#define assert_lines(text, w) check_lines(text, w, __FILE__, __LINE__)

/* The value of key= in text, which must be there, as a number. */
static long value_of(const char *text, const char *key)
{
	char pat[WANT_LINE];
	const char *at;

	snprintf(pat, sizeof(pat), "\n%s=", key);
	at = strstr(text, pat);
	assert_non_null(at);
	return strtol(at + strlen(pat), NULL, 10);
}

/* MOUNT/.status: who this node is, its port, the parked, the totals. */
static void test_root(void **state)
{
	struct want w = {0};
	long before, after, up;
	const char *s;

	t.cfg.route = ROUTE_GID;
	t.cfg.sl = 3; /* traffic_class unset: route = gid's 0 */
	t.tp.info.pkey = 0x8001;
	t.tp.info.pkey_index = 2;
	park_some();
	want(&w, "node=beta");
	want(&w, "device=fake0");
	want(&w, "port=1");
	want(&w, "lid=7");
	want(&w, "gid=fe80::1:2");
	want(&w, "gid_index=3");
	want(&w, "qpn=%u", 0x1234);
	want(&w, "qkey=0x1b1f5000");
	want(&w, "path_mtu=1024");
	want(&w, "recv_depth=512");
	want(&w, "send_depth=128");
	want(&w, "pkey=0x8001");
	want(&w, "pkey_index=2");
	want(&w, "sl=3");
	want(&w, "traffic_class=0");
	want(&w, "max_message=%lu", (unsigned long)t.cfg.max_message);
	want(&w, "route=gid");
	want(&w, "bootstrap=tcp");
	want(&w, "mcast=off");
	want_key(&w, "mcast_group");
	want(&w, "mcast_reason=");
	want(&w, "mcast_last_rejoin=0");
	want_key(&w, "uptime");
	want_key(&w, "heap_bytes");
	want_parked(&w, 5, 2, 1);
	/* the totals, without the per-stream gauges */
	set_counters(&t.tp.totals, 200, 0, &w);
	/* then the node's fabric events */
	set_fabric(&t.tp.fabric, 300, 1700000123, &w);
	before = time(NULL) - t.fs.started;
	s = render(NULL);
	after = time(NULL) - t.fs.started;
	assert_lines(s, &w);
	up = value_of(s, "uptime");
	assert_in_range(up, before, after);
	assert_in_range(up, UPTIME, UPTIME + 60);
}

/* Before the transport opens, the root says only what the config does. */
static void test_root_no_transport(void **state)
{
	struct want w = {0};

	t.fs.tp = NULL;
	want(&w, "node=beta");
	want(&w, "max_message=%lu", (unsigned long)t.cfg.max_message);
	want(&w, "route=sa");
	want(&w, "bootstrap=tcp");
	want_key(&w, "uptime");
	want_key(&w, "heap_bytes");
	want_parked(&w, 0, 0, 0);
	assert_lines(render(NULL), &w);
}

/* heap_bytes counts what the daemon holds from malloc: a block taken
 * between two readings shows in full, mmap'd or not (within its page
 * rounding and the rendering's own buffers). */
static void test_root_heap(void **state)
{
	size_t sizes[] = {1000, 1 << 20}, i;
	long before, after;
	char *p;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		before = value_of(render(NULL), "heap_bytes");
		p = malloc(sizes[i]);
		assert_non_null(p);
		after = value_of(render(NULL), "heap_bytes");
		free(p);
		assert_in_range(after - before, (long)sizes[i],
				(long)sizes[i] + 8192);
	}
}

/* NODE/.status of a peer that is up: its address, route and counters. */
static void test_peer_up(void **state)
{
	struct peer *p = &t.peers[ALPHA];
	struct want w = {0};

	park_some();
	p->up = 1;
	peer_use(p)->since = 1700000000;
	want_peer(&w, ALPHA, "up", "", "");
	set_addr(p, 66, 9, "fe80::a", ROUTE_SA, &w);
	want(&w, "since=1700000000");
	want(&w, "channels=2");
	want_parked(&w, 2, 1, 1);
	set_counters(&peer_use(p)->cnt, 100, 1, &w);
	/* the totals are the root's, never a peer's */
	set_counters(&t.tp.totals, 200, 0, &(struct want){0});
	assert_lines(render(&t.nodes[ALPHA]), &w);
}

/* A peer not met yet (the local node here): idle, no address lines. */
static void test_peer_never_up(void **state)
{
	struct want w = {0};

	park_some();
	want_peer(&w, BETA, "idle", "", "");
	want(&w, "since=0");
	want(&w, "channels=0");
	want_parked(&w, 0, 0, 0);
	set_counters(&peer_use(&t.peers[BETA])->cnt, 0, 1, &w);
	assert_lines(render(&t.nodes[BETA]), &w);
}

/* A peer that went down keeps showing the address it had, why, and
 * when it was last tried (UTC). */
static void test_peer_went_down(void **state)
{
	struct peer *p = &t.peers[GAMMA];
	struct want w = {0};

	park_some();
	peer_use(p)->since = 1700000500;
	peer_set_error(p, ECONNRESET, "its session closed");
	peer_use(p)->last_attempt = 1796170503042LL; /* UTC, with its ms */
	want_peer(&w, GAMMA, "down", "its session closed",
		  "2026-12-02T00:15:03.042Z");
	set_addr(p, 153, 11, "fe80::c", ROUTE_GID, &w);
	want(&w, "since=1700000500");
	want(&w, "channels=1");
	want_parked(&w, 3, 1, 0);
	set_counters(&peer_use(p)->cnt, 300, 1, &w);
	assert_lines(render(&t.nodes[GAMMA]), &w);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* Every test on a fresh tree. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_root),	       T(test_root_no_transport),
		T(test_root_heap),     T(test_peer_up),
		T(test_peer_never_up), T(test_peer_went_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
