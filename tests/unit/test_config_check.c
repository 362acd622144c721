/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ibfs -t's table (config_check.c) against a resolver of the test's own:
 * getaddrinfo is defined here, so config_addr.c's look-ups land in it;
 * names under .invalid fail with EAI_NONAME and under .again with
 * EAI_AGAIN, and it counts the look-ups in flight.  The look-ups run
 * CONFIG_LOOKUPS_INFLIGHT at a time, never more; a bootstrap host that is
 * the addr is looked up once; a few failures are told one by one at
 * their FILE:LINE, many of one reason in one line that names a few and
 * counts the rest; and every row is out before the first error, when
 * the two streams share one file as `ibfs -t 2>&1 | cat` makes them.
 */
#include <dlfcn.h>
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "config_harness.h"

static pthread_mutex_t fake_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fake_cv = PTHREAD_COND_INITIALIZER;
static int fake_inflight, fake_most, fake_calls, fake_gave_up;
static int fake_hold; /* hold callers until this many were in flight */

static int fake_ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/*
 * The resolver: numeric and other names go to libc's; a name under
 * .invalid or .again is counted in flight, held until fake_hold were in
 * flight together (or, once, 5 s passed: a pool that runs fewer is seen
 * in fake_most, not as a hang), then failed.
 */
int getaddrinfo(const char *node, const char *service,
		const struct addrinfo *hints, struct addrinfo **res)
{
	int (*real)(const char *, const char *, const struct addrinfo *,
		    struct addrinfo **);
	struct timespec until;
	int again;

	if (!node ||
	    !(fake_ends(node, ".invalid") || fake_ends(node, ".again"))) {
		real = (int (*)(
			const char *, const char *, const struct addrinfo *,
			struct addrinfo **))dlsym(RTLD_NEXT, "getaddrinfo");
		return real(node, service, hints, res);
	}
	again = fake_ends(node, ".again");
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&fake_mu);
	fake_calls++;
	if (++fake_inflight > fake_most)
		fake_most = fake_inflight;
	pthread_cond_broadcast(&fake_cv);
	while (fake_most < fake_hold && !fake_gave_up)
		if (pthread_cond_timedwait(&fake_cv, &fake_mu, &until))
			fake_gave_up = 1;
	fake_inflight--;
	pthread_mutex_unlock(&fake_mu);
	return again ? EAI_AGAIN : EAI_NONAME;
}

static void fake_reset(int hold)
{
	fake_inflight = fake_most = fake_calls = fake_gave_up = 0;
	fake_hold = hold;
}

/* config_check of text, its two streams into *out and *errs (malloc'ed),
 * the resolver holding its callers until hold are in flight. */
