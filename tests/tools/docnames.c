/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * docnames: the names a user meets, and the man page text about them, as
 * the code defines them; scripts/mkman.sh splices the text into the man
 * pages and scripts/lint-docs.sh checks that the pages hold it.
 *
 *   docnames            one "KIND NAME" line per name: "gkey" for every
 *                       [global] key and "nkey" for every [node NAME] key
 *                       (config_keys.c's tables), "counter" for every
 *                       .status counter and gauge (peer.h's X lists, the
 *                       drops as drop_NAME), "field" for every other
 *                       .status field this file describes
 *   docnames REGION     the troff text of one generated region: gkeys,
 *                       nkeys (ibfs.conf(5)), fields, counters, metrics
 *                       (ibfs-status(7))
 *
 * Taken from the tables themselves (the .metrics HELP texts from a
 * rendering of .metrics), so that a name added there is a name the pages
 * have once make man runs, and a page edited by hand differs from what
 * this prints.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/fs_int.h"
#include "config_parse.h"
#include "peer.h"
#include "util.h"

/* Where a .status field is printed. */
#define IN_ROOT 1 /* MOUNT/.status */
#define IN_NODE 2 /* MOUNT/NODE/.status */
#define IN_ALL	4 /* MOUNT/all/.status */

/*
 * The .status fields src/fs_status.c prints besides peer.h's counters;
 * lint-docs checks that its format strings name exactly these.
 */
static const struct {
	const char *name;
	int in;
	const char *doc;
} fields[] = {
	{"node", IN_ROOT, "this node's name in the config"},
	{"name", IN_NODE | IN_ALL, "the node's name (`all` in *all/.status*)"},
	{"state", IN_NODE,
	 "`up`, `probing`, `unreachable`, `idle` or `down`: see PEER STATES "
	 "in `ibfs`(8)"},
	{"local", IN_NODE, "1 for this node's own directory, else 0"},
	{"last_error", IN_NODE,
	 "why the last attempt to meet the peer failed, in config words; "
	 "empty when none did since it was last up"},
	{"last_attempt", IN_NODE,
	 "when the last dial, hello or announce from the peer was, UTC "
	 "(ISO 8601), or empty"},
	{"addr", IN_NODE, "the node's `addr`, as the config writes it"},
	{"device", IN_ROOT, "the RDMA device in use"},
	{"port", IN_ROOT, "its port"},
	{"lid", IN_ROOT | IN_NODE,
	 "the port's LID (0 on RoCE); of a peer, the one it announced"},
	{"gid", IN_ROOT | IN_NODE, "the source GID; of a peer, its GID"},
	{"gid_index", IN_ROOT, "the GID table entry in use"},
	{"qpn", IN_ROOT | IN_NODE,
	 "the UD queue pair's number; of a peer, the one it announced "
	 "(shown once it was met)"},
	{"qkey", IN_ROOT | IN_NODE, "the Q_Key, in hex"},
	{"path_mtu", IN_ROOT, "the port's active MTU, in bytes"},
	{"recv_depth", IN_ROOT,
	 "receive buffers posted, as the device allowed"},
	{"send_depth", IN_ROOT, "send work requests, as the device allowed"},
	{"pkey", IN_ROOT, "the P_Key of the queue pair, in hex"},
	{"pkey_index", IN_ROOT, "its index in the port's P_Key table"},
	{"sl", IN_ROOT,
	 "the service level of every address handle, or `path` when the SA "
	 "path record gives it"},
	{"traffic_class", IN_ROOT, "the GRH traffic class, as `sl`"},
	{"max_message", IN_ROOT, "`max_message`, in bytes"},
	{"route", IN_ROOT | IN_NODE,
	 "`sa` or `gid`: the `route` key; of a peer, how its address handle "
	 "was made"},
	{"bootstrap", IN_ROOT, "`tcp` or `multicast`: the `bootstrap` key"},
	{"mcast", IN_ROOT | IN_ALL,
	 "how *all/* sends: `joined` (the group), `rejoining` (the group was "
	 "lost and is being joined again: one unicast copy per peer "
	 "meanwhile), `fallback` (one unicast copy per peer: the group could "
	 "not be joined) or `off`"},
	{"mcast_group", IN_ROOT | IN_ALL, "the group, as `mcast_group` says"},
	{"mcast_mgid", IN_ROOT | IN_ALL, "the group's MGID, once joined"},
	{"mcast_mlid", IN_ROOT | IN_ALL, "the group's MLID, once joined"},
	{"mcast_reason", IN_ROOT | IN_ALL,
	 "why the group is not joined, or empty"},
	{"mcast_last_rejoin", IN_ROOT | IN_ALL,
	 "when the group was last joined again after it was lost, seconds "
	 "since the epoch; 0 never"},
	{"fabric_last_event", IN_ROOT,
	 "when the last fabric event came (see FABRIC EVENTS in `ibfs`(8)), "
	 "seconds since the epoch; 0 none yet"},
	{"uptime", IN_ROOT, "seconds since the daemon started"},
	{"heap_bytes", IN_ROOT,
	 "bytes the daemon holds from `malloc`(3), as `mallinfo2`(3) counts "
	 "them (every arena and mapped block, chunk headers included): what "
	 "its config's nodes and its peers in use cost"},
	{"since", IN_NODE,
	 "when the peer last went up or down, seconds since the epoch"},
	{"channels", IN_NODE | IN_ALL, "channels in the directory"},
	{"parked_reads", IN_ROOT | IN_NODE | IN_ALL,
	 "reads waiting for a message (all nodes in *MOUNT/.status*): what a "
	 "script waits on to know a read is parked"},
	{"parked_polls", IN_ROOT | IN_NODE | IN_ALL,
	 "`poll`(2) calls waiting on a channel"},
	{"waiting_writes", IN_ROOT | IN_NODE | IN_ALL,
	 "reliable writes waiting for their acknowledgement"},
	{"meeting_writes", IN_ROOT | IN_NODE | IN_ALL,
	 "writes waiting for their peer to be met"},
};

/* What may start a sentence: ". " before it ends one (never "e.g."). */
#define SENTENCE_START "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789`*"

/* One line of troff text: `x` bold, *x* italic, a sentence a line. */
static void man_text(const char *s)
{
	int bold = 0, italic = 0, bol = 1;

	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", stdout);
		bol = 0;
		if (*s == '`' || *s == '*') {
			int *on = *s == '`' ? &bold : &italic;

			*on = !*on;
			fputs(*on ? (*s == '`' ? "\\fB" : "\\fI") : "\\fR",
			      stdout);
		} else if (*s == '-' && bold) {
			fputs("\\-", stdout);
		} else if (*s == '\\') {
			fputs("\\e", stdout);
		} else if (!strncmp(s, "\u00d7", 2)) {
			fputs("\\(mu", stdout), s++;
		} else if (!strncmp(s, "\u00b1", 2)) {
			fputs("\\(+-", stdout), s++;
		} else if (!strncmp(s, "\u201c", 3)) {
			fputs("\\(lq", stdout), s += 2;
		} else if (!strncmp(s, "\u201d", 3)) {
			fputs("\\(rq", stdout), s += 2;
		} else if (*s == ' ' && s[-1] == '.' && !bold && !italic &&
			   strchr(SENTENCE_START, s[1])) {
			putchar('\n');
			bol = 1;
		} else {
			putchar(*s);
		}
	}
	putchar('\n');
}

