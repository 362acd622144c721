/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * route.c's pure conversions: a path record (as rdma_cm returns it) and an
 * exchanged LID/GID to ibv_ah_attr, on RoCE and on InfiniBand.
 */
#include <endian.h>
#include <string.h>

#include "unit.h"
#include "route.h"

/* ::ffff:10.0.2.15, the bed's RoCE v2 GID. */
static void gid_v4(union ibv_gid *g, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	g->raw[12] = a;
	g->raw[13] = b;
	g->raw[14] = c;
	g->raw[15] = d;
}

/* An IB GID: subnet prefix fe80::, then a port GUID. */
static void gid_ib(union ibv_gid *g, uint64_t guid)
{
	g->global.subnet_prefix = htobe64(0xfe80000000000000ull);
	g->global.interface_id = htobe64(guid);
}

/* What rxe's route resolution to 10.0.2.15 returns (seen in the bed). */
static void path_rxe(struct ibv_sa_path_rec *p)
{
	memset(p, 0, sizeof(*p));
	gid_v4(&p->sgid, 10, 0, 2, 15);
	gid_v4(&p->dgid, 10, 0, 2, 15);
	p->dlid = htobe16(0xc000); /* not a LID on RoCE */
	p->slid = htobe16(0xc000);
	p->hop_limit = 64;
	p->flow_label = htobe32(0x3a5c1);
	p->traffic_class = 0;
	p->sl = 0;
	p->rate = 3;
	p->mtu = IBV_MTU_1024;
}

/* RoCE: always a GRH from the path; the DLID is ignored. */
static void test_path_roce(void **state)
{
	struct ibv_sa_path_rec p;
	struct ibv_ah_attr a;

	path_rxe(&p);
	route_path_to_ah_attr(&p, 1, 1, 1, &a);
	assert_int_equal(a.port_num, 1);
	assert_int_equal(a.dlid, 0);
	assert_int_equal(a.src_path_bits, 0);
	assert_int_equal(a.is_global, 1);
	assert_memory_equal(&a.grh.dgid, &p.dgid, sizeof(p.dgid));
	assert_int_equal(a.grh.sgid_index, 1);
	assert_int_equal(a.grh.hop_limit, 64);
	assert_int_equal(a.grh.flow_label, 0x3a5c1);
	assert_int_equal(a.grh.traffic_class, 0);
	assert_int_equal(a.static_rate, 3);
	assert_int_equal(a.sl, 0);
}

/* RoCE with a path that names no hop limit still routes (64). */
static void test_path_roce_hop0(void **state)
{
	struct ibv_sa_path_rec p;
	struct ibv_ah_attr a;

	path_rxe(&p);
	p.hop_limit = 0;
	p.traffic_class = 0x28;
	route_path_to_ah_attr(&p, 2, 3, 1, &a);
	assert_int_equal(a.is_global, 1);
	assert_int_equal(a.grh.hop_limit, 64);
	assert_int_equal(a.grh.traffic_class, 0x28);
	assert_int_equal(a.grh.sgid_index, 3);
	assert_int_equal(a.port_num, 2);
}

/* IB in one subnet (hop limit 0 or 1): LID routed, no GRH. */
static void test_path_ib_local(void **state)
{
	struct ibv_sa_path_rec p;
	struct ibv_ah_attr a;

	memset(&p, 0, sizeof(p));
	gid_ib(&p.sgid, 0x0002c90300a1b2c3ull);
	gid_ib(&p.dgid, 0x0002c90300d4e5f6ull);
	p.dlid = htobe16(0x0017);
	p.slid = htobe16(0x0005);
	p.hop_limit = 1;
	p.sl = 5;
	p.rate = 7; /* 40 Gb/s */
	route_path_to_ah_attr(&p, 1, 0, 0, &a);
	assert_int_equal(a.dlid, 0x17);
	assert_int_equal(a.sl, 5);
	assert_int_equal(a.static_rate, 7);
	assert_int_equal(a.is_global, 0);
	assert_int_equal(a.port_num, 1);
}

/* IB across routers (hop limit > 1): LID and a GRH. */
static void test_path_ib_routed(void **state)
{
	struct ibv_sa_path_rec p;
	struct ibv_ah_attr a;

	memset(&p, 0, sizeof(p));
	gid_ib(&p.sgid, 1);
	gid_ib(&p.dgid, 2);
	p.dgid.global.subnet_prefix = htobe64(0xfe80000000000001ull);
	p.dlid = htobe16(0x0102);
	p.hop_limit = 8;
	p.flow_label = htobe32(0xfffffffu); /* only 20 bits are a label */
	p.traffic_class = 4;
	route_path_to_ah_attr(&p, 1, 2, 0, &a);
	assert_int_equal(a.dlid, 0x102);
	assert_int_equal(a.is_global, 1);
	assert_memory_equal(&a.grh.dgid, &p.dgid, sizeof(p.dgid));
	assert_int_equal(a.grh.hop_limit, 8);
	assert_int_equal(a.grh.flow_label, 0xfffff);
	assert_int_equal(a.grh.traffic_class, 4);
	assert_int_equal(a.grh.sgid_index, 2);
}

