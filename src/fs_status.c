/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The .status files, as key=value lines: MOUNT/.status says who this node
 * is, its transport and the totals over all peers; MOUNT/NODE/.status
 * says how that peer is reached and its own counters.  The counters come
 * from peer.h's X lists, in their order.  Everything here runs under
 * fs->lock, taken by the open handler that snapshots the text, and never
 * takes it (see fs_int.h); a peer's address is read under its own lock.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <time.h>

#include "fs_int.h"
#include "util.h"

/* One counter's key=value line, for peer.h's X lists. */
#define FS_STATUS_LINE(name, comment)                                          \
	fprintf(f, #name "=%lu\n", (unsigned long)c->name);

/* key=value lines for a counter set, in peer.h's order. */
static void fs_status_counters(FILE *f, struct peer_counters *c)
{
	int i;

	PEER_COUNTERS_TRAFFIC(FS_STATUS_LINE)
	for (i = 0; i < DROP_MAX; i++)
		fprintf(f, "drop_%s=%lu\n", peer_drop_names[i],
			(unsigned long)c->drops[i]);
	PEER_COUNTERS_REL(FS_STATUS_LINE)
}

/* MOUNT/.status only: the fabric's events, node-wide, when the last one
 * came (0: none yet), and the node's gauges. */
static void fs_status_fabric_events(FILE *f, struct fabric_counters *c)
{
	PEER_COUNTERS_FABRIC(FS_STATUS_LINE)
	fprintf(f, "fabric_last_event=%lld\n", (long long)c->last_event);
	PEER_GAUGES_NODE(FS_STATUS_LINE)
}

/* NODE/.status only: the per-stream gauges, which no total sums. */
static void fs_status_gauges(FILE *f, struct peer_counters *c)
{
	PEER_GAUGES_STREAM(FS_STATUS_LINE)
}
#undef FS_STATUS_LINE

/*
 * The requests parked in node (all nodes when NULL): what a script waits
 * on to know a read is parked before it acts, instead of sleeping.
 */
static void fs_status_parked(struct fs *fs, struct fs_node *node, FILE *f)
{
	unsigned reads = 0, writes = 0, polls = 0, meets = 0;
	size_t i;
	int n;

	for (n = 0; n < fs->nnodes; n++) {
		if (!fs->nodes[n] || (node && node != fs->nodes[n]))
			continue;
		reads += fs->nodes[n]->nparked;
		writes += fs->nodes[n]->nwrites;
		meets += fs->nodes[n]->nmeets;
	}
	if (fs->all && (!node || node == fs->all))
		meets += fs->all->nmeets;
	for (i = 0; i < fs->nslots; i++)
		if (fs->chans[i] && (!node || fs->chans[i]->node == node))
			polls += fs->chans[i]->npolls;
	fprintf(f, "parked_reads=%u\nparked_polls=%u\nwaiting_writes=%u\n",
		reads, polls, writes);
	fprintf(f, "meeting_writes=%u\n", meets);
}

/* How a route is named in the config and in .status. */
static const char *fs_status_route(enum config_route r)
{
	return r == ROUTE_SA ? "sa" : "gid";
}

/* The local port as the transport opened it: MOUNT/.status. */
static void fs_status_port(const struct tp_info *ti, FILE *f)
{
	char gid[UTIL_GID_STRLEN];

	fprintf(f, "device=%s\nport=%d\nlid=%u\ngid=%s\ngid_index=%d\n",
		ti->device, ti->port, ti->lid,
		util_gid_str(&ti->gid, gid, sizeof(gid)), ti->gid_index);
	fprintf(f, "qpn=%u\nqkey=0x%x\npath_mtu=%d\n", ti->qpn, ti->qkey,
		128 << ti->mtu);
	fprintf(f, "recv_depth=%u\nsend_depth=%u\n", ti->recv_depth,
		ti->send_depth);
}

/* One of sl and traffic_class as the AHs get it: the configured value,
 * else what the route gives, the SA's path record or route = gid's 0. */
static void fs_status_qos(FILE *f, const char *key, int v, enum config_route r)
{
	if (v >= 0)
		fprintf(f, "%s=%d\n", key, v);
	else if (r == ROUTE_SA)
		fprintf(f, "%s=path\n", key);
	else
		fprintf(f, "%s=0\n", key);
}

/* The partition and service class of this node's traffic: MOUNT/.status. */
static void fs_status_fabric(const struct config *cfg, const struct tp_info *ti,
			     FILE *f)
{
	fprintf(f, "pkey=0x%04x\npkey_index=%u\n", ti->pkey, ti->pkey_index);
	fs_status_qos(f, "sl", cfg->sl, cfg->route);
	fs_status_qos(f, "traffic_class", cfg->traffic_class, cfg->route);
}

/* How MOUNT/all/ goes out, with its group: both .status files. */
static void fs_status_mcast(struct fs *fs, FILE *f)
{
	static const char *const names[] = {
		[TP_MCAST_OFF] = "off",
		[TP_MCAST_JOINED] = "joined",
		[TP_MCAST_FALLBACK] = "fallback",
		[TP_MCAST_REJOINING] = "rejoining",
	};
	struct tp_mcast_info mi;
	char gid[UTIL_GID_STRLEN];

	if (!fs->tp)
		return;
	tp_mcast_get(fs->tp, &mi);
	fprintf(f, "mcast=%s\nmcast_group=%s\n",
		(unsigned)mi.state < ARRAY_SIZE(names) ? names[mi.state] : "?",
		fs->cfg->mcast_group);
	if (mi.state == TP_MCAST_JOINED)
		fprintf(f, "mcast_mgid=%s\nmcast_mlid=%u\n",
			util_gid_str(&mi.mgid, gid, sizeof(gid)), mi.mlid);
	fprintf(f, "mcast_reason=%s\n", mi.reason);
	fprintf(f, "mcast_last_rejoin=%lld\n", (long long)mi.last_rejoin);
}

/* MOUNT/all/.status: the group, the channels and the writes waiting. */
static void fs_status_all(struct fs *fs, struct fs_node *node, FILE *f)
{
	fprintf(f, "name=all\n");
	fs_status_mcast(fs, f);
	fprintf(f, "channels=%u\n", node->nchans);
	fs_status_parked(fs, node, f);
}

/* What a config's nodes cost, read as a user can (issue 33), without the
 * page rounding and the untouched calloc pages that make RSS a loose
 * measure; mallinfo2 walks the free lists, which a read may afford. */
size_t fs_heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* MOUNT/.status: this node's identity and totals. */
static void fs_status_root(struct fs *fs, FILE *f)
{
	const struct config *cfg = fs->cfg;
	struct tp_info ti;

	fprintf(f, "node=%s\n", cfg->nodes[cfg->local].name);
	if (fs->tp) {
		tp_info_get(fs->tp, &ti); /* one device's, as it is now */
		fs_status_port(&ti, f);
		fs_status_fabric(cfg, &ti, f);
	}
	fprintf(f, "max_message=%lu\n", (unsigned long)cfg->max_message);
	fprintf(f, "route=%s\n", fs_status_route(cfg->route));
	fprintf(f, "bootstrap=%s\n",
		cfg->bootstrap == BOOTSTRAP_MULTICAST ? "multicast" : "tcp");
	fs_status_mcast(fs, f);
	fprintf(f, "uptime=%ld\n", (long)(time(NULL) - fs->started));
	fprintf(f, "heap_bytes=%zu\n", fs_heap_bytes());
	fs_status_parked(fs, NULL, f);
	if (fs->tp)
		fs_status_counters(f, tp_totals(fs->tp));
	if (fs->tp)
		fs_status_fabric_events(f, tp_fabric(fs->tp));
}

/* MOUNT/NODE/.status: reachability, address, route and counters. */
static void fs_status_peer(struct fs *fs, struct fs_node *node, FILE *f)
{
	static const struct peer_use never; /* what a node never used shows */
	struct peer *p = node->peer;
	const struct peer_use *u = peer_used(p);
	char gid[UTIL_GID_STRLEN], at[UTIL_UTC_STRLEN];

	if (!u)
		u = &never;
	pthread_mutex_lock(&p->lock);
	fprintf(f, "name=%s\nstate=%s\nlocal=%d\n", p->conf->name,
		peer_state_name(peer_state(p)), p->is_local);
	fprintf(f, "last_error=%s\n", u->last_error);
	fprintf(f, "last_attempt=%s\n",
		util_utc_str(u->last_attempt, at, sizeof(at)));
	fprintf(f, "addr=%s\n", p->conf->addr);
	if (p->up || u->addr.qpn) {
		fprintf(f, "qpn=%u\nqkey=0x%x\nlid=%u\ngid=%s\n", u->addr.qpn,
			u->addr.qkey, u->addr.lid,
			util_gid_str(&u->addr.gid, gid, sizeof(gid)));
		fprintf(f, "route=%s\n", fs_status_route(u->route_used));
	}
	fprintf(f, "since=%ld\n", (long)u->since);
	pthread_mutex_unlock(&p->lock);
	fprintf(f, "channels=%u\n", node->nchans);
	fs_status_parked(fs, node, f);
	fs_status_counters(f, peer_counts(p));
	fs_status_gauges(f, peer_counts(p));
}

/* Snapshot a .status file, so that reads at any offset agree. */
int fs_status_render(struct fs *fs, struct fs_node *node, char **buf,
		     size_t *len)
{
	FILE *f = open_memstream(buf, len);

	if (!f)
		return -errno;
	if (node && fs_node_is_all(node))
		fs_status_all(fs, node, f);
	else if (node)
		fs_status_peer(fs, node, f);
	else
		fs_status_root(fs, f);
	if (fclose(f))
		return -errno;
	return 0;
}
