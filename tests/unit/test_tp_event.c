/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for the fabric events that move paths (tp_event.c), on the
 * fake device of tp_harness.h, with beta up and gamma never met:
 * SM_CHANGE, CLIENT_REREGISTER, LID_CHANGE and GID_CHANGE each flush
 * every AH through the ring's retirement (beta's AH waits there for the
 * sends in flight, and is not used again: the route cache is empty),
 * take beta down with the event's words and ask for it (the need hook:
 * whoever met it resolves its path again), ask the group to be rejoined
 * (the rejoin hook, mcast.c's), and count it; beta comes back only
 * through a fresh AH and an answered probe.  A change of our own LID or
 * GID also has the peers met before told our new address, at the next
 * tick (the heal hook's back: the bootstrap's new hello, or an
 * announce), and says how many; the SM's events leave our address as it
 * was, and tell nobody.
 */
#include <fcntl.h>

#include "tp_harness.h"

#define THREE_NODES                                                            \
	TWO_NODES("datagram")                                                  \
	"[node gamma]\naddr = 10.0.2.17\n"
#define GAMMA 2

/* What the hooks saw. */
static int ups, needs, rejoins, gones, backs;
static char rejoin_why[128];
static uint16_t port_lid; /* what the fake port says its LID is */
static union ibv_gid port_gid;

static void ev_peer_up(void *arg, struct peer *p)
{
	assert_unlocked();
	ups++;
}

static const struct tp_ops ev_ops = {.peer_up = ev_peer_up};

/* The need hook: the bootstrap would resolve p again. */
static void ev_need(void *arg, struct peer *p)
{
	assert_ptr_equal(p, &peers[BETA]);
	needs++;
}

/* The rejoin hook: mcast.c would leave and join again. */
static void ev_rejoin(void *arg, const char *why)
{
	assert_unlocked();
	rejoins++;
	snprintf(rejoin_why, sizeof(rejoin_why), "%s", why);
}

/* The heal hook: the bootstrap (or announce thread) would tell every
 * peer met our new address; the device never goes here. */
static void ev_gone(void *arg)
{
	gones++;
}

static void ev_back(void *arg)
{
	assert_unlocked();
	backs++;
}

static const struct tp_heal_ops ev_heal = {ev_gone, ev_back};

/* The port as the fake device has it: ___ibv_query_port finds no
 * extended context and falls back to this. */
#undef ibv_query_port
int ibv_query_port(struct ibv_context *ctx, uint8_t port,
		   struct _compat_ibv_port_attr *attr)
{
	((struct ibv_port_attr *)attr)->lid = port_lid;
	return 0;
}

/* Its GID table's one entry. */
int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index,
		  union ibv_gid *gid)
{
	*gid = port_gid;
	return 0;
}

/* Alpha local, beta up, gamma never met, the hooks set. */
static int setup(void **state)
{
	ups = needs = rejoins = gones = backs = 0;
	rejoin_why[0] = '\0';
	if (tp_harness_open(THREE_NODES, &ev_ops, NULL))
		return -1;
	tp->dev.ctx = &dev.ctx;
	tp->info.lid = port_lid = 7;
	memset(&port_gid, 0, sizeof(port_gid));
	tp->info.gid = port_gid;
	pthread_mutex_init(&tp->need_lock, NULL);
	pthread_mutex_init(&tp->mcast.rejoin_lock, NULL);
	pthread_mutex_init(&tp->heal.lock, NULL);
	tp_set_need(tp, ev_need, NULL);
	tp_set_rejoin(tp, ev_rejoin, NULL);
	tp_set_heal(tp, &ev_heal, NULL);
	tp_harness_probe_beta();
	assert_int_equal(ups, 1);
	return 0;
}

/* The AHs retired wait for completions the fake never gives: freed here
 * without ibv_destroy_ah (they are the fake's). */
static int teardown(void **state)
{
	struct tp_retired *r;

	while ((r = tp->ring.retired)) {
		tp->ring.retired = r->next;
		free(r);
	}
	pthread_mutex_destroy(&tp->heal.lock);
	pthread_mutex_destroy(&tp->mcast.rejoin_lock);
	pthread_mutex_destroy(&tp->need_lock);
	return tp_harness_close();
}

/* Beta's address as the harness installed it. */
static void beta_addr(struct peer_addr *addr)
{
	memset(addr, 0, sizeof(*addr));
	addr->qpn = BETA_QPN;
	addr->mtu = IBV_MTU_1024;
	beta_gid(&addr->gid);
}

/* One async event of type on our port, taken. */
static void event(enum ibv_event_type type)
{
	struct ibv_async_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_type = type;
	ev.element.port_num = 1;
	assert_int_equal(tp_event_handle(tp, &ev), 1);
}

/*
 * After an event that moves paths: beta's AH retired (waiting for the
 * ping in flight), beta down with why, asked for once, the group asked
 * to rejoin once, and the event counted as a recovery; a send waits.
 * Then the route cache is empty: beta comes back only through a fresh
 * AH, probed and answered.
 */
