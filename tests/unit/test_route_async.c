/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * route.c's asynchronous resolutions (route = sa), with rdma_cm, verbs
 * and the transport faked here: at most ROUTE_INFLIGHT_MAX cm ids resolve
 * at once and the rest wait in order, each starting as one ends; the
 * gauges route_inflight and route_inflight_max follow them (more than 1
 * when resolutions overlap); a resolution ends in its callback, once,
 * with its peer installed (tp_peer_up_gen, in the device's generation its
 * AH was made in, which was made with the device held), or with
 * why not: an error event, its time run out, the device's removal, or a
 * device closed since it began (issue 30: its result dropped, no AH made
 * on the old context); a cancelled one never calls back; every cm id is
 * destroyed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include "unit.h"
#include "config.h"
#include "peer.h"
#include "route.h"
#include "util.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define NPEERS	(ROUTE_INFLIGHT_MAX + 8)
#define MAX_EVS 256

/* The fakes' record. */
static struct {
	struct tp_info ti;
	struct fabric_counters fabric;
	struct ibv_context ctx;
	struct ibv_pd pd;
	uint64_t gen;	      /* the device's generation */
	int gone;	      /* the device is closed */
	int held;	      /* tp_dev_hold's, not released */
	int ids;	      /* cm ids alive */
	int ids_made;	      /* ... made in all */
	int ahs;	      /* AHs alive */
	int installs;	      /* tp_peer_up with a fresh AH */
	int last_up;	      /* the peer index installed last */
	int fail_addr;	      /* rdma_resolve_addr fails */
	int cached;	      /* the peer whose AH fits, installed meanwhile */
	int reused;	      /* tp_peer_up with that AH */
	int dropped;	      /* AHs refused: their device went meanwhile */
	int close_at_release; /* the device closes as the hold ends */
	struct rdma_cm_id *id_of[NPEERS + 1]; /* by peer index, the latest */
	struct rdma_cm_event *ev[MAX_EVS];    /* queued for rdma_get_cm_event */
	int nev;
	int done[NPEERS + 1];  /* callbacks per peer */
	int rc[NPEERS + 1];    /* ... the last one's rc */
	int order[NPEERS + 1]; /* peers in the order their ids were made */
} fk;

static struct config cfg;
static struct peer *peers;
static struct route *rt;
static struct route_req *req[NPEERS + 1];

/* The transport's side. */
const struct tp_info *tp_info(const struct tp *tp)
{
	return &fk.ti;
}

struct ibv_context *tp_context(const struct tp *tp)
{
	return &fk.ctx;
}

struct ibv_pd *tp_pd(const struct tp *tp)
{
	assert_true(fk.held); /* only with the device held */
	return &fk.pd;
}

struct fabric_counters *tp_fabric(struct tp *tp)
{
	return &fk.fabric;
}

uint64_t tp_dev_gen(const struct tp *tp)
{
	return fk.gen;
}

int tp_dev_hold(struct tp *tp, uint64_t gen)
{
	assert_false(fk.held);
	if (fk.gone || gen != fk.gen)
		return -ENETDOWN;
	fk.held = 1;
	return 0;
}

void tp_dev_release(struct tp *tp)
{
	assert_true(fk.held);
	fk.held = 0;
	if (fk.close_at_release) /* tp_heal_down was waiting for us */
		fk.gen++;
}

/* Installs with the generation the AH was made in: refused (the engine
 * takes the AH) when the device went since. */
int tp_peer_up_gen(struct tp *tp, struct peer *p, const struct peer_addr *addr,
		   struct ibv_ah *ah, enum config_route route, uint64_t gen)
{
	assert_false(fk.held); /* the engine's locks come after the hold */
	assert_non_null(ah);
	if (fk.gone || gen != fk.gen) {
		fk.dropped++;
		ibv_destroy_ah(ah);
		return -ENETDOWN;
	}
	fk.installs++;
	fk.last_up = p->idx;
	ibv_destroy_ah(ah); /* the fake keeps none */
	return 0;
}

int tp_peer_up(struct tp *tp, struct peer *p, const struct peer_addr *addr,
	       struct ibv_ah *ah, enum config_route route)
{
	if (!ah) { /* the route cache: no lock held, an upcall may run */
		assert_false(fk.held);
		if (p->idx != fk.cached)
			return -ESTALE;
		fk.reused++;
		return 0;
	}
	fail(); /* a fresh AH goes through tp_peer_up_gen */
	return 0;
}

/* Verbs. */
#undef ibv_query_port
int ibv_query_port(struct ibv_context *ctx, uint8_t port,
		   struct _compat_ibv_port_attr *attr)
{
	((struct ibv_port_attr *)attr)->gid_tbl_len = 1;
	return 0;
}