static int check(const char *text, int hold, char **out, char **errs)
{
	size_t olen, elen;
	FILE *o, *e;
	int bad;

	good(text);
	fake_reset(hold);
	o = open_memstream(out, &olen);
	e = open_memstream(errs, &elen);
	assert_non_null(o);
	assert_non_null(e);
	bad = config_check(&cfg, o, e);
	fclose(o);
	fclose(e);
	return bad;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/*
 * 64 names that fail alike: 16 look-ups in flight, never more, one per
 * node (the bootstrap host is the addr); 65 rows; and one error line.
 */
static void t_many_alike(void **state)
{
	char *out, *errs;

	assert_int_equal(check("[global]\n[node n[01-64]]\n"
			       "addr = %n-ib.invalid\n",
			       CONFIG_LOOKUPS_INFLIGHT, &out, &errs),
			 64);
	assert_int_equal(fake_most, CONFIG_LOOKUPS_INFLIGHT);
	assert_int_equal(fake_calls, 64);
	assert_int_equal(count_lines(out), 65);
	assert_non_null(strstr(out, "\nn64 "));
	assert_string_equal(errs, "ibfs: t.ini:3: addr of 64 nodes does not "
				  "resolve: n01-ib.invalid, n02-ib.invalid, "
				  "n03-ib.invalid and 61 more (Name or service "
				  "not known)\n");
	free(out);
	free(errs);
}

/* A few failures are each told at their key's line, as the daemon does;
 * a bootstrap host of its own is looked up and told on its own. */
static void t_few_one_by_one(void **state)
{
	char *out, *errs;

	assert_int_equal(check("[node alpha]\naddr = 10.0.2.15\n"
			       "[node beta]\naddr = nonexistent.invalid\n"
			       "[node gamma]\ndelivery = reliable\n"
			       "addr = %n.invalid\n"
			       "[node delta]\naddr = 10.0.2.16\n"
			       "bootstrap = x.again:18601\n",
			       1, &out, &errs),
			 3);
	assert_int_equal(fake_calls, 3);
	assert_string_equal(
		errs,
		"ibfs: t.ini:4: node beta: addr 'nonexistent.invalid' does not "
		"resolve: Name or service not known\n"
		"ibfs: t.ini:7: node gamma: addr 'gamma.invalid' does not "
		"resolve: Name or service not known\n"
		"ibfs: t.ini:10: node delta: bootstrap 'x.again' does not "
		"resolve: Temporary failure in name resolution\n");
	assert_non_null(strstr(out,
			       "\nbeta             nonexistent.invalid(?)  "
			       " nonexistent.invalid:17515(?) datagram\n"));
	assert_non_null(strstr(out,
			       "\ndelta            10.0.2.16                "
			       "x.again:18601(?)             datagram\n"));
	free(out);
	free(errs);
}

/* Each reason its own line: many alike in one, a few one by one. */
static void t_reasons_apart(void **state)
{
	char *out, *errs;

	assert_int_equal(check("[node a[1-8]]\naddr = %n.invalid\n"
			       "[node b[1-2]]\naddr = %n.again\n"
			       "[node c[1-5]]\naddr = 10.0.2.15\n"
			       "bootstrap = %n.again\n",
			       1, &out, &errs),
			 15);
	assert_string_equal(
		errs,
		"ibfs: t.ini:2: addr of 8 nodes does not resolve: a1.invalid, "
		"a2.invalid, a3.invalid and 5 more (Name or service not "
		"known)\n"
		"ibfs: t.ini:4: node b1: addr 'b1.again' does not resolve: "
		"Temporary failure in name resolution\n"
		"ibfs: t.ini:4: node b2: addr 'b2.again' does not resolve: "
		"Temporary failure in name resolution\n"
		"ibfs: t.ini:7: bootstrap of 5 nodes does not resolve: "
		"c1.again, c2.again, c3.again and 2 more (Temporary failure "
		"in name resolution)\n");
	free(out);
	free(errs);
}

/*
 * The rows come before the first error when both streams are one file,
 * the rows' stream fully buffered and the errors' not, as stdout into a
 * pipe and stderr are.
 */
static void t_rows_before_errors(void **state)
{
	char text[8192], *err_at, *last_row;
	FILE *file, *o, *e;
	ssize_t n;
	int fd;

	good("[node n[1-9]]\naddr = %n.invalid\n");
	fake_reset(1);
	file = tmpfile();
	assert_non_null(file);
	fd = fileno(file);
	o = fdopen(dup(fd), "w");
	e = fdopen(dup(fd), "w");
	assert_non_null(o);
	assert_non_null(e);
	setvbuf(o, NULL, _IOFBF, 1 << 16);
	setvbuf(e, NULL, _IONBF, 0);
	assert_int_equal(config_check(&cfg, o, e), 9);
	fclose(e);
	fclose(o);
	n = pread(fd, text, sizeof(text) - 1, 0);
	assert_true(n > 0);
	text[n] = '\0';
	err_at = strstr(text, "ibfs: ");
	last_row = strstr(text, "\nn9 ");
	assert_non_null(err_at);
	assert_non_null(last_row);
	assert_true(last_row < err_at);
	fclose(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(t_many_alike),
		T(t_few_one_by_one),
		T(t_reasons_apart),
		T(t_rows_before_errors),
	};

	(void)bad; /* the harness's, for tests of bad configs: none here */
	return cmocka_run_group_tests_name("check", tests, NULL, NULL);
}