/* A duration as a config writes it. */
static const char *fmt_ms(uint64_t v, char *buf, size_t len)
{
	if (v && !(v % 1000))
		snprintf(buf, len, "%" PRIu64 "s", v / 1000);
	else if (v)
		snprintf(buf, len, "%" PRIu64 "ms", v);
	else
		snprintf(buf, len, "0");
	return buf;
}

/* A value of key k as a config writes it: its unit's form. */
static const char *fmt_value(const struct config_key *k, uint64_t v, char *buf,
			     size_t len)
{
	switch (k->unit) {
	case UNIT_SIZE:
		return config_num_fmt_size(v, buf, len);
	case UNIT_MS:
		return fmt_ms(v, buf, len);
	case UNIT_MODE:
		snprintf(buf, len, "%04" PRIo64, v);
		return buf;
	default:
		/* keys whose range is a whole field of bits are hex */
		snprintf(buf, len,
			 k->max > 0xff && !((k->max + 1) & k->max)
				 ? "0x%" PRIx64
				 : "%" PRIu64,
			 v);
		return buf;
	}
}

/* The value in the entry's tag, in man_text's markup. */
static void key_arg(const struct config_key *k, char *buf, size_t len)
{
	static const char *const unit_args[] = {
		[UNIT_NUM] = "*N*",
		[UNIT_SIZE] = "*SIZE*",
		[UNIT_MS] = "*DURATION*",
		[UNIT_MODE] = "*MODE*",
	};
	size_t i;

	if (k->arg) {
		snprintf(buf, len, "%s", k->arg);
	} else if (k->choices) {
		for (*buf = '\0', i = 0; k->choices[i]; i++)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s`%s`",
				 i ? " | " : "", k->choices[i]);
	} else if (k->unit == UNIT_NONE) {
		snprintf(buf, len, "*BOOLEAN*");
	} else {
		snprintf(buf, len, "%s", unit_args[k->unit]);
	}
}

