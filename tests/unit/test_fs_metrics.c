/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for fs_metrics.c, the text of MOUNT/.metrics, on the host
 * (fs_harness.h: fs_ops driven with fake requests over a fake transport).
 * Every line is parsed as Prometheus's text format 0.0.4 wants it: a
 * `# HELP name text` and a `# TYPE name counter|gauge` once per family,
 * before its samples, and samples `name{label="value",...} N` whose name
 * is their family's, with a backslash, a double quote and a newline
 * escaped in label values.  Every counter of peer.h's X lists is there
 * with its value, for every peer; drops no peer sent have no peer label.
 * Node beta is this node; alpha and gamma peers.
 */
#include "fs_harness.h"

#define MAX_FAMILIES 128
#define GAMMA	     2

/* What the parser saw: the families and the number of samples. */
struct parsed {
	char family[MAX_FAMILIES][80];
	int typed[MAX_FAMILIES]; /* its # TYPE came */
	int nfamilies;
	int nsamples;
};

/* The index of family name in p, or -1. */
static int family_of(const struct parsed *p, const char *name, size_t len)
{
	int i;

	for (i = 0; i < p->nfamilies; i++)
		if (strlen(p->family[i]) == len &&
		    !strncmp(p->family[i], name, len))
			return i;
	return -1;
}

/* The length of the metric or label name at s (0: none). */
static size_t name_len(const char *s, int metric)
{
	size_t n = 0;

	while (s[n] == '_' || (s[n] >= 'a' && s[n] <= 'z') ||
	       (s[n] >= 'A' && s[n] <= 'Z') || (metric && s[n] == ':') ||
	       (n && s[n] >= '0' && s[n] <= '9'))
		n++;
	return n;
}

/* A comment line: HELP opens a family, TYPE follows it at once. */
static void parse_comment(struct parsed *p, const char *line)
{
	const char *name = line + 7;
	size_t n = name_len(name, 1);

	if (!strncmp(line, "# HELP ", 7)) {
		assert_int_not_equal(n, 0);
		assert_int_equal(name[n], ' ');
		assert_int_equal(family_of(p, name, n), -1);
		assert_true(p->nfamilies < MAX_FAMILIES);
		snprintf(p->family[p->nfamilies++], sizeof(p->family[0]),
			 "%.*s", (int)n, name);
		return;
	}
	assert_memory_equal(line, "# TYPE ", 7);
	assert_int_equal(family_of(p, name, n), p->nfamilies - 1);
	assert_false(p->typed[p->nfamilies - 1]);
	p->typed[p->nfamilies - 1] = 1;
	assert_true(!strcmp(name + n, " counter") ||
		    !strcmp(name + n, " gauge"));
	if (!strcmp(name + n, " counter"))
		assert_string_equal(name + n - 6, "_total counter");
}

/* The labels of a sample, from just past its '{'; returns past '}'. */
static const char *parse_labels(const char *s)
{
	size_t n;

	while (*s != '}') {
		n = name_len(s, 0);
		assert_int_not_equal(n, 0);
		s += n;
		assert_memory_equal(s, "=\"", 2);
		for (s += 2; *s != '"'; s++) {
			assert_true(*s && *s != '\n');
			if (*s == '\\') {
				s++;
				assert_non_null(strchr("\\\"n", *s));
			}
		}
		s++;
		if (*s == ',')
			s++;
		else
			assert_int_equal(*s, '}');
	}
	return s + 1;
}

/* A sample line of the last family opened, with an integer value. */
static void parse_sample(struct parsed *p, const char *line)
{
	size_t n = name_len(line, 1);
	const char *s = line + n;

	assert_int_not_equal(n, 0);
	assert_true(p->nfamilies > 0 && p->typed[p->nfamilies - 1]);
	assert_int_equal(family_of(p, line, n), p->nfamilies - 1);
	if (*s == '{')
		s = parse_labels(s + 1);
	assert_int_equal(*s, ' ');
	s++;
	assert_true(*s >= '0' && *s <= '9');
	while (*s >= '0' && *s <= '9')
		s++;
	assert_int_equal(*s, '\0');
	p->nsamples++;
}

/* Parse text line by line, failing at the first line out of format. */
static void parse(char *text, struct parsed *p)
{
	char *line, *save = NULL;

	memset(p, 0, sizeof(*p));
	assert_int_equal(text[strlen(text) - 1], '\n');
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			parse_comment(p, line);
		else
			parse_sample(p, line);
	}
}

