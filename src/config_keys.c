/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The config's keys: one table row per key says which field of struct
 * config (or config_node) it sets, how its value is parsed and what range
 * it may take.  Numbers of every unit share one parser and differ only in
 * a row of key_units[]: how they are scanned and how a range is shown.
 * A value is never stored half-checked.  The parsers report through
 * config_ini_bad, and the reader (config_ini.c) calls them through the
 * table: one concern, the reading of keys, split in two by design.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "config_parse.h"
#include "util.h"

#define DAY_MS 86400000ull

_Static_assert(sizeof(mode_t) == sizeof(uint32_t) &&
		       sizeof(enum config_route) == sizeof(uint32_t) &&
		       sizeof(enum config_delivery) == sizeof(uint32_t) &&
		       sizeof(enum config_mcast) == sizeof(uint32_t) &&
		       sizeof(enum config_bootstrap) == sizeof(uint32_t) &&
		       sizeof(int) == sizeof(uint32_t),
	       "key_store writes 4-byte fields as uint32_t");

/* One unit of numbers: how a value is read and how a range is shown. */
struct key_unit {
	/* 0; -EINVAL when val is not such a number; -ERANGE when too big */
	int (*scan)(const char *val, uint64_t *v);
	const char *what; /* after the quoted value: "is not a number" */
	/* a bound of the range, as the message shows it */
	const char *(*show)(uint64_t v, char *buf, size_t len);
	const char *suffix; /* after the range: " ms" */
};

static const char *const route_names[] = {
	[ROUTE_SA] = "sa",
	[ROUTE_GID] = "gid",
	NULL,
};

static const char *const delivery_names[] = {
	[DELIVERY_DATAGRAM] = "datagram",
	[DELIVERY_RELIABLE] = "reliable",
	NULL,
};

static const char *const mcast_names[] = {
	[MCAST_AUTO] = "auto",
	[MCAST_YES] = "yes",
	[MCAST_NO] = "no",
	NULL,
};

static const char *const bootstrap_names[] = {
	[BOOTSTRAP_TCP] = "tcp",
	[BOOTSTRAP_MULTICAST] = "multicast",
	NULL,
};

/* Fields differ in width; the key table records each one's size. */
static void key_store(void *dst, size_t size, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;

	if (size == sizeof(uint64_t))
		memcpy(dst, &v, sizeof(v));
	else
		memcpy(dst, &v32, sizeof(v32));
}

/* Plain counts and ids; hex is allowed because qkeys are written in it. */
static int key_scan_num(const char *val, uint64_t *v)
{
	const char *end;
	int rc;

	rc = config_num_scan(val, 1, v, &end);
	if (!rc && *end)
		return -EINVAL;
	return rc;
}

/* Byte counts, with the k/M/G suffixes config_parse_size knows. */
static int key_scan_size(const char *val, uint64_t *v)
{
	return config_parse_size(val, v);
}

/* Durations: milliseconds, bare or with "ms", or whole seconds with "s". */
static int key_scan_ms(const char *val, uint64_t *v)
{
	const char *end;
	int rc;

	rc = config_num_scan(val, 0, v, &end);
	if (rc)
		return rc;
	end = config_num_skip_blanks(end);
	if (!strcmp(end, "s")) {
		if (*v > UINT64_MAX / 1000)
			return -ERANGE;
		*v *= 1000;
	} else if (*end && strcmp(end, "ms")) {
		return -EINVAL;
	}
	return 0;
}

/* Permission bits are octal whether or not a leading 0 says so. */
static int key_scan_mode(const char *val, uint64_t *v)
{
	if (val[strspn(val, "01234567")])
		return -EINVAL;
	errno = 0;
	*v = strtoull(val, NULL, 8);
	return errno ? -ERANGE : 0;
}