/* One key's entry: tag, paragraph, default, range. */
static void man_key(const struct config_key *k)
{
	char arg[128], line[512], lo[32], hi[32];

	key_arg(k, arg, sizeof(arg));
	puts(".TP");
	snprintf(line, sizeof(line), "`%s` = %s", k->name, arg);
	man_text(line);
	man_text(k->doc);
	puts(".br");
	if (k->def_doc)
		snprintf(line, sizeof(line), "Default: %s.", k->def_doc);
	else if (k->choices)
		snprintf(line, sizeof(line), "Default: `%s`.",
			 k->choices[k->def]);
	else if (k->unit == UNIT_NONE)
		snprintf(line, sizeof(line), "Default: `%s`.",
			 k->def ? "yes" : "no");
	else
		snprintf(line, sizeof(line), "Default: `%s`.",
			 fmt_value(k, (uint64_t)k->def, lo, sizeof(lo)));
	man_text(line);
	/* strings are parsed as device is, their range a length */
	if (k->parse == config_gkeys[GK_DEVICE].parse)
		printf("Length: %" PRIu64 "..%" PRIu64 " bytes.\n", k->min,
		       k->max);
	else if (k->unit != UNIT_NONE)
		printf("Range: %s..%s.\n", fmt_value(k, k->min, lo, sizeof(lo)),
		       fmt_value(k, k->max, hi, sizeof(hi)));
}

/* The fields of .status, with the files that show each. */
static void man_fields(void)
{
	static const char *const files[] = {"*MOUNT/.status*",
					    "*MOUNT/NODE/.status*",
					    "*MOUNT/all/.status*"};
	char line[512];
	size_t i, f;

	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		puts(".TP");
		snprintf(line, sizeof(line), "`%s`", fields[i].name);
		man_text(line);
		snprintf(line, sizeof(line), "%s.", fields[i].doc);
		man_text(line);
		puts(".br");
		snprintf(line, sizeof(line), "In");
		for (f = 0; f < ARRAY_SIZE(files); f++)
			if (fields[i].in & (1 << f))
				snprintf(line + strlen(line),
					 sizeof(line) - strlen(line), "%s %s",
					 strlen(line) > 2 ? "," : "", files[f]);
		snprintf(line + strlen(line), sizeof(line) - strlen(line), ".");
		man_text(line);
	}
}

/* One counter of peer.h's lists; what is summed, and where it shows. */
static void man_counter(const char *name, const char *comment, const char *tail)
{
	char line[512];

	puts(".TP");
	snprintf(line, sizeof(line), "`%s`", name);
	man_text(line);
	snprintf(line, sizeof(line), "%s%s.", comment, tail);
	man_text(line);
}

