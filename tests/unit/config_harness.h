/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the config parser's tests share (test_config.c,
 * test_config_mcast.c), so that a test file of new keys need not copy
 * test_config.c's: one cfg and one message buffer, freed
 * between tests, and good() and bad(), which load a text and check the
 * outcome:
 * each good case then checks the fields it sets, each bad case that the
 * message names the line and the key at fault and that nothing
 * half-parsed is left in cfg.
 */
#ifndef IBFS_CONFIG_HARNESS_H
#define IBFS_CONFIG_HARNESS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "config.h"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define NODE_A "[node alpha]\naddr = 10.0.2.15\n"

static struct config cfg;
static char err[CONFIG_ERR_MAX];

/* Every test starts from the freed state the API promises. */
static int setup(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	err[0] = '\0';
	return 0;
}

/* And nothing may be left behind for the next one, or for valgrind. */
static int teardown(void **state)
{
	(void)state;
	config_free(&cfg);
	return 0;
}

/* Parse text that must be accepted; show the message if it is not. */
static void good(const char *text)
{
	int rc = config_load_string(text, "t.ini", &cfg, err, sizeof(err));

	if (rc)
		print_error("unexpected error %d: %s\n", rc, err);
	assert_int_equal(rc, 0);
	assert_non_null(cfg.nodes);
}

/* Parse text that must be refused with "t.ini:LINE: ...WHAT...". */
static void bad_rc(const char *text, int want_rc, int line, const char *what)
{
	char where[32];
	int rc = config_load_string(text, "t.ini", &cfg, err, sizeof(err));

	snprintf(where, sizeof(where), "t.ini:%d: ", line);
	if (rc != want_rc || strncmp(err, where, strlen(where)) ||
	    !strstr(err, what))
		print_error("rc %d, message \"%s\"; wanted %d, \"%s...%s\"\n",
			    rc, err, want_rc, where, what);
	assert_int_equal(rc, want_rc);
	assert_memory_equal(err, where, strlen(where));
	assert_non_null(strstr(err, what));
	assert_null(cfg.nodes);
	assert_int_equal(cfg.nnodes, 0);
}

static void bad(const char *text, int line, const char *what)
{
	bad_rc(text, -EINVAL, line, what);
}

/* One function per bad input, so a failure names the case. */
#define BAD(fn, text, line, what)                                              \
	static void fn(void **state)                                           \
	{                                                                      \
		bad(text, line, what);                                         \
	}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

#endif
