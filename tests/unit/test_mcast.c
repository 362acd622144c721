/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for the group's life (mcast.c) with rdma_cm and the
 * transport faked here: a MULTICAST_ERROR on the membership, or the
 * rejoin hook (a fabric event), leaves the group and joins it again, all/
 * sending unicast copies meanwhile (mcast=rejoining); joins that keep
 * failing back off and then fall back to unicast copies for good
 * (mcast=fallback), after which nothing is armed; the thread sleeps
 * while the group is joined.  The TEST HOOK IBFS_TEST_REJOIN_MS makes the
 * first wait 1 ms.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "unit.h"
#include "config.h"
#include "mcast.h"
#include "util.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define CONF                                                                   \
	"[global]\nmulticast = auto\nmcast_group = 239.1.2.3\n"                \
	"[node alpha]\naddr = 10.0.2.15\n[node beta]\naddr = 10.0.2.16\n"

/* The fakes' record, written by the group's thread. */
static struct {
	atomic_int joins, fail_joins, leaves, installs, reinstalls;
	atomic_int state; /* the last tp_mcast_remove's, -1 none */
	atomic_int error; /* the next route_join_lost says lost */
	int cm_fd;	  /* the membership's fake event fd */
	void (*rejoin)(void *arg, const char *why);
	void *rejoin_arg;
	struct fabric_counters fabric;
} fk;

static struct config cfg;
static struct mcast *m;
static int fake_id; /* its address is the membership */

/* rdma_cm's join: the membership, or a failure while fail_joins lasts. */
int route_join(struct route *r, const struct sockaddr *group,
	       struct rdma_cm_id **id, struct ibv_ah_attr *attr, char *why,
	       size_t whylen)
{
	atomic_fetch_add(&fk.joins, 1);
	if (atomic_load(&fk.fail_joins) > 0) {
		atomic_fetch_sub(&fk.fail_joins, 1);
		snprintf(why, whylen, "join: Connection timed out");
		return -ETIMEDOUT;
	}
	memset(attr, 0, sizeof(*attr));
	*id = (struct rdma_cm_id *)&fake_id;
	return 0;
}

void route_leave(struct route *r, struct rdma_cm_id *id,
		 const struct sockaddr *group)
{
	if (id)
		atomic_fetch_add(&fk.leaves, 1);
}

int route_join_fd(struct rdma_cm_id *id)
{
	return fk.cm_fd;
}

/* The membership's events: a MULTICAST_ERROR when the test said so. */
int route_join_lost(struct rdma_cm_id *id, char *why, size_t whylen)
{
	uint64_t v;

	if (read(fk.cm_fd, &v, sizeof(v)) < 0)
		return 0;
	if (!atomic_exchange(&fk.error, 0))
		return 0;
	snprintf(why, whylen, "rdma_cm reports a multicast error (status -5)");
	return 1;
}

int tp_mcast_install(struct tp *tp, const struct ibv_ah_attr *attr)
{
	atomic_fetch_add(&fk.installs, 1);
	return 0;
}

int tp_mcast_reinstall(struct tp *tp, const struct ibv_ah_attr *attr)
{
	atomic_fetch_add(&fk.reinstalls, 1);
	return 0;
}

void tp_mcast_remove(struct tp *tp, enum tp_mcast_state st, const char *reason)
{
	atomic_store(&fk.state, (int)st);
}

void tp_set_rejoin(struct tp *tp, void (*rejoin)(void *arg, const char *why),
		   void *arg)
{
	fk.rejoin = rejoin;
	fk.rejoin_arg = arg;
}

struct fabric_counters *tp_fabric(struct tp *tp)
{
	return &fk.fabric;
}

/* Wait up to 2 s for *c to reach want (the group's thread counts). */
static int wait_for(atomic_int *c, int want)
{
	int i;

	for (i = 0; i < 2000 && atomic_load(c) < want; i++)
		usleep(1000);
	return atomic_load(c);
}

/* The group thread's count of recoveries, once it reaches want or 2 s
 * passed: the last thing a rejoin does, after the reinstall and the
 * rejoin's own count, so that these are all in place once it is. */
static uint64_t wait_recovered(uint64_t want)
{
	int i;

	for (i = 0;
	     i < 2000 && atomic_load(&fk.fabric.fabric_recoveries) < want; i++)
		usleep(1000);
	return atomic_load(&fk.fabric.fabric_recoveries);
}

