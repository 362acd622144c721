/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for the fabric events that move paths (tp_event.c), on the
 * fake device of tp_harness.h, with beta up: SM_CHANGE,
 * CLIENT_REREGISTER, LID_CHANGE and GID_CHANGE each flush every AH
 * through the ring's retirement (beta's AH waits there for the sends in
 * flight, and is not used again: the route cache is empty), take beta
 * down with the event's words and ask for it (the need hook: whoever met
 * it resolves its path again), ask the group to be rejoined (the rejoin
 * hook, mcast.c's), and count it; beta comes back only through a fresh
 * AH and an answered probe.
 */
#include "tp_harness.h"

/* What the hooks saw. */
static int ups, needs, rejoins;
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

/* Alpha local, beta up, both hooks set. */
static int setup(void **state)
{
	ups = needs = rejoins = 0;
	rejoin_why[0] = '\0';
	if (tp_harness_open(TWO_NODES("datagram"), &ev_ops, NULL))
		return -1;
	tp->dev.ctx = &dev.ctx;
	tp->info.lid = port_lid = 7;
	memset(&port_gid, 0, sizeof(port_gid));
	tp->info.gid = port_gid;
	pthread_mutex_init(&tp->need_lock, NULL);
	pthread_mutex_init(&tp->mcast.rejoin_lock, NULL);
	tp_set_need(tp, ev_need, NULL);
	tp_set_rejoin(tp, ev_rejoin, NULL);
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

/* The subnet manager changed: its paths may be others. */
static void test_event_sm_change(void **state)
{
	event(IBV_EVENT_SM_CHANGE);
	assert_flushed("the subnet manager changed");
}

/* The SM asks us to register again: it forgot our group membership. */
static void test_event_client_reregister(void **state)
{
	event(IBV_EVENT_CLIENT_REREGISTER);
	assert_flushed("the subnet manager asked us to register again");
}

/* Our LID changed: read again, and the paths with it. */
static void test_event_lid_change(void **state)
{
	port_lid = 9;
	event(IBV_EVENT_LID_CHANGE);
	assert_int_equal(tp->info.lid, 9);
	assert_flushed("the LID changed");
}

/* Our GID changed: read again, and the paths with it. */
static void test_event_gid_change(void **state)
{
	port_gid.raw[15] = 0x15;
	event(IBV_EVENT_GID_CHANGE);
	assert_memory_equal(&tp->info.gid, &port_gid, sizeof(port_gid));
	assert_flushed("the GID changed");
}

/* Another entry of the GID table changed: no path moved, nothing is
 * flushed and the group stays. */
static void test_event_gid_other_entry(void **state)
{
	event(IBV_EVENT_GID_CHANGE);
	assert_non_null(peer_use(&peers[BETA])->ah);
	assert_string_equal(beta_state(), "up");
	assert_int_equal(needs, 0);
	assert_int_equal(rejoins, 0);
	assert_int_equal(atomic_load(&tp->fabric.fabric_events), 1);
	assert_int_equal(atomic_load(&tp->fabric.ah_flushed), 0);
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
		cmocka_unit_test_setup_teardown(test_event_gid_change, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_event_gid_other_entry,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_port_counted, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