const char *ibv_get_device_name(struct ibv_device *dev)
{
	return "rxe0";
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct ibv_ah *ah = calloc(1, sizeof(*ah));

	assert_true(fk.held);
	assert_ptr_equal(pd, &fk.pd);
	ah->pd = pd;
	fk.ahs++;
	return ah;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	fk.ahs--;
	free(ah);
	return 0;
}

/* rdma_cm. */
struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rdma_event_channel *ch = calloc(1, sizeof(*ch));

	ch->fd = eventfd(0, EFD_NONBLOCK);
	return ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	close(ch->fd);
	free(ch);
}

int rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
		   void *ctx, enum rdma_port_space ps)
{
	struct rdma_cm_id *i = calloc(1, sizeof(*i));

	i->channel = ch;
	i->context = ctx;
	i->port_num = 1;
	*id = i;
	fk.ids++;
	fk.ids_made++;
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	int i;

	for (i = 0; i < fk.nev; i++) /* librdmacm: none may be unacked */
		assert_ptr_not_equal(fk.ev[i]->id, id);
	for (i = 0; i <= NPEERS; i++)
		if (fk.id_of[i] == id)
			fk.id_of[i] = NULL;
	free(id->route.path_rec);
	free(id);
	fk.ids--;
	return 0;
}

/* The peer a resolution is for: node i is at 10.0.0.(i + 1). */
int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
		      struct sockaddr *dst, int timeout_ms)
{
	uint8_t *a = (uint8_t *)&((struct sockaddr_in *)dst)->sin_addr;
	int pi = a[3] - 1;

	if (fk.fail_addr) {
		errno = EADDRNOTAVAIL;
		return -1;
	}
	fk.order[fk.ids_made - 1 < NPEERS ? fk.ids_made - 1 : NPEERS] = pi;
	fk.id_of[pi] = id;
	return 0;
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	id->verbs = &fk.ctx;
	id->route.path_rec = calloc(1, sizeof(*id->route.path_rec));
	id->route.path_rec->sgid = fk.ti.gid;
	id->route.num_paths = 1;
	return 0;
}

int rdma_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **ev)
{
	if (!fk.nev) {
		errno = EAGAIN;
		return -1;
	}
	*ev = fk.ev[0];
	memmove(fk.ev, fk.ev + 1, --fk.nev * sizeof(fk.ev[0]));
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *ev)
{
	free(ev);
	return 0;
}

const char *rdma_event_str(enum rdma_cm_event_type ev)
{
	return "an event";
}

/* rdma_cm tells peer pi's resolution e (status st). */
static void event(int pi, enum rdma_cm_event_type e, int st)
{
	struct rdma_cm_event *ev = calloc(1, sizeof(*ev));

	assert_non_null(fk.id_of[pi]);
	assert_true(fk.nev < MAX_EVS);
	ev->id = fk.id_of[pi];
	ev->event = e;
	ev->status = st;
	fk.ev[fk.nev++] = ev;
}