/* A config of two nodes, the group joined at open. */
static int setup(void **state)
{
	char err[CONFIG_ERR_MAX];

	memset(&fk, 0, sizeof(fk));
	atomic_store(&fk.state, -1);
	fk.cm_fd = eventfd(0, EFD_NONBLOCK);
	setenv("IBFS_TEST_REJOIN_MS", "1", 1);
	memset(&cfg, 0, sizeof(cfg));
	if (config_load_string(CONF, "t.ini", &cfg, err, sizeof(err)) ||
	    config_select_local(&cfg, "alpha", err, sizeof(err)))
		return -1;
	if (mcast_open(&m, &cfg, NULL, NULL))
		return -1;
	assert_int_equal(atomic_load(&fk.installs), 1);
	assert_non_null(fk.rejoin);
	return 0;
}

static int teardown(void **state)
{
	mcast_close(m);
	assert_null(fk.rejoin);
	close(fk.cm_fd);
	config_free(&cfg);
	unsetenv("IBFS_TEST_REJOIN_MS");
	return 0;
}

/* rdma_cm says the group is lost: left, joined again, counted. */
static void test_mcast_error_rejoins(void **state)
{
	uint64_t one = 1;

	atomic_store(&fk.error, 1);
	assert_int_equal(write(fk.cm_fd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(wait_recovered(1), 1);
	assert_int_equal(atomic_load(&fk.reinstalls), 1);
	assert_int_equal(atomic_load(&fk.leaves), 1);
	assert_int_equal(atomic_load(&fk.joins), 2);
	assert_int_equal(atomic_load(&fk.state), TP_MCAST_REJOINING);
	assert_int_equal(atomic_load(&fk.fabric.fabric_events), 1);
	assert_int_equal(atomic_load(&fk.fabric.mcast_rejoins), 1);
	assert_int_equal(atomic_load(&fk.fabric.fabric_recoveries), 1);
	assert_true(atomic_load(&fk.fabric.last_event) > 0);
}

/* An event of the membership that is no error changes nothing. */
static void test_mcast_other_cm_event(void **state)
{
	uint64_t one = 1;

	assert_int_equal(write(fk.cm_fd, &one, sizeof(one)), sizeof(one));
	usleep(20000);
	assert_int_equal(atomic_load(&fk.joins), 1);
	assert_int_equal(atomic_load(&fk.leaves), 0);
	assert_int_equal(atomic_load(&fk.state), -1);
}

/* The hook (the subnet manager changed): left and joined again. */
static void test_mcast_hook_rejoins(void **state)
{
	fk.rejoin(fk.rejoin_arg, "the subnet manager changed");
	assert_int_equal(wait_recovered(1), 1);
	assert_int_equal(atomic_load(&fk.reinstalls), 1);
	assert_int_equal(atomic_load(&fk.leaves), 1);
	assert_int_equal(atomic_load(&fk.state), TP_MCAST_REJOINING);
	assert_int_equal(atomic_load(&fk.fabric.mcast_rejoins), 1);
	/* counted as an event by tp_event.c, which calls the hook */
	assert_int_equal(atomic_load(&fk.fabric.fabric_events), 0);
}

/* Joins that keep failing back off, then all/ falls back for good and
 * nothing more is tried until the next event, which tries again. */
static void test_mcast_rejoin_falls_back(void **state)
{
	atomic_store(&fk.fail_joins, 1000);
	fk.rejoin(fk.rejoin_arg, "the subnet manager changed");
	wait_for(&fk.joins, 1 + MCAST_REJOIN_TRIES);
	usleep(100000); /* time for more joins, were any armed */
	assert_int_equal(atomic_load(&fk.state), TP_MCAST_FALLBACK);
	assert_int_equal(atomic_load(&fk.joins), 1 + MCAST_REJOIN_TRIES);
	assert_int_equal(atomic_load(&fk.reinstalls), 0);
	atomic_store(&fk.fail_joins, 0);
	fk.rejoin(fk.rejoin_arg, "the subnet manager changed");
	assert_int_equal(wait_for(&fk.reinstalls, 1), 1);
	assert_int_equal(atomic_load(&fk.joins), 2 + MCAST_REJOIN_TRIES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mcast_error_rejoins, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mcast_other_cm_event,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_mcast_hook_rejoins, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mcast_rejoin_falls_back,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
