/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for peer.c: the table has one peer per config node, in config
 * order, with wire ids from the names and the local node marked; a drop is
 * counted for the peer and in the totals, and a bad reason for neither.
 * A configured node that is never used costs at most PEER_NODE_BYTES of
 * heap, its config and its peer together, measured at 1,000 and 10,000.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SANITIZE_ADDRESS__
/* ASan's allocator (sanitizer/allocator_interface.h, which gcc lacks) */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#include "unit.h"
#include "peer.h"
#include "wire.h"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define THREE_NODES                                                            \
	"[global]\nroute = gid\n"                                              \
	"[node alpha]\naddr = 10.0.2.15\n"                                     \
	"[node beta]\naddr = 10.0.2.16\n"                                      \
	"[node gamma]\naddr = 10.0.2.17\n"

static struct config cfg;

/* A three-node config with beta as the local node. */
static int setup(void **state)
{
	char err[CONFIG_ERR_MAX];

	memset(&cfg, 0, sizeof(cfg));
	if (config_load_string(THREE_NODES, "t.ini", &cfg, err, sizeof(err)))
		return -1;
	return config_select_local(&cfg, "beta", err, sizeof(err)) ? -1 : 0;
}

/* Nothing left for the next test or for valgrind. */
static int teardown(void **state)
{
	config_free(&cfg);
	return 0;
}

/* One peer per node, in order, each knowing its node, id and locality. */
static void test_table_open(void **state)
{
	struct peer *peers = NULL;
	int i;

	assert_int_equal(peer_table_open(&peers, &cfg), 0);
	assert_non_null(peers);
	for (i = 0; i < cfg.nnodes; i++) {
		assert_int_equal(peers[i].idx, i);
		assert_ptr_equal(peers[i].conf, &cfg.nodes[i]);
		assert_int_equal(peers[i].id, wire_node_id(cfg.nodes[i].name));
		assert_int_equal(peers[i].is_local, i == 1);
		assert_int_equal(peers[i].up, 0);
		/* nothing of a peer in use until it is used */
		assert_null(peer_used(&peers[i]));
		assert_int_equal(peer_counts(&peers[i])->msgs_rx, 0);
		assert_int_equal(peer_state(&peers[i]), PEER_IDLE);
	}
	assert_int_not_equal(peers[0].id, peers[1].id);
	assert_int_not_equal(peers[1].id, peers[2].id);
	peer_table_close(peers, cfg.nnodes);
}

/* The in-use part is made once, on first use, and then stays: counted
 * events land in it, and a peer never used reads zeros. */
static void test_use_once(void **state)
{
	struct peer_counters totals;
	struct peer_use *u;
	struct peer *peers;

	memset(&totals, 0, sizeof(totals));
	assert_int_equal(peer_table_open(&peers, &cfg), 0);
	u = peer_use(&peers[2]);
	assert_non_null(u);
	assert_ptr_equal(peer_use(&peers[2]), u);
	assert_ptr_equal(peer_used(&peers[2]), u);
	PEER_ADD(&peers[2], msgs_tx, 3);
	assert_int_equal(peer_counts(&peers[2])->msgs_tx, 3);
	peer_set_error(&peers[0], EHOSTUNREACH, "no route");
	assert_non_null(peer_used(&peers[0]));
	assert_string_equal(peer_used(&peers[0])->last_error, "no route");
	assert_int_equal(peer_state(&peers[0]), PEER_DOWN);
	assert_null(peer_used(&peers[1]));
	assert_int_equal(peer_counts(&peers[1])->msgs_tx, 0);
	peer_table_close(peers, cfg.nnodes);
}

/* A config without nodes has no table. */
static void test_table_open_empty(void **state)
{
	struct config none = {.local = -1};
	struct peer *peers = NULL;

	assert_int_equal(peer_table_open(&peers, &none), -EINVAL);
	assert_null(peers);
}

/* Closing nothing is harmless (error paths call it unconditionally). */
static void test_table_close_null(void **state)
{
	peer_table_close(NULL, 3);
}

/* A drop counts once for the peer and once in the totals, per reason. */
static void test_count_drop_both(void **state)
{
	struct peer_counters totals;
	struct peer *peers;

	memset(&totals, 0, sizeof(totals));
	assert_int_equal(peer_table_open(&peers, &cfg), 0);
	peer_count_drop(&peers[2], &totals, DROP_QUEUE_FULL);
	peer_count_drop(&peers[2], &totals, DROP_QUEUE_FULL);
	peer_count_drop(&peers[0], &totals, DROP_DUPLICATE);
	assert_int_equal(peer_use(&peers[2])->cnt.drops[DROP_QUEUE_FULL], 2);
	assert_int_equal(peer_use(&peers[0])->cnt.drops[DROP_DUPLICATE], 1);
	assert_int_equal(peer_use(&peers[0])->cnt.drops[DROP_QUEUE_FULL], 0);
	assert_int_equal(peer_use(&peers[1])->cnt.drops[DROP_QUEUE_FULL], 0);
	assert_int_equal(totals.drops[DROP_QUEUE_FULL], 2);
	assert_int_equal(totals.drops[DROP_DUPLICATE], 1);
	assert_int_equal(totals.drops[DROP_MALFORMED], 0);
	peer_table_close(peers, cfg.nnodes);
}