/* Peer pi's address and route resolved. */
static void resolved(int pi)
{
	event(pi, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	event(pi, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
}

static void on_done(void *arg, int rc)
{
	int pi = (int)(intptr_t)arg;

	assert_false(fk.held); /* no lock held in a callback */
	fk.done[pi]++;
	fk.rc[pi] = rc;
	req[pi] = NULL;
}

/* Ask for peer pi, as the bootstrap does; route_install_start's rc. */
static int ask(int pi)
{
	struct peer_addr a = {.qpn = 0x100 + pi,
			      .link_layer = IBV_LINK_LAYER_ETHERNET};

	return route_install_start(rt, &peers[pi], &a, on_done,
				   (void *)(intptr_t)pi, &req[pi]);
}

/* One turn of the bootstrap's loop at now (util_now_ms's clock, which
 * deadlines are of). */
static int64_t run(int64_t now)
{
	return route_async_run(rt, now, now + 60000);
}

/* The deadline of resolutions started between t0 and t1: twice the
 * resolution's timeout (peer_timeout / 2) after. */
static void assert_due(int64_t due, int64_t t0, int64_t t1)
{
	assert_in_range(due, t0 + 2 * 5000, t1 + 2 * 5000);
}

/* NPEERS + 1 nodes n001.., node i at 10.0.0.i; we are n001 (index 0). */
static int setup(void **state)
{
	char text[256], err[CONFIG_ERR_MAX];

	memset(&fk, 0, sizeof(fk));
	memset(req, 0, sizeof(req));
	fk.cached = -1;
	fk.ti.link_layer = IBV_LINK_LAYER_ETHERNET;
	fk.ti.port = 1;
	fk.ti.gid_index = 1;
	snprintf(fk.ti.device, sizeof(fk.ti.device), "rxe0");
	fk.ti.gid.raw[15] = 1;
	snprintf(text, sizeof(text),
		 "[global]\nroute = sa\npeer_timeout = 10s\n"
		 "[node n[001-%03d]]\naddr = 10.0.0.[1-%d]\n",
		 NPEERS + 1, NPEERS + 1);
	if (config_load_string(text, "t.ini", &cfg, err, sizeof(err)) ||
	    config_select_local(&cfg, "n001", err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (peer_table_open(&peers, &cfg))
		return -1;
	return route_open(&rt, NULL, &cfg);
}

static int teardown(void **state)
{
	route_close(rt);
	assert_int_equal(fk.ids, 0); /* every cm id destroyed */
	assert_int_equal(fk.ahs, 0);
	while (fk.nev)
		free(fk.ev[--fk.nev]);
	peer_table_close(peers, cfg.nnodes);
	config_free(&cfg);
	return 0;
}

/* Resolutions overlap: three asked at once are three in flight. */
static void test_overlap(void **state)
{
	int i;

	for (i = 1; i <= 3; i++)
		assert_int_equal(ask(i), -EINPROGRESS);
	assert_int_equal(fk.ids, 3);
	assert_int_equal(fk.fabric.route_inflight, 3);
	assert_int_equal(fk.fabric.route_inflight_max, 3);
	for (i = 3; i >= 1; i--)
		resolved(i);
	run(util_now_ms());
	for (i = 1; i <= 3; i++) {
		assert_int_equal(fk.done[i], 1);
		assert_int_equal(fk.rc[i], 0);
	}
	assert_int_equal(fk.installs, 3);
	assert_int_equal(fk.ids, 0);
	assert_int_equal(fk.fabric.route_inflight, 0);
	assert_int_equal(fk.fabric.route_inflight_max, 3); /* the most */
}

/* At most ROUTE_INFLIGHT_MAX in flight; the rest start in order, one
 * as each ends. */
static void test_bounded(void **state)
{
	int i, n = ROUTE_INFLIGHT_MAX + 5;
	int64_t t0 = util_now_ms();

	for (i = 1; i <= n; i++)
		assert_int_equal(ask(i), -EINPROGRESS);
	assert_int_equal(fk.ids, ROUTE_INFLIGHT_MAX);
	assert_int_equal(fk.fabric.route_inflight, ROUTE_INFLIGHT_MAX);
	assert_null(fk.id_of[ROUTE_INFLIGHT_MAX + 1]);	   /* waits */
	assert_due(run(util_now_ms()), t0, util_now_ms()); /* the first */
	assert_int_equal(fk.ids_made, ROUTE_INFLIGHT_MAX);
	resolved(7);
	resolved(2);
	run(util_now_ms());
	assert_int_equal(fk.installs, 2);
	assert_int_equal(fk.ids, ROUTE_INFLIGHT_MAX); /* two more started */
	assert_int_equal(fk.order[ROUTE_INFLIGHT_MAX], ROUTE_INFLIGHT_MAX + 1);
	assert_int_equal(fk.order[ROUTE_INFLIGHT_MAX + 1],
			 ROUTE_INFLIGHT_MAX + 2);
	assert_null(fk.id_of[ROUTE_INFLIGHT_MAX + 3]);
	for (i = 1; i <= n; i++)
		if (fk.id_of[i] && i != 2 && i != 7)
			resolved(i);
	run(util_now_ms()); /* ends those, starts the last three */
	for (i = 1; i <= n; i++)
		if (fk.id_of[i])
			resolved(i);
	run(util_now_ms());
	for (i = 1; i <= n; i++)
		assert_int_equal(fk.done[i], 1);
	assert_int_equal(fk.installs, n);
	assert_int_equal(fk.ids, 0);
	assert_int_equal(fk.fabric.route_inflight_max, ROUTE_INFLIGHT_MAX);
}

/* No answer within twice the resolution's timeout: -ETIMEDOUT, the id
 * destroyed, nothing installed. */
static void test_timeout(void **state)
{
	int64_t due, t0 = util_now_ms();

	assert_int_equal(ask(5), -EINPROGRESS);
	due = run(util_now_ms());
	assert_due(due, t0, util_now_ms());
	run(due - 1);
	assert_int_equal(fk.done[5], 0);
	run(due);
	assert_int_equal(fk.done[5], 1);
	assert_int_equal(fk.rc[5], -ETIMEDOUT);
	assert_int_equal(fk.ids, 0);
	assert_int_equal(fk.installs, 0);
}

/* An error event ends it with an error; others go on. */
static void test_error(void **state)
{
	assert_int_equal(ask(1), -EINPROGRESS);
	assert_int_equal(ask(2), -EINPROGRESS);
	event(1, RDMA_CM_EVENT_ADDR_ERROR, -ENETUNREACH);
	run(util_now_ms());
	assert_int_equal(fk.rc[1], -ENETUNREACH);
	assert_int_equal(fk.done[2], 0);
	assert_int_equal(fk.ids, 1);
	resolved(2);
	run(util_now_ms());
	assert_int_equal(fk.rc[2], 0);
	assert_int_equal(fk.last_up, 2);
}

/* A failure to start ends in the callback too, never inside the ask. */
static void test_start_fails(void **state)
{
	fk.fail_addr = 1;
	assert_int_equal(ask(3), -EINPROGRESS);
	assert_int_equal(fk.done[3], 0);
	run(util_now_ms()); /* the loop's next turn */
	assert_int_equal(fk.done[3], 1);
	assert_int_equal(fk.rc[3], -EADDRNOTAVAIL);
	assert_int_equal(fk.ids, 0);
	assert_int_equal(fk.fabric.route_inflight, 0);
}

/* Cancelled: no callback, its id destroyed, its room given on. */
static void test_cancel(void **state)
{
	int i;

	for (i = 1; i <= ROUTE_INFLIGHT_MAX + 1; i++)
		assert_int_equal(ask(i), -EINPROGRESS);
	route_cancel(rt, req[1]);
	assert_int_equal(fk.ids, ROUTE_INFLIGHT_MAX - 1);
	route_cancel(rt, req[ROUTE_INFLIGHT_MAX + 1]); /* one queued */
	run(util_now_ms());
	assert_int_equal(fk.done[1], 0);
	assert_int_equal(fk.done[ROUTE_INFLIGHT_MAX + 1], 0);
	assert_int_equal(fk.ids, ROUTE_INFLIGHT_MAX - 1);
	assert_int_equal(fk.fabric.route_inflight, ROUTE_INFLIGHT_MAX - 1);
	route_cancel(rt, NULL); /* nothing */
}

/* The device closed while a resolution ran (issue 30): its result is
 * dropped, no AH is made on the old context, and it says -ENETDOWN. */
static void test_device_changed(void **state)
{
	assert_int_equal(ask(4), -EINPROGRESS);
	fk.gen++; /* tp_heal_down closed it, and it came back */
	resolved(4);
	run(util_now_ms());
	assert_int_equal(fk.rc[4], -ENETDOWN);
	assert_int_equal(fk.installs, 0);
	assert_int_equal(fk.ahs, 0);
	assert_int_equal(fk.ids, 0);
}

/* The device closed between the AH's making and its install: the
 * install is refused by the generation, and the AH is the engine's. */
static void test_device_closed_at_install(void **state)
{
	assert_int_equal(ask(5), -EINPROGRESS);
	resolved(5);
	fk.close_at_release = 1;
	run(util_now_ms());
	assert_int_equal(fk.rc[5], -ENETDOWN);
	assert_int_equal(fk.dropped, 1);
	assert_int_equal(fk.installs, 0);
	assert_int_equal(fk.ahs, 0);
}

/* rdma_cm's DEVICE_REMOVAL on an id in flight: destroyed in that very
 * run, so that the kernel's removal need not wait for it. */
static void test_device_removal(void **state)
{
	assert_int_equal(ask(6), -EINPROGRESS);
	assert_int_equal(ask(7), -EINPROGRESS);
	event(6, RDMA_CM_EVENT_DEVICE_REMOVAL, 0);
	event(7, RDMA_CM_EVENT_DEVICE_REMOVAL, 0);
	fk.gone = 1;
	run(util_now_ms());
	assert_int_equal(fk.ids, 0);
	assert_int_equal(fk.done[6], 1);
	assert_int_equal(fk.done[7], 1);
	assert_true(fk.rc[6] < 0 && fk.rc[7] < 0);
	assert_int_equal(fk.installs, 0);
}

/* Two sessions of one peer resolved it at once: the first installs, the
 * second finds that AH fitting its address and makes none. */
static void test_installed_meanwhile(void **state)
{
	assert_int_equal(ask(2), -EINPROGRESS);
	resolved(2);
	fk.cached = 2; /* another session's resolution installed it */
	run(util_now_ms());
	assert_int_equal(fk.rc[2], 0);
	assert_int_equal(fk.reused, 1);
	assert_int_equal(fk.installs, 0);
	assert_int_equal(fk.ahs, 0);
	assert_int_equal(fk.ids, 0);
}

/* Another link layer: refused at once, nothing queued. */
static void test_link_layer(void **state)
{
	struct peer_addr a = {.link_layer = IBV_LINK_LAYER_INFINIBAND};

	assert_int_equal(
		route_install_start(rt, &peers[1], &a, on_done, NULL, &req[1]),
		-EPROTO);
	assert_null(req[1]);
	assert_int_equal(fk.ids, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_overlap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_changed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_device_closed_at_install,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_removal, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_installed_meanwhile, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_link_layer, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