/* route = gid on RoCE: GRH to the announced GID, the LID ignored. */
static void test_gid_roce(void **state)
{
	struct peer_addr r;
	struct ibv_ah_attr a;

	memset(&r, 0, sizeof(r));
	gid_v4(&r.gid, 10, 0, 2, 15);
	r.lid = 0x1234;
	r.qpn = 0x11;
	r.link_layer = IBV_LINK_LAYER_ETHERNET;
	route_gid_to_ah_attr(&r, 1, 1, 1, &a);
	assert_int_equal(a.dlid, 0);
	assert_int_equal(a.is_global, 1);
	assert_memory_equal(&a.grh.dgid, &r.gid, sizeof(r.gid));
	assert_int_equal(a.grh.sgid_index, 1);
	assert_int_equal(a.grh.hop_limit, 64);
	assert_int_equal(a.port_num, 1);
}

/* route = gid on IB: the announced LID, no GRH. */
static void test_gid_ib(void **state)
{
	struct peer_addr r;
	struct ibv_ah_attr a;

	memset(&r, 0, sizeof(r));
	gid_ib(&r.gid, 7);
	r.lid = 0x21;
	route_gid_to_ah_attr(&r, 1, 0, 0, &a);
	assert_int_equal(a.dlid, 0x21);
	assert_int_equal(a.is_global, 0);
}

/* route = gid on IB without a LID: only the GRH can reach it. */
static void test_gid_ib_nolid(void **state)
{
	struct peer_addr r;
	struct ibv_ah_attr a;

	memset(&r, 0, sizeof(r));
	gid_ib(&r.gid, 9);
	route_gid_to_ah_attr(&r, 1, 0, 0, &a);
	assert_int_equal(a.dlid, 0);
	assert_int_equal(a.is_global, 1);
	assert_memory_equal(&a.grh.dgid, &r.gid, sizeof(r.gid));
}

/* rxe's path, with sl 2 and traffic class 0x20, under config sl, tc. */
static void fabric_on_path(int sl, int tc, struct ibv_ah_attr *a)
{
	struct config cfg = {.pkey = -1, .sl = sl, .traffic_class = tc};
	struct ibv_sa_path_rec p;

	path_rxe(&p);
	p.sl = 2;
	p.traffic_class = 0x20;
	route_path_to_ah_attr(&p, 1, 1, 1, a);
	route_fabric_attr(&cfg, a);
}

/* A configured sl and traffic_class win over the path record's. */
static void test_fabric_override(void **state)
{
	struct ibv_ah_attr a;

	fabric_on_path(5, 0xb8, &a);
	assert_int_equal(a.sl, 5);
	assert_int_equal(a.grh.traffic_class, 0xb8);
	assert_int_equal(a.grh.hop_limit, 64); /* the rest is the path's */
	assert_int_equal(a.grh.flow_label, 0x3a5c1);
}

/* Unset keys (-1) keep what the route gave. */
static void test_fabric_unset(void **state)
{
	struct ibv_ah_attr a;

	fabric_on_path(-1, -1, &a);
	assert_int_equal(a.sl, 2);
	assert_int_equal(a.grh.traffic_class, 0x20);
}

/* InfiniBand by LID has no GRH: the sl applies, no traffic class. */
static void test_fabric_no_grh(void **state)
{
	struct config cfg = {.pkey = -1, .sl = 7, .traffic_class = 0xb8};
	struct peer_addr r;
	struct ibv_ah_attr a;

	memset(&r, 0, sizeof(r));
	r.lid = 0x21;
	gid_ib(&r.gid, 9);
	route_gid_to_ah_attr(&r, 1, 0, 0, &a);
	route_fabric_attr(&cfg, &a);
	assert_int_equal(a.sl, 7);
	assert_int_equal(a.is_global, 0);
	assert_int_equal(a.grh.traffic_class, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_roce),
		cmocka_unit_test(test_path_roce_hop0),
		cmocka_unit_test(test_path_ib_local),
		cmocka_unit_test(test_path_ib_routed),
		cmocka_unit_test(test_gid_roce),
		cmocka_unit_test(test_gid_ib),
		cmocka_unit_test(test_gid_ib_nolid),
		cmocka_unit_test(test_fabric_override),
		cmocka_unit_test(test_fabric_unset),
		cmocka_unit_test(test_fabric_no_grh),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
