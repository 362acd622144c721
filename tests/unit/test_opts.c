/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for opts.c: every long option that takes a value, spelled
 * with '=' and with a space, the short forms, what goes on to libfuse
 * (and in which order), ibfs's own -o options taken out, -v counted, and
 * every usage error named in one line: unknown options, short and long,
 * a missing or bad value, a second mount point, an unknown user or
 * group, and an unknown -o option that only libfuse knows to refuse;
 * and -t, which checks the same, and refuses what only the device could
 * check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "opts.h"
#include "util.h"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define ARGV_MAX 16

/* opts_parse on a NULL-terminated list, copied (getopt permutes it). */
static int parse(struct opts *o, const char *const *args, char *err,
		 size_t errlen)
{
	static char store[ARGV_MAX][256];
	char *argv[ARGV_MAX + 1];
	int argc = 0;

	argv[argc] = strcpy(store[argc], "ibfs");
	argc++;
	for (; *args; args++, argc++) {
		assert_true(argc < ARGV_MAX);
		argv[argc] = strcpy(store[argc], *args);
	}
	argv[argc] = NULL;
	*err = '\0';
	return opts_parse(o, argc, argv, err, errlen);
}

/* args parse; o->fuse is then exactly want (after argv[0]). */
static void expect_fuse(struct opts *o, const char *const *args,
			const char *const *want)
{
	char err[256];
	int i;

	assert_int_equal(parse(o, args, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(o->fuse.argv[0], "ibfs");
	for (i = 0; want[i]; i++) {
		assert_true(i + 1 < o->fuse.argc);
		assert_string_equal(o->fuse.argv[i + 1], want[i]);
	}
	assert_int_equal(o->fuse.argc, i + 1);
}

/* args fail with -EINVAL and a one-line message holding has. */
static void expect_error(const char *const *args, const char *has)
{
	struct opts o;
	char err[256];

	assert_int_equal(parse(&o, args, err, sizeof(err)), -EINVAL);
	if (!strstr(err, has))
		fail_msg("'%s' does not hold '%s'", err, has);
	assert_null(strchr(err, '\n'));
	opts_free(&o);
}

/* "--config FILE" is "--config=FILE" is "-c FILE" is "-cFILE". */
static void test_long_space_and_equals(void **state)
{
	static const char *const spaced[] = {
		"--config",    "c.conf", "--node", "alpha",
		"--device",    "mlx5_0", "--port", "2",
		"--gid-index", "3",	 "mnt",	   NULL};
	static const char *const equals[] = {"--config=c.conf",
					     "--node=alpha",
					     "--device=mlx5_0",
					     "--port=2",
					     "--gid-index=3",
					     "mnt",
					     NULL};
	static const char *const shorts[] = {"-cc.conf", "-n", "alpha", "-i2",
					     "-g",	 "3",  "mnt",	NULL};
	static const char *const *const all[] = {spaced, equals, shorts};
	static const char *const want[] = {"mnt", NULL};
	struct opts o;
	size_t i;

	for (i = 0; i < 3; i++) {
		expect_fuse(&o, all[i], want);
		assert_string_equal(o.config, "c.conf");
		assert_string_equal(o.node, "alpha");
		if (i < 2)
			assert_string_equal(o.device, "mlx5_0");
		else
			assert_null(o.device);
		assert_int_equal(o.port, 2);
		assert_int_equal(o.gid_index, 3);
		opts_free(&o);
	}
}

/* Unset numbers are -1, so that the config's values stand. */
static void test_defaults(void **state)
{
	static const char *const args[] = {"-c", "c", "mnt", NULL};
	static const char *const want[] = {"mnt", NULL};
	struct opts o;

	expect_fuse(&o, args, want);
	assert_int_equal(o.port, -1);
	assert_int_equal(o.gid_index, -1);
	assert_int_equal(o.verbose, 0);
	assert_false(o.uid_set);
	assert_false(o.gid_set);
	assert_null(o.node);
	opts_free(&o);
}

/* libfuse gets -f, -d, the -o options that are not ours, the mount point. */
static void test_fuse_rest(void **state)
{
	static const char *const args[] = {
		"mnt", "-f", "-o",	"allow_other,uid=7,ibfs_debug,ro",
		"-d",  "-v", "-ogid=8", "-vv",
		NULL};
	static const char *const want[] = {
		"-o", "allow_other,ro", "-f", "-d", "mnt", NULL};
	struct opts o;

	expect_fuse(&o, args, want);
	assert_int_equal(o.verbose, 4); /* -v, -vv, ibfs_debug */
	assert_true(o.uid_set);
	assert_int_equal(o.uid, 7);
	assert_true(o.gid_set);
	assert_int_equal(o.gid, 8);
	opts_free(&o);
}

/* uid= and gid= take names too, as chown does. */
static void test_uid_names(void **state)
{
	static const char *const args[] = {"-o", "uid=root,gid=root", "m",
					   NULL};
	static const char *const want[] = {"m", NULL};
	struct opts o;

	expect_fuse(&o, args, want);
	assert_int_equal(o.uid, 0);
	assert_int_equal(o.gid, 0);
	opts_free(&o);
}

/* Each usage error names the option, in one line. */
static void test_errors(void **state)
{
	static const struct {
		const char *args[4];
		const char *has;
	} cases[] = {
		{{"-x", "mnt"}, "unknown option -x"},
		{{"-fx", "mnt"}, "unknown option -x"},
		{{"--bogus", "mnt"}, "unknown option --bogus"},
		{{"--config=c", "--help=1"}, "option --help takes no value"},
		{{"mnt", "--config"}, "option --config needs a value"},
		{{"mnt", "-c"}, "option -c needs a value"},
		{{"--port", "x", "mnt"},
		 "--port wants a number 1..255, not 'x'"},
		{{"-i", "0", "mnt"}, "--port wants a number 1..255, not '0'"},
		{{"--gid-index=256", "mnt"}, "--gid-index wants a number"},
		{{"-g", "-1", "mnt"}, "not '-1'"},
		{{"mnt", "other"}, "unexpected argument 'other'"},
		{{"-o", "uid=no such user", "mnt"}, "-o uid=no such user"},
		{{"-o", "gid=no such group", "mnt"}, "-o gid=no such group"},
		/* -t opens no device: what only the device checks is refused */
		{{"-t", "--device=foo"},
		 "-t opens no device, so it cannot check --device: drop it"},
		{{"--device", "foo", "--test"}, "cannot check --device"},
		{{"-t", "-i", "2"}, "cannot check --port"},
		{{"-t", "--gid-index=1"}, "cannot check --gid-index"},
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		expect_error(cases[i].args, cases[i].has);
}

/* opts_fuse on args; its return, with what it said in err. */
static int fuse_of(struct opts *o, struct fuse_cmdline_opts *fo,
		   const char *const *args, char *err, size_t errlen)
{
	assert_int_equal(parse(o, args, err, errlen), 0);
	memset(fo, 0, sizeof(*fo));
	return opts_fuse(o, fo, "-ofsname=ibfs:t", err, errlen);
}

/* Good options pass libfuse's session; -d adds its request trace. */
static void test_fuse_good(void **state)
{
	static const char *const args[] = {"-d", "-o", "allow_other,ro", ".",
					   NULL};
	struct fuse_cmdline_opts fo;
	struct opts o;
	char err[256], cwd[4096];
	int i, debug = 0;

	assert_int_equal(fuse_of(&o, &fo, args, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_string_equal(fo.mountpoint, cwd);
	assert_true(fo.debug);
	assert_true(fo.foreground);
	for (i = 0; i < o.fuse.argc; i++)
		debug += !strcmp(o.fuse.argv[i], "-odebug");
	assert_int_equal(debug, 1);
	free(fo.mountpoint);
	opts_free(&o);
}

/* What only libfuse knows to refuse is refused here, in one line. */
static void test_fuse_refused(void **state)
{
	static const struct {
		const char *args[5];
		const char *want;
	} cases[] = {
		{{"-o", "allow_other,bogus", "."},
		 "unknown option(s): `-o bogus'"},
		{{"-o", "bogus,uid=3", "-ozap", "."},
		 "unknown option(s): `-o bogus,zap'"},
		{{"-f"}, "no mount point given"},
		{{"/no/such/dir"}, "bad mount point `/no/such/dir'"},
		/* -t checks them as the daemon does */
		{{"-t", "-o", "bogus_opt"},
		 "unknown option(s): `-o bogus_opt'"},
		{{"-t", "/no/such/dir"}, "bad mount point `/no/such/dir'"},
	};
	struct fuse_cmdline_opts fo;
	struct opts o;
	char err[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(
			fuse_of(&o, &fo, cases[i].args, err, sizeof(err)),
			-EINVAL);
		if (strncmp(err, cases[i].want, strlen(cases[i].want)))
			fail_msg("'%s' is not '%s...'", err, cases[i].want);
		assert_null(strchr(err, '\n'));
		free(fo.mountpoint);
		opts_free(&o);
	}
}

/*
 * -t checks what the daemon checks before it opens the device, and no
 * less: libfuse's -o options and a mount point, when one is given
 * (test_fuse_refused has those it refuses, test_errors what only the
 * device could check, which -t refuses), but needs no mount point.
 */
static void test_check_mode(void **state)
{
	static const char *const good[][5] = {
		{"-t", "-c", "c"},
		{"-t", "-o", "allow_other,uid=3"},
		{"-t", "."},
	};
	struct fuse_cmdline_opts fo;
	struct opts o;
	char err[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		assert_int_equal(fuse_of(&o, &fo, good[i], err, sizeof(err)),
				 0);
		assert_string_equal(err, "");
		free(fo.mountpoint);
		opts_free(&o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_space_and_equals),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_fuse_rest),
		cmocka_unit_test(test_uid_names),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_fuse_good),
		cmocka_unit_test(test_fuse_refused),
		cmocka_unit_test(test_check_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