#define MAN_COUNTER(name, comment) man_counter(#name, comment, "");
#define MAN_STREAM(name, comment)                                              \
	man_counter(#name, comment, " (*MOUNT/NODE/.status* only)");
#define MAN_DROP(e, name, comment) man_counter("drop_" #name, comment, "");
#define MAN_NODE(name, comment)                                                \
	man_counter(#name, comment, " (*MOUNT/.status* only)");

static void man_counters(void)
{
	PEER_COUNTERS_TRAFFIC(MAN_COUNTER)
	PEER_DROPS(MAN_DROP)
	PEER_COUNTERS_REL(MAN_COUNTER)
	PEER_GAUGES_STREAM(MAN_STREAM)
	PEER_COUNTERS_FABRIC(MAN_NODE)
	PEER_GAUGES_NODE(MAN_NODE)
}

/*
 * The families of .metrics, with their TYPE and HELP as a rendering of
 * it prints them (for a config of one node and no traffic), so that the
 * page's words are the HELP's.
 */
static int man_metrics(void)
{
	static const char one[] = "[node docnames]\naddr = 10.0.0.1\n";
	char err[CONFIG_ERR_MAX], *buf = NULL, *line, *help = NULL, *save;
	struct config cfg;
	struct fs fs;
	size_t len;

	memset(&fs, 0, sizeof(fs));
	if (config_load_string(one, "docnames", &cfg, err, sizeof(err)) ||
	    config_select_local(&cfg, "docnames", err, sizeof(err))) {
		fprintf(stderr, "docnames: %s\n", err);
		return 1;
	}
	fs.cfg = &cfg;
	if (fs_metrics_render(&fs, &buf, &len)) {
		fprintf(stderr, "docnames: cannot render .metrics\n");
		return 1;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "# HELP ", 7)) {
			help = line + 7;
		} else if (!strncmp(line, "# TYPE ", 7) && help) {
			char *sp = strchr(help, ' ');

			if (!sp)
				continue;
			*sp = '\0';
			puts(".TP");
			printf("\\fB%s\\fR (%s)\n", help,
			       strrchr(line, ' ') + 1);
			man_text(sp + 1);
			help = NULL;
		}
	}
	free(buf);
	config_free(&cfg);
	return 0;
}

#define DOC_COUNTER(name, comment) printf("counter %s\n", #name);
#define DOC_DROP(e, name, comment) printf("counter drop_%s\n", #name);

static void names(void)
{
	size_t i;

	for (i = 0; i < GK_MAX; i++)
		printf("gkey %s\n", config_gkeys[i].name);
	for (i = 0; i < NK_MAX; i++)
		printf("nkey %s\n", config_nkeys[i].name);
	PEER_COUNTERS_TRAFFIC(DOC_COUNTER)
	PEER_DROPS(DOC_DROP)
	PEER_COUNTERS_REL(DOC_COUNTER)
	PEER_GAUGES_STREAM(DOC_COUNTER)
	PEER_COUNTERS_FABRIC(DOC_COUNTER)
	PEER_GAUGES_NODE(DOC_COUNTER)
	for (i = 0; i < ARRAY_SIZE(fields); i++)
		printf("field %s\n", fields[i].name);
}

int main(int argc, char **argv)
{
	const char *r = argc > 1 ? argv[1] : NULL;
	int i;

	if (!r) {
		names();
	} else if (!strcmp(r, "gkeys")) {
		for (i = 0; i < GK_MAX; i++)
			man_key(&config_gkeys[i]);
	} else if (!strcmp(r, "nkeys")) {
		for (i = 0; i < NK_MAX; i++)
			man_key(&config_nkeys[i]);
	} else if (!strcmp(r, "fields")) {
		man_fields();
	} else if (!strcmp(r, "counters")) {
		man_counters();
	} else if (!strcmp(r, "metrics")) {
		return man_metrics();
	} else {
		fprintf(stderr, "docnames: no region %s\n", r);
		return 2;
	}
	return 0;
}