/* A bound in decimal. */
static const char *key_show_dec(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

/* A bound as a mode is written: octal, four digits. */
static const char *key_show_mode(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%04llo", (unsigned long long)v);
	return buf;
}

static const struct key_unit key_units[] = {
	[UNIT_NUM] = {key_scan_num, "is not a number", key_show_dec, ""},
	[UNIT_SIZE] = {key_scan_size, "is not a size (e.g. 4096, 64k, 1M, 2G)",
		       config_num_fmt_size, ""},
	[UNIT_MS] = {key_scan_ms, "is not a duration (e.g. 500, 500ms, 2s)",
		     key_show_dec, " ms"},
	[UNIT_MODE] = {key_scan_mode, "is not an octal mode (e.g. 0640)",
		       key_show_mode, ""},
};

/* Every number key: scan it in its unit, check its range, store it. */
static int key_number(struct config_parse *p, const struct config_key *k,
		      const char *val, void *dst)
{
	const struct key_unit *u = &key_units[k->unit];
	char lo[32], hi[32];
	uint64_t v;
	int rc;

	rc = u->scan(val, &v);
	if (rc == -EINVAL)
		return config_ini_bad(p, k, "'%s' %s", val, u->what);
	if (rc || v < k->min || v > k->max)
		return config_ini_bad(p, k, "%s is out of range %s..%s%s", val,
				      u->show(k->min, lo, sizeof(lo)),
				      u->show(k->max, hi, sizeof(hi)),
				      u->suffix);
	key_store(dst, k->size, v);
	return 0;
}

/* gid_index is a number, or "auto" to let route pick the RoCE v2 GID. */
static int key_gid_index(struct config_parse *p, const struct config_key *k,
			 const char *val, void *dst)
{
	int auto_ = -1;

	if (strcmp(val, "auto"))
		return key_number(p, k, val, dst);
	memcpy(dst, &auto_, sizeof(auto_));
	return 0;
}

/* pkey: a P_Key value, the membership bit included; one whose low 15
 * bits are 0 names no partition (0x0000 and 0x8000 are invalid). */
static int key_pkey(struct config_parse *p, const struct config_key *k,
		    const char *val, void *dst)
{
	uint32_t v;
	int rc;

	rc = key_number(p, k, val, &v);
	if (rc)
		return rc;
	if (!(v & 0x7fff))
		return config_ini_bad(p, k,
				      "%s is no partition (its low 15 bits "
				      "are 0)",
				      val);
	memcpy(dst, &v, sizeof(v));
	return 0;
}

/* Accept the spellings people use for booleans, in any case. */
static int key_bool(struct config_parse *p, const struct config_key *k,
		    const char *val, void *dst)
{
	static const struct {
		const char *word;
		int value;
	} words[] = {
		{"yes", 1}, {"true", 1},  {"on", 1},  {"1", 1},
		{"no", 0},  {"false", 0}, {"off", 0}, {"0", 0},
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(words); i++) {
		if (!strcasecmp(val, words[i].word)) {
			key_store(dst, k->size, words[i].value);
			return 0;
		}
	}
	return config_ini_bad(p, k, "'%s' is not yes/no/true/false/on/off/1/0",
			      val);
}

/* Enumerations: the value is the index of the word in k->choices. */
static int key_choice(struct config_parse *p, const struct config_key *k,
		      const char *val, void *dst)
{
	char list[128] = "";
	size_t i;

	for (i = 0; k->choices[i]; i++) {
		if (!strcmp(val, k->choices[i])) {
			key_store(dst, k->size, i);
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%s", i ? " or " : "", k->choices[i]);
	}
	return config_ini_bad(p, k, "'%s' is not %s", val, list);
}

/* Strings are copied whole or refused: a cut device name or path lies.
 * The value is never echoed, since this also carries the secret. */
static int key_str(struct config_parse *p, const struct config_key *k,
		   const char *val, void *dst)
{
	size_t len = strlen(val);

	if (len < k->min || len > k->max)
		return config_ini_bad(p, k,
				      "must be %llu..%llu bytes long, not %zu",
				      (unsigned long long)k->min,
				      (unsigned long long)k->max, len);
	memcpy(dst, val, len + 1);
	return 0;
}

/* addr, bootstrap (the whole node) and mcast_group (the whole config):
 * config_addr.c checks and stores them; their errors are told here. */
static int key_address(struct config_parse *p, const struct config_key *k,
		       const char *val, void *dst)
{
	char why[CONFIG_ERR_MAX], host[CONFIG_HOST_MAX + 1];
	struct config_node *n = dst;
	union config_sa sa;
	int rc;

	if (k == &config_gkeys[GK_MCAST_GROUP])
		rc = config_addr_set_mcast(dst, val, why, sizeof(why));
	else if (k == &config_nkeys[NK_BOOTSTRAP])
		rc = config_addr_set_bootstrap(n, val, host, &sa, why,
					       sizeof(why));
	else
		rc = config_addr_set_addr(n, val, why, sizeof(why));
	if (rc)
		return config_ini_bad(p, k, "%s", why);
	if (k == &config_nkeys[NK_BOOTSTRAP]) {
		n->bootstrap_host = config_ini_str(p, host, strlen(host));
		return n->bootstrap_host ? config_ini_bootstrap_sa(p, n, &sa)
					 : -ENOMEM;
	}
	if (k == &config_nkeys[NK_ADDR]) {
		n->addr = config_ini_str(p, val, strlen(val));
		return n->addr ? 0 : -ENOMEM;
	}
	return 0;
}

/* clang-format off */
#define KEY(n, fn, field, lo, hi, ch, u)				\
	.name = n, .parse = fn, .off = offsetof(struct config, field),	\
	.size = sizeof(((struct config *)0)->field), .min = lo,		\
	.max = hi, .choices = ch, .unit = u
#define NUM(n, field, lo, hi)	KEY(n, key_number, field, lo, hi, NULL, UNIT_NUM)
#define SIZE(n, field, lo, hi)	KEY(n, key_number, field, lo, hi, NULL, UNIT_SIZE)
#define MS(n, field, lo, hi)	KEY(n, key_number, field, lo, hi, NULL, UNIT_MS)
#define MODE(n, field)		KEY(n, key_number, field, 0, 0777, NULL, UNIT_MODE)
#define STR(n, field, lo, hi)	KEY(n, key_str, field, lo, hi, NULL, UNIT_NONE)
#define CHOICE(n, field, ch)	KEY(n, key_choice, field, 0, 0, ch, UNIT_NONE)
#define BOOL(n, field)		KEY(n, key_bool, field, 0, 1, NULL, UNIT_NONE)
/* a constant of config.h in a page's words, so that it is said once */
#define STR_OF(x)		STR_OF_(x)
#define STR_OF_(x)		#x

const struct config_key config_gkeys[GK_MAX] = {
	[GK_DEVICE] = { STR("device", device, 1, 63), .arg = "*NAME*",
		.def_doc = "the first device with an ACTIVE port",
		.doc = "RDMA device, such as `mlx5_0` or `rxe0` (see "
		"`ibv_devinfo -l`). `ibfs --device` overrides it." },
	[GK_PORT] = { NUM("port", port, 1, 255), .def = 1,
		.doc = "Port of that device. `ibfs -i` overrides it." },
	[GK_GID_INDEX] = { KEY("gid_index", key_gid_index, gid_index, 0, 255,
			       NULL, UNIT_NUM),
		.def = -1, .def_doc = "`auto`", .arg = "*N* | `auto`",
		.doc = "Source GID table entry. `auto`: index 0 on InfiniBand; "
		"on Ethernet (RoCE) the RoCE v2 IPv4-mapped GID of this node's "
		"`addr`, else the first RoCE v2 IPv4-mapped GID of the port. "
		"`ibfs -g` overrides it." },
	[GK_ROUTE] = { CHOICE("route", route, route_names), .def = ROUTE_SA,
		.doc = "How address handles are made. `sa` resolves each "
		"peer's `addr` through rdma_cm: on InfiniBand a path record "
		"from the subnet administrator, on RoCE the IP route and "
		"neighbour; it needs the `rdma_ucm` module. `gid` builds the "
		"address handle straight from the LID and GID the peer "
		"announced at bootstrap." },
	[GK_RECV_DEPTH] = { NUM("recv_depth", recv_depth, 16, 65536),
		.def = 4096,
		.doc = "Receive buffers posted on the UD queue pair. The "
		"default holds several 1 MiB messages at path MTU 1024 (about "
		"1053 datagrams each). Too few and bursts are dropped by the "
		"adapter, before ibfs sees them: the device counts them (on "
		"mlx5, "
		"*/sys/class/infiniband/DEV/ports/N/hw_counters/out_of_buffer*)." },
	[GK_SEND_DEPTH] = { NUM("send_depth", send_depth, 16, 65536),
		.def = 256, .doc = "Send work requests in flight." },
	[GK_MAX_MESSAGE] = { SIZE("max_message", max_message, 1, 64 * MiB),
		.def = 1 * MiB,
		.doc = "Largest message a write may send and a reader may "
		"receive; a message is fragmented into datagrams of the path "
		"MTU and reassembled. A write larger than this, or than the "
		"receiving node's own `max_message` (each node tells its peers "
		"at bootstrap), fails with `EMSGSIZE`; as the kernel cuts "
		"every `write`(2) into requests of at most 1 MiB, only a value "
		"under 1M makes a `write`(2) fail this way." },
	[GK_QUEUE_LIMIT] = { SIZE("queue_limit", queue_limit, 1, 1024 * GiB),
		.def = 64 * MiB,
		.doc = "Bytes that may wait unread in one channel, at least "
		"`max_message`. Each message counts its payload plus about 100 "
		"bytes of heap, so empty messages fill it too; an empty "
		"channel takes any one message. Messages beyond it are dropped "
		"(`drop_queue_full`); with `delivery = reliable` the peer's "
		"writer waits instead until the reader reads (the peer's other "
		"channels go on), and a message larger than `queue_limit` "
		"fails its write with `EMSGSIZE`." },
	[GK_MAX_CHANNELS] = { NUM("max_channels", max_channels, 1, 1000000),
		.def = 1024,
		.doc = "Channels a peer's messages may create in its directory "
		"on this node. Beyond it, messages on new channels are dropped "
		"and counted in `drop_max_channels`; with `delivery = "
		"reliable` their writes fail with `ENOSPC`. Channels made here "
		"with `open`(2) and `O_CREAT` are counted apart, and limited "
		"to as many in each node directory: beyond, the open fails "
		"with `ENOSPC`." },
	[GK_MEMORY_LIMIT] = { SIZE("memory_limit", memory_limit, 64 * KiB,
				   16384 * GiB),
		.def_doc = "an eighth of physical memory, and never below "
		"`queue_limit`",
		.doc = "What all channel queues of the daemon together may "
		"hold, counted as for `queue_limit`, and at least "
		"`max_message`. It is shared between peers: each is sure of "
		"*memory_limit* / (2 \u00d7 *nodes*), and none may hold more "
		"than *memory_limit* / (*H* + 1), *H* the peers holding "
		"memory, so one peer filling unread channels cannot take "
		"another's room. Messages beyond it are dropped "
		"(`drop_memory_limit`); with `delivery = reliable` the writer "
		"waits instead, as for a full channel. Messages still being "
		"reassembled count against the reassembly budget instead." },
	[GK_QKEY] = { NUM("qkey", qkey, 0, UINT32_MAX), .def = 0x1b1f5000,
		.doc = "Q_Key of every node's UD queue pair, the same on all "
		"nodes: a node whose hello carries another is refused, and its "
		"`last_error` and the log say *it has qkey = N, this node's "
		"config says M*. Under `bootstrap = multicast` such a node is "
		"not heard at all: its announces go to another group (the "
		"default group follows the qkey) and the adapter drops "
		"datagrams of another qkey. Q_Keys with the top bit set need "
		"privilege, and are refused unless `multicast` is `no`: an "
		"adapter may replace such a controlled Q_Key with the queue "
		"pair's own, and a group needs one qkey on every node. It is "
		"not a secret: it travels in every datagram." },
	[GK_READ_TIMEOUT] = { MS("read_timeout", read_timeout_ms, 0, DAY_MS),
		.doc = "How long the first read of an open channel waits for a "
		"message before it returns end of file; 0 waits for ever." },
	[GK_REASSEMBLY_TIMEOUT] = { MS("reassembly_timeout",
				       reassembly_timeout_ms, 1, DAY_MS),
		.def = 2000,
		.doc = "How long a partly received message is kept before it "
		"is dropped (`drop_reasm_timeout`). It applies to datagram "
		"delivery; a reliable stream's message is never given up "
		"half-way." },
	[GK_PEER_TIMEOUT] = { MS("peer_timeout", peer_timeout_ms, 1, DAY_MS),
		.def = 10000,
		.doc = "How long a write waits for a peer not met yet, "
		"probing, unreachable or down (then `ENOTCONN`, or "
		"`EHOSTUNREACH` when its address or route does not resolve; "
		"see `ibfs`(8)); with `delivery = reliable` how long a peer "
		"may stay silent before its writes fail with `ETIMEDOUT`; the "
		"bootstrap deadline for a peer's connection and hello (at "
		"least 5 s; a connection this node accepts has 3 s to say "
		"hello); and the TCP keepalive and user timeout of bootstrap "
		"sessions: a silent peer is marked down after about this "
		"long." },
	[GK_IDLE_TIMEOUT] = { MS("idle_timeout", idle_timeout_ms, 0, DAY_MS),
		.def = 300000,
		.doc = "A bootstrap session with no messages either way for "
		"this long is closed, and its peer is `idle` until the next "
		"write meets it again (its address handle is kept). 0 keeps "
		"sessions for ever." },
	[GK_BUSY_POLL] = { BOOL("busy_poll", busy_poll),
		.doc = "Poll the completion queues in a loop instead of "
		"sleeping on completion events: lower latency, one CPU kept "
		"busy." },
	[GK_FILE_MODE] = { MODE("file_mode", file_mode), .def = 0600,
		.doc = "Permissions of channel files; status files get only "
		"its read bits. Files belong to the user that runs `ibfs`, or "
		"to `-o uid=` and `gid=`; the kernel checks these modes "
		"(`default_permissions`). With `-o allow_other,gid=`*GROUP*, "
		"0660 here and 0770 in `dir_mode` let that group in "
		"(`ibfs`(8), ALLOWING OTHER USERS)." },
	[GK_DIR_MODE] = { MODE("dir_mode", dir_mode), .def = 0700,
		.doc = "Permissions of the root and the node directories." },
	[GK_DELIVERY] = { CHOICE("delivery", delivery, delivery_names),
		.def = DELIVERY_DATAGRAM,
		.doc = "Default delivery for every node. `datagram` is plain "
		"UD, where a message may be lost. `reliable` acknowledges "
		"every message: a `write`(2) returns once the message sits in "
		"the peer daemon's channel queue, or fails with `ETIMEDOUT` "
		"(peer silent past `peer_timeout`) or `ENOTCONN` (peer down); "
		"a reader that does not read makes writers wait instead of "
		"losing messages. Both ends must agree: the delivery is "
		"announced at bootstrap and a peer whose delivery differs from "
		"the configuration is refused (its `last_error` and the log "
		"say *it has delivery = X, this node's config says Y*)." },
	[GK_MULTICAST] = { CHOICE("multicast", multicast, mcast_names),
		.def = MCAST_AUTO,
		.doc = "Whether *MOUNT/all/* (it sends one message to every "
		"node, through the group) joins `mcast_group`. `auto` joins, "
		"and sends one unicast copy per peer instead when the join "
		"fails; `yes` joins or refuses to start; `no` never joins and "
		"sends unicast copies." },
	/* the group fills three fields, so it gets the whole config */
	[GK_MCAST_GROUP] = { .name = "mcast_group",
		.parse = key_address, .size = sizeof(struct config),
		.arg = "*ADDRESS*",
		.def_doc = "`239.192.`*X*`.`*Y* (RFC 2365 organisation-local "
		"scope), where *X*.*Y* is FNV-1a over the four bytes of "
		"`qkey` (big-endian), its high 16 bits XOR its low 16 bits: "
		"nodes that share a qkey share a group; `239.192.49.242` for "
		"the default qkey",
		.doc = "The multicast group, the same on every node: a numeric "
		"IPv4 group (224.0.0.0/4) or IPv6 group (ff00::/8, without a "
		"%*scope*); host names are refused. On RoCE only an IPv4 group "
		"can be joined." },
	[GK_BOOTSTRAP] = { CHOICE("bootstrap", bootstrap, bootstrap_names),
		.def = BOOTSTRAP_TCP,
		.doc = "How nodes learn each other's QPN, qkey, LID, GID and "
		"MTU (not to be confused with a node's `bootstrap` endpoint, "
		"below). `tcp`: over a TCP session to the peer's endpoint, "
		"met on demand. `multicast`: no TCP at all; every node "
		"announces itself on `mcast_group` a few times at start (and "
		"when its address changes), then never again. A node heard "
		"is remembered, and resolved and probed only once a write "
		"wants it; a write to a node never heard asks the group for "
		"it, and it answers by unicast (given up after `peer_timeout`: "
		"*last_error* no answer on mcast_group to our query). A peer "
		"in use is down when its probe fails, and one heard with a "
		"new boot id or QPN (a restart) is met again at its new "
		"address. The announce must "
		"come from the QP and GID it names, or it is dropped "
		"(`drop_ann_refused`). With a `secret`, no node is "
		"trusted until a challenge and response with the TCP "
		"handshake's HMAC has gone both ways over UD datagrams. Needs "
		"the group: `multicast = no` is refused, and a group that "
		"cannot be joined stops the daemon (exit 1). `idle_timeout` "
		"does not apply." },
	[GK_ANNOUNCE_INTERVAL] = { MS("announce_interval",
				      announce_interval_ms, 10, DAY_MS),
		.def = 3000,
		.def_doc = "3s, or a third of `peer_timeout` when that is "
		"shorter",
		.doc = "With `bootstrap = multicast`: the span of a node's "
		"start-up announces. It announces itself three times, at "
		"start, about a third of the interval later and about the "
		"interval later (each gap with \u00b150% jitter so that nodes "
		"started together drift apart), and again so when its address "
		"changes (a device reset), then never: an idle cluster sends "
		"nothing to the group." },
	[GK_SECRET] = { STR("secret", secret, CONFIG_SECRET_MIN, 255),
		.arg = "*STRING*", .def_doc = "none: no authentication",
		.doc = "Shared secret for authenticating nodes at bootstrap "
		"(in practice the line limit applies; a shorter one is "
		"refused, since a recorded proof may be guessed at offline); "
		"it cannot contain \u201c ;\u201d. A config that holds it must "
		"be readable by its owner only: one that group or others may "
		"read or change (any bit of 077 set) is refused with exit "
		"status 2, as a `secret_file` is. When set, every bootstrap "
		"session is a challenge and response with HMAC-SHA256 over "
		"fresh nonces and both hellos: a node that cannot prove the "
		"same secret is refused and logged (`peer `*NAME*`: "
		"authentication failed`), and its datagrams are dropped. "
		"Every node must agree: a node with a secret refuses one "
		"without, and the other way round. The secret never travels; "
		"the qkey is no secret." },
	[GK_SECRET_FILE] = { STR("secret_file", secret_file, 1, 4095),
		.arg = "*PATH*", .def_doc = "none",
		.doc = "File holding the shared secret; an absolute path. It "
		"is read once at start-up; one trailing newline is stripped, "
		"and the rest must be as long as a `secret` is, without a "
		"NUL. A relative path is refused. A file that group or others "
		"may read (any bit of 077 set) is refused: `ibfs` says so and "
		"exits with status 2 before mounting. Only one of `secret` "
		"and `secret_file` may be set." },
	[GK_CA] = { STR("ca", ca, 1, 4095), .arg = "*PATH*",
		.def_doc = "none: a node is who it says it is if it holds "
		"the `secret`",
		.doc = "PEM file of the cluster CA certificate(s), an absolute "
		"path; several may be listed, so that a CA can be rotated. "
		"When set, `cert` and `key` must be too, and a peer is met "
		"only when the certificate it sends is signed by one of them, "
		"is valid now, is not revoked (`crl`), names the node it says "
		"it is (its subjectAltName DNS name, or its CN when it has "
		"none), and it signs the handshake (both nonces, both boot "
		"ids, its QPN, GID and LID) with that certificate's key. A "
		"refusal is logged once per cause and kept as the peer's "
		"`last_error` (`peer `*NAME*`: authentication failed: "
		"certificate names gamma, not beta`). With a `secret` too, "
		"both must hold. Under `bootstrap = multicast` the certificate "
		"and signature ride in the challenge and response that "
		"meets a node, in one datagram: the port's MTU must "
		"take the certificate (1024 bytes take an Ed25519 or P-256 "
		"one; `ibfs` says so at start and exits otherwise). SIGHUP "
		"reads "
		"`ca`, `cert`, `key` and `crl` again; *docs/certificates.md* "
		"gives the `openssl` commands." },
	[GK_CERT] = { STR("cert", cert, 1, 4095), .arg = "*PATH*",
		.def_doc = "none",
		.doc = "PEM file of this node's certificate (Ed25519 or ECDSA "
		"P-256), signed by a CA in `ca`; an absolute path, in which "
		"`%n` stands for the node's name (`/etc/ibfs/%n.pem`). "
		"`ibfs` checks it at start as a peer would, and exits with "
		"status 2 when it is not good; `ibfs -t` says how many days "
		"it has left." },
	[GK_KEY] = { STR("key", key, 1, 4095), .arg = "*PATH*",
		.def_doc = "none",
		.doc = "PEM file of this node's private key, without a "
		"passphrase; an absolute path, `%n` allowed. A file that "
		"group or others may read (any bit of 077 set), or a symbolic "
		"link, is refused with exit status 2, as a `secret_file` is." },
	[GK_CRL] = { STR("crl", crl, 1, 4095), .arg = "*PATH*",
		.def_doc = "none: no certificate is taken as revoked",
		.doc = "PEM file of the CA's revocation lists, an absolute "
		"path. Each CA in `ca` needs its CRL here, and a CRL past its "
		"next update refuses every certificate of its CA: make a new "
		"one before then (`openssl ca -gencrl`)." },
	[GK_STRICT_SOURCE] = { BOOL("strict_source", strict_source), .def = 1,
		.doc = "Whether a bootstrap session may speak for node *NAME* "
		"only from an address the config gives *NAME*: its `addr` or "
		"the host of its `bootstrap` (host names are looked up when "
		"the hello comes); on RoCE, the GID its hello announces must "
		"be an address of *NAME*'s too, or the session's source. A "
		"hello as *NAME* from any other address "
		"is refused before *NAME*'s state is touched, and logged "
		"(`bootstrap: `*ADDR*` said hello as `*NAME*`, which is not at "
		"that address`). Set `no` when nodes dial from addresses the "
		"config does not name: behind NAT, or on multi-homed hosts "
		"whose route to a peer leaves from another address." },
	[GK_PKEY] = { KEY("pkey", key_pkey, pkey, 1, 0xffff, NULL, UNIT_NUM),
		.def = -1, .arg = "*P_KEY*",
		.def_doc = "the entry at index 0 of the port's P_Key table "
		"(0xffff, the default partition, on rxe and most fabrics)",
		.doc = "The InfiniBand partition of the UD queue pair, as a "
		"P_Key value with its full-membership bit (the low 15 bits "
		"not all 0), as perftest's `--pkey_index` but by value: it is "
		"looked up in the port's P_Key table at start, and a `gid:` "
		"addr's path query is made in it. A P_Key that is not in the "
		"table stops `ibfs` with status 1 (`pkey 0x8001 is not in the "
		"P_Key table of mlx5_0 port 1`); ask the subnet manager's "
		"admin to add the port to that partition. Every node must use "
		"the same partition. An IP `addr` on InfiniBand is resolved, "
		"and the `all/` group joined, by rdma_cm in the partition of "
		"the IPoIB interface that holds it: give each node the "
		"address of the IPoIB interface of the same partition (such "
		"as ib0.8001 for 0x8001)." },
	[GK_SL] = { NUM("sl", sl, 0, 15), .def = -1,
		.def_doc = "the route's: the SA path record's with "
		"`route = sa`, 0 with `route = gid`",
		.doc = "The InfiniBand service level of every address handle, "
		"as perftest's `--sl`. A value set here wins over the path "
		"record's, so use one the subnet manager's QoS policy allows. "
		"RoCE carries no SL: rdma_rxe ignores it; a RoCE NIC maps it "
		"to the VLAN priority only on a VLAN." },
	[GK_TRAFFIC_CLASS] = { NUM("traffic_class", traffic_class, 0, 255),
		.def = -1, .def_doc = "the route's, as for `sl`",
		.doc = "The GRH traffic class of every address handle, unicast "
		"and the `all/` group, as perftest's `--tclass`; a value set "
		"here wins over the path record's. On RoCE v2 it is the IP TOS "
		"byte (DSCP shifted left by 2, plus ECN): 0xb8 is DSCP 46. On "
		"InfiniBand only a path with a GRH carries one. "
		"*MOUNT/.status* shows what the queue pair uses: `pkey`, "
		"`pkey_index`, `sl` and `traffic_class` (a number, or `path` "
		"when unset with `route = sa`)." },
};

/* addr and bootstrap fill several fields, so they get the whole node. */
const struct config_key config_nkeys[NK_MAX] = {
	[NK_ADDR] = { .name = "addr", .parse = key_address,
		.size = sizeof(struct config_node), .arg = "*ADDRESS*",
		.def_doc = "none (required)",
		.doc = "The address of the node's RDMA port: an IPv4 address "
		"(`10.0.2.15`), an IPv6 address (`fd00::2`, `fe80::1%eth0`), "
		"a host name (`cn001-ib`, or `%n-ib` for every node of a "
		"section; see HOST NAMES), or a GID as `gid:` followed by IPv6 "
		"notation (`gid:fe80::2:c903:a:b`, used as an rdma_cm AF_IB "
		"address with the default P_Key). On InfiniBand this is the "
		"IPoIB address; on RoCE the address of the device's netdev." },
	[NK_BOOTSTRAP] = { .name = "bootstrap", .parse = key_address,
		.size = sizeof(struct config_node),
		.arg = "*HOST*[`:`*PORT*]",
		.def_doc = "the `addr` and port "
		STR_OF(CONFIG_DEFAULT_BOOTSTRAP_PORT),
		.doc = "TCP endpoint where the node's daemon listens for "
		"bootstrap: *HOST*, *HOST*:*PORT* or [*IPV6*]:*PORT*. *HOST* "
		"is an IPv4 address or a host name (only a numeric address "
		"goes in brackets); *PORT* is 1..65535. The default port was "
		"18515, the default of perftest and of `ibv_ud_pingpong`(1), "
		"which then could not run next to ibfs; a cluster that relied "
		"on it writes `bootstrap = `*ADDR*`:18515` in its nodes. "
		"Required when `addr` is a GID. No two nodes may share an "
		"endpoint: several nodes on one host need distinct ports. Two "
		"host names are compared as written (case aside); a name and "
		"a number are not compared, as that would take a lookup." },
	[NK_DELIVERY] = { .name = "delivery", .parse = key_choice,
		.off = offsetof(struct config_node, delivery),
		.size = sizeof(enum config_delivery),
		.choices = delivery_names,
		.def_doc = "the `[global]` `delivery`",
		.doc = "This node's delivery, overriding `[global]`." },
};
/* clang-format on */

/* The defaults of config.h's [global] fields, from the rows above. */
void config_keys_default(struct config *cfg)
{
	const struct config_key *k;

	for (k = config_gkeys; k < config_gkeys + GK_MAX; k++)
		if (k->size == sizeof(uint32_t) || k->size == sizeof(uint64_t))
			key_store((char *)cfg + k->off, k->size,
				  (uint64_t)k->def);
}