static void assert_flushed(const char *why)
{
	struct peer_addr addr;

	assert_null(peer_use(&peers[BETA])->ah);
	assert_non_null(tp->ring.retired);
	assert_ptr_equal(tp->ring.retired->ah, (struct ibv_ah *)&dev.ah);
	assert_null(tp->ring.retired->next);
	assert_string_equal(beta_state(), "down");
	assert_non_null(strstr(peer_use(&peers[BETA])->last_error, why));
	assert_non_null(strstr(peer_use(&peers[BETA])->last_error,
			       "resolving the path"));
	assert_int_equal(needs, 1);
	assert_int_equal(rejoins, 1);
	assert_string_equal(rejoin_why, why);
	assert_int_equal(atomic_load(&tp->fabric.ah_flushed), 1);
	assert_int_equal(atomic_load(&tp->fabric.fabric_events), 1);
	assert_int_equal(atomic_load(&tp->fabric.fabric_recoveries), 1);
	assert_true(atomic_load(&tp->fabric.last_event) > 0);
	assert_true(tp_peer_flushed(tp, &peers[BETA]));

	assert_int_equal(tp_send(tp, &peers[BETA], "x", "hi", 2), -ENOTCONN);
	assert_int_equal(needs, 2);

	beta_addr(&addr);
	assert_int_equal(tp_peer_up(tp, &peers[BETA], &addr, NULL, ROUTE_GID),
			 -ESTALE);
	assert_int_equal(tp_peer_up(tp, &peers[BETA], &addr,
				    (struct ibv_ah *)&dev.ah, ROUTE_GID),
			 0);
	assert_false(tp_peer_flushed(tp, &peers[BETA]));
	assert_string_equal(beta_state(), "probing");
	assert_string_equal(peer_use(&peers[BETA])->last_error, "");
	tp_harness_probe_beta();
	assert_int_equal(ups, 2);
	assert_int_equal(tp_send(tp, &peers[BETA], "x", "hi", 2), 0);
}

/*
 * The progress thread's next tick after the event, its log lines kept in
 * log: the device stays, so nothing is due after it.
 */
static void tick(char *log, size_t len)
{
	FILE *f = tmpfile();
	int saved = dup(2);
	size_t n;

	assert_non_null(f);
	fflush(stderr);
	assert_true(dup2(fileno(f), 2) >= 0);
	assert_int_equal(tp_heal_tick(tp, util_now_ms()), -1);
	fflush(stderr);
	assert_true(dup2(saved, 2) >= 0);
	close(saved);
	rewind(f);
	n = fread(log, 1, len - 1, f);
	log[n] = '\0';
	fclose(f);
}

/*
 * Our address did not change: the next tick tells nobody (the peers know
 * us where we were; beta is only resolved again, through the need hook).
 */
static void assert_none_told(void)
{
	char log[512];

	tick(log, sizeof(log));
	assert_int_equal(backs, 0);
	assert_int_equal(gones, 0);
	assert_null(strstr(log, "told"));
}

/*
 * Our address changed: nobody is told by the event itself, which runs
 * before the flush has settled; the next tick tells every peer met
 * before, once (the heal hook's back), and says it was one: beta, not
 * gamma, never met, nor alpha, ourselves.  The tick after tells nobody
 * again.
 */
static void assert_told(void)
{
	char log[512];

	assert_int_equal(backs, 0);
	tick(log, sizeof(log));
	assert_int_equal(backs, 1);
	assert_int_equal(gones, 0);
	assert_non_null(strstr(
		log, "rxe0 port 1: our address changed: 1 peer told it"));
	tick(log, sizeof(log));
	assert_int_equal(backs, 1);
	assert_null(strstr(log, "told"));
}

/* The subnet manager changed: its paths may be others, not our address. */
static void test_event_sm_change(void **state)
{
	event(IBV_EVENT_SM_CHANGE);
	assert_none_told();
	assert_flushed("the subnet manager changed");
}

/* The SM asks us to register again: it forgot our group membership, not
 * our address. */
static void test_event_client_reregister(void **state)
{
	event(IBV_EVENT_CLIENT_REREGISTER);
	assert_none_told();
	assert_flushed("the subnet manager asked us to register again");
}

/* Our LID changed: read again, the paths with it, the peers told. */
static void test_event_lid_change(void **state)
{
	port_lid = 9;
	event(IBV_EVENT_LID_CHANGE);
	assert_int_equal(tp->info.lid, 9);
	assert_told();
	assert_flushed("the LID changed");
}

/* A LID_CHANGE that leaves our LID as it was: the paths only. */
static void test_event_lid_same(void **state)
{
	event(IBV_EVENT_LID_CHANGE);
	assert_int_equal(tp->info.lid, 7);
	assert_none_told();
	assert_flushed("the LID changed");
}

