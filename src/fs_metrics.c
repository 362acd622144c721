/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * MOUNT/.metrics: what .status counts, in Prometheus's text exposition
 * format (version 0.0.4), for node_exporter's textfile collector or a
 * one-line cron job.  Every counter and gauge of peer.h's X lists is a
 * family, ibfs_NAME_total (counters) or ibfs_NAME (gauges), its comment
 * the HELP, with one sample per config node labelled peer="NAME"; the
 * drops are one family, ibfs_drops_total, labelled by reason too, whose
 * samples without a peer label count the drops no known peer sent.  Then
 * each peer's state, channels, queued bytes and parked requests, and the
 * daemon's memory_limit and what it holds of it.  Like .status, the text
 * is a snapshot taken at open under fs->lock (fs_metrics_render never
 * takes it; see fs_int.h), reading each peer's state under its own lock
 * and the counters, atomics, without one.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "fs_int.h"
#include "util.h"

/* One family generated from peer.h's X lists. */
struct fs_metric {
	const char *name;
	const char *help;
	size_t off;  /* of its atomic in struct peer_counters */
	int counter; /* TYPE counter (name_total), else gauge */
};

#define FS_METRIC(name, comment, counter)                                      \
	{#name, comment, offsetof(struct peer_counters, name), counter},
#define FS_METRIC_COUNTER(name, comment) FS_METRIC(name, comment, 1)
#define FS_METRIC_GAUGE(name, comment)	 FS_METRIC(name, comment, 0)

static const struct fs_metric fs_metrics_table[] = {
	PEER_COUNTERS_TRAFFIC(FS_METRIC_COUNTER)
		PEER_GAUGES_REL(FS_METRIC_GAUGE)
			PEER_EVENTS_REL(FS_METRIC_COUNTER)
				PEER_GAUGES_STREAM(FS_METRIC_GAUGE)};

#undef FS_METRIC_GAUGE
#undef FS_METRIC_COUNTER
#undef FS_METRIC

/*
 * s as the format wants it: in a label value (quote) a backslash, a
 * double quote and a newline are escaped; in HELP text only the first
 * and the last.
 */
static void fs_metrics_escape(FILE *f, const char *s, int quote)
{
	for (; *s; s++) {
		if (*s == '\\' || (quote && *s == '"'))
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* A family's # HELP and # TYPE lines, once, before its samples. */
static void fs_metrics_family(FILE *f, const char *name, const char *suffix,
			      const char *help, int counter)
{
	fprintf(f, "# HELP ibfs_%s%s ", name, suffix);
	fs_metrics_escape(f, help, 0);
	fprintf(f, "\n# TYPE ibfs_%s%s %s\n", name, suffix,
		counter ? "counter" : "gauge");
}

/*
 * One sample: ibfs_NAME{peer="P",KEY="VAL"} V, with either label left
 * out when NULL (and the braces when both are).
 */
static void fs_metrics_sample(FILE *f, const char *name, const char *peer,
			      const char *key, const char *val, uint64_t v)
{
	fprintf(f, "ibfs_%s", name);
	if (peer || key)
		fputc('{', f);
	if (peer) {
		fputs("peer=\"", f);
		fs_metrics_escape(f, peer, 1);
		fputc('"', f);
	}
	if (key) {
		fprintf(f, "%s%s=\"", peer ? "," : "", key);
		fs_metrics_escape(f, val, 1);
		fputc('"', f);
	}
	if (peer || key)
		fputc('}', f);
	fprintf(f, " %lu\n", (unsigned long)v);
}

/* The name of peer i of the config, its label value. */
static const char *fs_metrics_peer(const struct fs *fs, int i)
{
	return fs->peers[i].conf->name;
}

/* Counter at off in c (an atomic, read without a lock). */
static uint64_t fs_metrics_value(struct peer_counters *c, size_t off)
{
	return atomic_load_explicit((atomic_uint_fast64_t *)((char *)c + off),
				    memory_order_relaxed);
}

/* Every family of peer.h's tables but the drops, a sample per peer. */
static void fs_metrics_counters(struct fs *fs, FILE *f)
{
	const struct fs_metric *m;
	char name[64];
	int i;

	for (m = fs_metrics_table;
	     m < fs_metrics_table + ARRAY_SIZE(fs_metrics_table); m++) {
		fs_metrics_family(f, m->name, m->counter ? "_total" : "",
				  m->help, m->counter);
		snprintf(name, sizeof(name), "%s%s", m->name,
			 m->counter ? "_total" : "");
		for (i = 0; i < fs->nnodes; i++)
			fs_metrics_sample(
				f, name, fs_metrics_peer(fs, i), NULL, NULL,
				fs_metrics_value(peer_counts(&fs->peers[i]),
						 m->off));
	}
}

/*
 * ibfs_drops_total by peer and reason, then by reason alone for drops no
 * known peer sent: the node's totals less what its peers counted (read
 * after them, so never below; a counter must not go back).
 */
static void fs_metrics_drops(struct fs *fs, FILE *f)
{
	uint64_t sum, v;
	int i, r;

	fs_metrics_family(f, "drops", "_total",
			  "datagrams and messages dropped, by reason "
			  "(drop_REASON in .status, man ibfs-status)",
			  1);
	for (r = 0; r < DROP_MAX; r++) {
		for (sum = 0, i = 0; i < fs->nnodes; i++) {
			v = atomic_load(&peer_counts(&fs->peers[i])->drops[r]);
			sum += v;
			fs_metrics_sample(f, "drops_total",
					  fs_metrics_peer(fs, i), "reason",
					  peer_drop_names[r], v);
		}
		v = fs->tp ? atomic_load(&tp_totals(fs->tp)->drops[r]) : 0;
		fs_metrics_sample(f, "drops_total", NULL, "reason",
				  peer_drop_names[r], v > sum ? v - sum : 0);
	}
}

/* Peer i's state, read under its lock. */
static enum peer_state fs_metrics_peer_state(struct fs *fs, int i)
{
	struct peer *p = &fs->peers[i];
	enum peer_state st;

	pthread_mutex_lock(&p->lock);
	st = peer_state(p);
	pthread_mutex_unlock(&p->lock);
	return st;
}

/* ibfs_peer_up, and ibfs_peer_state with the state as a label. */
static void fs_metrics_state(struct fs *fs, FILE *f)
{
	int i;

	fs_metrics_family(f, "peer_up", "",
			  "1 while the peer is up: its session stands and it "
			  "answered a probe datagram (state=up in .status)",
			  0);
	for (i = 0; i < fs->nnodes; i++)
		fs_metrics_sample(f, "peer_up", fs_metrics_peer(fs, i), NULL,
				  NULL,
				  fs_metrics_peer_state(fs, i) == PEER_UP);
	fs_metrics_family(f, "peer_state", "",
			  "the peer's state in its .status, as a label: 1", 0);
	for (i = 0; i < fs->nnodes; i++)
		fs_metrics_sample(
			f, "peer_state", fs_metrics_peer(fs, i), "state",
			peer_state_name(fs_metrics_peer_state(fs, i)), 1);
}

/* What a node directory holds and waits on: its queues and requests. */
enum fs_metrics_level {
	FS_LEVEL_CHANNELS,
	FS_LEVEL_QUEUED,
	FS_LEVEL_HELD,
	FS_LEVEL_READS,
	FS_LEVEL_POLLS,
	FS_LEVEL_WRITES,
	FS_LEVEL_MEETS,
	FS_LEVEL_MAX,
};

/* Node i's level l: its fields, or a sum over its channels. */
static uint64_t fs_metrics_level(struct fs *fs, int i, enum fs_metrics_level l)
{
	struct fs_node *node = fs->nodes[i];
	struct fs_chan *c;
	uint64_t v = 0;

	if (l == FS_LEVEL_HELD)
		return fs->budget.held ? fs->budget.held[i] : 0;
	if (!node) /* never used: nothing of it to count */
		return 0;
	switch (l) {
	case FS_LEVEL_CHANNELS:
		return node->nchans;
	case FS_LEVEL_READS:
		return node->nparked;
	case FS_LEVEL_WRITES:
		return node->nwrites;
	case FS_LEVEL_MEETS:
		return node->nmeets;
	case FS_LEVEL_QUEUED:
	case FS_LEVEL_POLLS:
		LIST_FOREACH (c, &node->chans, dir_link)
			v += l == FS_LEVEL_QUEUED ? c->queued : c->npolls;
		return v;
	default:
		return 0;
	}
}

/* The gauges of node directories, a sample per peer. */
static void fs_metrics_levels(struct fs *fs, FILE *f)
{
	static const char *const names[FS_LEVEL_MAX][2] = {
		[FS_LEVEL_CHANNELS] = {"channels", "channels in MOUNT/NODE/"},
		[FS_LEVEL_QUEUED] = {"queued_bytes",
				     "bytes queued unread in MOUNT/NODE/"},
		[FS_LEVEL_HELD] = {"memory_held_bytes",
				   "what the peer's queued messages are "
				   "charged against memory_limit"},
		[FS_LEVEL_READS] = {"parked_reads", "reads waiting"},
		[FS_LEVEL_POLLS] = {"parked_polls", "polls waiting"},
		[FS_LEVEL_WRITES] = {"waiting_writes",
				     "reliable writes waiting for the ack"},
		[FS_LEVEL_MEETS] = {"meeting_writes",
				    "writes waiting for the peer to be met"},
	};
	int l, i;

	for (l = 0; l < FS_LEVEL_MAX; l++) {
		fs_metrics_family(f, names[l][0], "", names[l][1], 0);
		for (i = 0; i < fs->nnodes; i++)
			fs_metrics_sample(f, names[l][0],
					  fs_metrics_peer(fs, i), NULL, NULL,
					  fs_metrics_level(fs, i, l));
	}
}

/* The node itself: who it is, since when, its memory_limit and heap. */
static void fs_metrics_node(struct fs *fs, FILE *f)
{
	const struct config *cfg = fs->cfg;

	fs_metrics_family(f, "node_info", "", "this node's name, as a label: 1",
			  0);
	fs_metrics_sample(f, "node_info", NULL, "node",
			  cfg->nodes[cfg->local].name, 1);
	fs_metrics_family(f, "start_time_seconds", "",
			  "when the daemon started, seconds since the epoch",
			  0);
	fs_metrics_sample(f, "start_time_seconds", NULL, NULL, NULL,
			  (uint64_t)fs->started);
	fs_metrics_family(f, "memory_limit_bytes", "",
			  "memory_limit: what all queues may hold", 0);
	fs_metrics_sample(f, "memory_limit_bytes", NULL, NULL, NULL,
			  fs->budget.limit);
	fs_metrics_family(f, "memory_used_bytes", "",
			  "what the queued messages are charged now", 0);
	fs_metrics_sample(f, "memory_used_bytes", NULL, NULL, NULL,
			  fs->budget.total);
	fs_metrics_family(f, "heap_bytes", "",
			  "what the daemon holds from malloc, as mallinfo2 "
			  "counts it",
			  0);
	fs_metrics_sample(f, "heap_bytes", NULL, NULL, NULL, fs_heap_bytes());
}

/* The fabric's events, node-wide (peer.h's PEER_COUNTERS_FABRIC), when
 * the last one came, and the node's gauges (PEER_GAUGES_NODE). */
static void fs_metrics_fabric(struct fs *fs, FILE *f)
{
#define FS_METRIC_FABRIC(name, comment)                                        \
	fs_metrics_family(f, #name, "_total", comment, 1);                     \
	fs_metrics_sample(f, #name "_total", NULL, NULL, NULL,                 \
			  fc ? atomic_load(&fc->name) : 0);
	struct fabric_counters *fc = fs->tp ? tp_fabric(fs->tp) : NULL;

	PEER_COUNTERS_FABRIC(FS_METRIC_FABRIC)
#undef FS_METRIC_FABRIC
	fs_metrics_family(f, "fabric_last_event_seconds", "",
			  "when the last fabric event came, seconds since the "
			  "epoch (0: none yet)",
			  0);
	fs_metrics_sample(f, "fabric_last_event_seconds", NULL, NULL, NULL,
			  fc ? (uint64_t)atomic_load(&fc->last_event) : 0);
#define FS_METRIC_NODE(name, comment)                                          \
	fs_metrics_family(f, #name, "", comment, 0);                           \
	fs_metrics_sample(f, #name, NULL, NULL, NULL,                          \
			  fc ? atomic_load(&fc->name) : 0);
	PEER_GAUGES_NODE(FS_METRIC_NODE)
#undef FS_METRIC_NODE
}

/* Snapshot MOUNT/.metrics, so that reads at any offset agree. */
int fs_metrics_render(struct fs *fs, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	if (!f)
		return -errno;
	fs_metrics_node(fs, f);
	fs_metrics_state(fs, f);
	fs_metrics_levels(fs, f);
	fs_metrics_counters(fs, f);
	fs_metrics_drops(fs, f);
	fs_metrics_fabric(fs, f);
	if (fclose(f))
		return -errno;
	return 0;
}