/* A drop from no known peer still counts in the totals, and vice versa. */
static void test_count_drop_one_side(void **state)
{
	struct peer_counters totals;
	struct peer *peers;

	memset(&totals, 0, sizeof(totals));
	assert_int_equal(peer_table_open(&peers, &cfg), 0);
	peer_count_drop(NULL, &totals, DROP_UNKNOWN_SRC);
	peer_count_drop(&peers[0], NULL, DROP_MALFORMED);
	assert_int_equal(totals.drops[DROP_UNKNOWN_SRC], 1);
	assert_int_equal(totals.drops[DROP_MALFORMED], 0);
	assert_int_equal(peer_use(&peers[0])->cnt.drops[DROP_MALFORMED], 1);
	assert_int_equal(peer_use(&peers[0])->cnt.drops[DROP_UNKNOWN_SRC], 0);
	peer_table_close(peers, cfg.nnodes);
}

/* A reason out of range is ignored, not written past the array. */
static void test_count_drop_bad_reason(void **state)
{
	struct peer_counters totals;
	struct peer *peers;
	int i;

	memset(&totals, 0, sizeof(totals));
	assert_int_equal(peer_table_open(&peers, &cfg), 0);
	peer_count_drop(&peers[0], &totals, DROP_MAX);
	peer_count_drop(&peers[0], &totals, (enum peer_drop)(DROP_MAX + 5));
	for (i = 0; i < DROP_MAX; i++) {
		assert_int_equal(totals.drops[i], 0);
		assert_int_equal(peer_use(&peers[0])->cnt.drops[i], 0);
	}
	assert_int_equal(totals.rel_window, 0);
	peer_table_close(peers, cfg.nnodes);
}

/* Issue 33: what a node never used may cost, its config_node, its share
 * of the name index, its strings and its peer together. */
#define PEER_NODE_BYTES 300

/* Bytes the heap holds now, chunk overheads and mmap'ed blocks included
 * (a 10,000-node table is one mmap). */
static size_t heap_bytes(void)
{
#ifdef __SANITIZE_ADDRESS__
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#endif
}

/* n nodes (a multiple of 250) as a cluster writes them: one hostlist
 * section, an address each from a hostlist. */
static char *many_nodes(int n)
{
	char *text = malloc(256);

	assert_non_null(text);
	snprintf(text, 256,
		 "[global]\nroute = gid\n"
		 "[node cn[%05d-%05d]]\naddr = 10.0.[0-%d].[1-250]\n",
		 1, n, n / 250 - 1);
	return text;
}

/* The heap a config of n nodes and its peer table take, per node. */
static size_t bytes_per_node(int n)
{
	char err[CONFIG_ERR_MAX], *text = many_nodes(n);
	struct config big;
	struct peer *peers;
	size_t before, after;

	memset(&big, 0, sizeof(big));
	before = heap_bytes();
	assert_int_equal(
		config_load_string(text, "big.ini", &big, err, sizeof(err)), 0);
	assert_int_equal(big.nnodes, n);
	assert_int_equal(peer_table_open(&peers, &big), 0);
	after = heap_bytes();
	print_message("# %d nodes: %zu bytes per node\n", n,
		      (after - before) / n);
	peer_table_close(peers, big.nnodes);
	config_free(&big);
	free(text);
	return (after - before) / n;
}

/* A node never used costs PEER_NODE_BYTES at most, however many. */
static void test_bytes_per_node(void **state)
{
	size_t thousand = bytes_per_node(1000), ten = bytes_per_node(10000);

	assert_in_range(thousand, 1, PEER_NODE_BYTES);
	assert_in_range(ten, 1, PEER_NODE_BYTES);
}

/* Every reason has a name for the .status lines. */
static void test_drop_names(void **state)
{
	int i;

	for (i = 0; i < DROP_MAX; i++) {
		assert_non_null(peer_drop_names[i]);
		assert_true(strlen(peer_drop_names[i]) > 0);
	}
	assert_string_equal(peer_drop_names[DROP_QUEUE_FULL], "queue_full");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_table_open, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_use_once, setup, teardown),
		cmocka_unit_test(test_table_open_empty),
		cmocka_unit_test(test_table_close_null),
		cmocka_unit_test_setup_teardown(test_count_drop_both, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_count_drop_one_side, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_count_drop_bad_reason,
						setup, teardown),
		cmocka_unit_test(test_drop_names),
		cmocka_unit_test(test_bytes_per_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