/* Our GID changed: read again, the paths with it, the peers told. */
static void test_event_gid_change(void **state)
{
	port_gid.raw[15] = 0x15;
	event(IBV_EVENT_GID_CHANGE);
	assert_memory_equal(&tp->info.gid, &port_gid, sizeof(port_gid));
	assert_told();
	assert_flushed("the GID changed");
}

/* GID and LID both changed before the tick: the peers met before the
 * first flush are told once, of both. */
static void test_event_gid_and_lid(void **state)
{
	port_gid.raw[15] = 0x15;
	port_lid = 9;
	event(IBV_EVENT_GID_CHANGE);
	event(IBV_EVENT_LID_CHANGE);
	assert_int_equal(tp->info.lid, 9);
	assert_memory_equal(&tp->info.gid, &port_gid, sizeof(port_gid));
	assert_told();
}

/* Another entry of the GID table changed: no path moved, nothing is
 * flushed, the group stays, nobody is told. */
static void test_event_gid_other_entry(void **state)
{
	event(IBV_EVENT_GID_CHANGE);
	assert_non_null(peer_use(&peers[BETA])->ah);
	assert_string_equal(beta_state(), "up");
	assert_int_equal(needs, 0);
	assert_int_equal(rejoins, 0);
	assert_int_equal(atomic_load(&tp->fabric.fabric_events), 1);
	assert_int_equal(atomic_load(&tp->fabric.ah_flushed), 0);
	assert_none_told();
}

/* A thread that reads what this node is, as .status and the hello do,
 * while the progress thread rewrites it. */
struct info_reader {
	atomic_int stop;
	long copies, torn;
};

/* The writer's GID number k: k in each of its eight 16-bit words. */
static void gid_of(union ibv_gid *gid, uint16_t k)
{
	int i;

	for (i = 0; i < 16; i += 2)
		memcpy(&gid->raw[i], &k, sizeof(k));
}

/* Every copy must be one the progress thread made whole: a GID of the
 * writer's, with its LID (told after it) k or the one before. */
static void *info_read(void *arg)
{
	struct info_reader *r = arg;
	union ibv_gid want;
	struct tp_info ti;
	uint16_t k;

	while (!atomic_load(&r->stop)) {
		tp_info_get(tp, &ti);
		memcpy(&k, ti.gid.raw, sizeof(k));
		gid_of(&want, k);
		r->torn += memcmp(&want, &ti.gid, sizeof(want)) ||
			   (ti.lid != k && ti.lid + 1 != k);
		r->copies++;
	}
	return NULL;
}

/* Our GID and LID change again and again under a reader on another
 * thread: it never sees half of a change, and sees the last one after. */
static void test_info_whole(void **state)
{
	struct info_reader r = {0};
	struct tp_info ti;
	pthread_t thr;
	int k, saved = dup(2), null = open("/dev/null", O_WRONLY);

	gid_of(&port_gid, 1);
	port_lid = 1;
	event(IBV_EVENT_GID_CHANGE);
	event(IBV_EVENT_LID_CHANGE);
	assert_int_equal(pthread_create(&thr, NULL, info_read, &r), 0);
	fflush(stderr);
	assert_true(dup2(null, 2) >= 0); /* two lines an event */
	for (k = 2; k < 20000; k++) {
		gid_of(&port_gid, (uint16_t)k);
		event(IBV_EVENT_GID_CHANGE);
		port_lid = (uint16_t)k;
		event(IBV_EVENT_LID_CHANGE);
	}
	atomic_store(&r.stop, 1);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_true(dup2(saved, 2) >= 0);
	close(saved);
	close(null);
	assert_true(r.copies > 0);
	assert_int_equal(r.torn, 0);
	tp_info_get(tp, &ti);
	assert_memory_equal(&ti.gid, &port_gid, sizeof(port_gid));
	assert_int_equal(ti.lid, port_lid);
}

/* rxe says PORT_ACTIVE twice per flap: one event is a recovery, the
 * second (the port already up) counts as an event only. */
static void test_event_port_counted(void **state)
{
	struct ibv_async_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.element.port_num = 1;
	ev.event_type = IBV_EVENT_PORT_ERR;
	assert_int_equal(tp_event_handle(tp, &ev), 1);
	ev.event_type = IBV_EVENT_PORT_ACTIVE;
	assert_int_equal(tp_event_handle(tp, &ev), 1);
	assert_int_equal(tp_event_handle(tp, &ev), 1);
	assert_int_equal(atomic_load(&tp->fabric.fabric_events), 3);
	assert_int_equal(atomic_load(&tp->fabric.fabric_recoveries), 1);
	assert_int_equal(atomic_load(&tp->fabric.ah_flushed), 0);
	assert_int_equal(rejoins, 0);
	assert_non_null(peer_use(&peers[BETA])->ah);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_event_sm_change, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_event_client_reregister,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_lid_change, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_event_lid_same, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_event_gid_change, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_event_gid_and_lid, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_event_gid_other_entry,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_port_counted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_info_whole, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