/* The text of MOUNT/.metrics now (a copy the caller frees). */
static char *metrics(void)
{
	struct fuse_file_info fi = {0};
	char *s;

	assert_int_equal(lookup_ok(FS_ROOT_INO, ".metrics"),
			 FS_ROOT_METRICS_INO);
	assert_int_equal(open_ino(FS_ROOT_METRICS_INO, O_RDONLY, &fi), 0);
	s = strdup(slurp(&fi, 0));
	assert_non_null(s);
	release(&fi);
	return s;
}

/* Every line parses; every family of peer.h's tables, every peer. */
static void test_metrics_format(void **state)
{
	char *s = metrics(), *copy = strdup(s);
	struct parsed p;

	assert_non_null(copy);
	parse(copy, &p);
	/* the X lists' counters and gauges, and the drops */
#define HAS(name, comment)                                                     \
	assert_true(family_of(&p, "ibfs_" #name "_total",                      \
			      strlen("ibfs_" #name "_total")) >= 0 ||          \
		    family_of(&p, "ibfs_" #name, strlen("ibfs_" #name)) >= 0);
	PEER_COUNTERS_TRAFFIC(HAS)
	PEER_COUNTERS_REL(HAS)
	PEER_GAUGES_STREAM(HAS)
#undef HAS
	assert_true(family_of(&p, "ibfs_rel_window", 15) >= 0);
	assert_true(family_of(&p, "ibfs_rel_retrans_total", 22) >= 0);
	assert_true(family_of(&p, "ibfs_drops_total", 16) >= 0);
	assert_non_null(strstr(s, "\nibfs_msgs_tx_total{peer=\"gamma\"} 0\n"));
	assert_non_null(strstr(s, "\nibfs_peer_up{peer=\"alpha\"} 1\n"));
	assert_non_null(strstr(
		s, "\nibfs_peer_state{peer=\"alpha\",state=\"up\"} 1\n"));
	assert_non_null(strstr(s, "\nibfs_node_info{node=\"beta\"} 1\n"));
	assert_true(p.nsamples > 3 * p.nfamilies / 2);
	free(copy);
	free(s);
}

/* Values: a peer's counters, its queue, the drops of no known peer. */
static void test_metrics_values(void **state)
{
	char *s;

	atomic_store(&peer_use(&t.peers[ALPHA])->cnt.msgs_tx, 5);
	atomic_store(&peer_use(&t.peers[ALPHA])->cnt.rel_inflight, 3);
	atomic_store(&peer_use(&t.peers[ALPHA])->cnt.drops[DROP_QUEUE_FULL], 2);
	atomic_store(&t.tp.totals.drops[DROP_QUEUE_FULL], 2 + 4);
	assert_rc(deliver("chat", "hello"), 0);
	t.peers[GAMMA].up = 0;
	s = metrics();
	assert_non_null(strstr(s, "\nibfs_msgs_tx_total{peer=\"alpha\"} 5\n"));
	assert_non_null(strstr(s, "\nibfs_rel_inflight{peer=\"alpha\"} 3\n"));
	assert_non_null(strstr(s, "\nibfs_drops_total{peer=\"alpha\","
				  "reason=\"queue_full\"} 2\n"));
	assert_non_null(
		strstr(s, "\nibfs_drops_total{reason=\"queue_full\"} 4\n"));
	assert_non_null(strstr(s, "\nibfs_queued_bytes{peer=\"alpha\"} 5\n"));
	assert_non_null(strstr(s, "\nibfs_channels{peer=\"alpha\"} 1\n"));
	assert_non_null(strstr(s, "\nibfs_peer_up{peer=\"gamma\"} 0\n"));
	assert_non_null(strstr(s, "\nibfs_memory_used_bytes "));
	assert_non_null(strstr(s, "\nibfs_heap_bytes "));
	free(s);
}

/* A name with a quote, a backslash and a newline is escaped. */
static void test_metrics_escapes(void **state)
{
	struct parsed p;
	char *s;

	t.cfg.nodes[ALPHA].name = "a\"b\\c\nd";
	s = metrics();
	assert_non_null(strstr(
		s, "\nibfs_msgs_tx_total{peer=\"a\\\"b\\\\c\\nd\"} 0\n"));
	parse(s, &p);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_metrics_format),
		T(test_metrics_values),
		T(test_metrics_escapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
