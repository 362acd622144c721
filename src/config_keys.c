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
	char why[CONFIG_ERR_MAX];
	int rc;

	if (k == &config_gkeys[GK_MCAST_GROUP])
		rc = config_addr_set_mcast(dst, val, why, sizeof(why));
	else if (k == &config_nkeys[NK_BOOTSTRAP])
		rc = config_addr_set_bootstrap(dst, val, why, sizeof(why));
	else
		rc = config_addr_set_addr(dst, val, why, sizeof(why));
	return rc ? config_ini_bad(p, k, "%s", why) : 0;
}

/* clang-format off */
#define KEY(n, fn, field, lo, hi, ch, unit)				\
	{ n, fn, offsetof(struct config, field),			\
	  sizeof(((struct config *)0)->field), lo, hi, ch, unit }
#define NUM(n, field, lo, hi)	KEY(n, key_number, field, lo, hi, NULL, UNIT_NUM)
#define SIZE(n, field, lo, hi)	KEY(n, key_number, field, lo, hi, NULL, UNIT_SIZE)
#define MS(n, field, lo, hi)	KEY(n, key_number, field, lo, hi, NULL, UNIT_MS)
#define MODE(n, field)		KEY(n, key_number, field, 0, 0777, NULL, UNIT_MODE)
#define STR(n, field, lo, hi)	KEY(n, key_str, field, lo, hi, NULL, UNIT_NONE)
#define CHOICE(n, field, ch)	KEY(n, key_choice, field, 0, 0, ch, UNIT_NONE)
#define BOOL(n, field)		KEY(n, key_bool, field, 0, 1, NULL, UNIT_NONE)

const struct config_key config_gkeys[GK_MAX] = {
	[GK_DEVICE] =		STR("device", device, 1, 63),
	[GK_PORT] =		NUM("port", port, 1, 255),
	[GK_GID_INDEX] =	KEY("gid_index", key_gid_index, gid_index,
				    0, 255, NULL, UNIT_NUM),
	[GK_ROUTE] =		CHOICE("route", route, route_names),
	[GK_RECV_DEPTH] =	NUM("recv_depth", recv_depth, 16, 65536),
	[GK_SEND_DEPTH] =	NUM("send_depth", send_depth, 16, 65536),
	[GK_MAX_MESSAGE] =	SIZE("max_message", max_message, 1, 64 * MiB),
	[GK_QUEUE_LIMIT] =	SIZE("queue_limit", queue_limit, 1, 1024 * GiB),
	[GK_MAX_CHANNELS] =	NUM("max_channels", max_channels, 1, 1000000),
	[GK_MEMORY_LIMIT] =	SIZE("memory_limit", memory_limit, 64 * KiB,
				     16384 * GiB),
	[GK_QKEY] =		NUM("qkey", qkey, 0, UINT32_MAX),
	[GK_READ_TIMEOUT] =	MS("read_timeout", read_timeout_ms, 0, DAY_MS),
	[GK_REASSEMBLY_TIMEOUT] = MS("reassembly_timeout",
				     reassembly_timeout_ms, 1, DAY_MS),
	[GK_PEER_TIMEOUT] =	MS("peer_timeout", peer_timeout_ms, 1, DAY_MS),
	[GK_IDLE_TIMEOUT] =	MS("idle_timeout", idle_timeout_ms, 0, DAY_MS),
	[GK_BUSY_POLL] =	BOOL("busy_poll", busy_poll),
	[GK_FILE_MODE] =	MODE("file_mode", file_mode),
	[GK_DIR_MODE] =		MODE("dir_mode", dir_mode),
	[GK_DELIVERY] =		CHOICE("delivery", delivery, delivery_names),
	[GK_MULTICAST] =	CHOICE("multicast", multicast, mcast_names),
	/* the group fills three fields, so it gets the whole config */
	[GK_MCAST_GROUP] =	{ "mcast_group", key_address, 0,
				  sizeof(struct config), 0, 0, NULL,
				  UNIT_NONE },
	[GK_BOOTSTRAP] =	CHOICE("bootstrap", bootstrap, bootstrap_names),
	[GK_ANNOUNCE_INTERVAL] = MS("announce_interval", announce_interval_ms,
				    10, DAY_MS),
	[GK_SECRET] =		STR("secret", secret, CONFIG_SECRET_MIN, 255),
	[GK_SECRET_FILE] =	STR("secret_file", secret_file, 1, 4095),
	[GK_STRICT_SOURCE] =	BOOL("strict_source", strict_source),
	[GK_PKEY] =		KEY("pkey", key_pkey, pkey, 1, 0xffff, NULL,
				    UNIT_NUM),
	[GK_SL] =		NUM("sl", sl, 0, 15),
	[GK_TRAFFIC_CLASS] =	NUM("traffic_class", traffic_class, 0, 255),
};

/* addr and bootstrap fill several fields, so they get the whole node. */
const struct config_key config_nkeys[NK_MAX] = {
	[NK_ADDR] = { "addr", key_address, 0,
		      sizeof(struct config_node), 0, 0, NULL, UNIT_NONE },
	[NK_BOOTSTRAP] = { "bootstrap", key_address, 0,
			   sizeof(struct config_node), 0, 0, NULL, UNIT_NONE },
	[NK_DELIVERY] = { "delivery", key_choice,
			  offsetof(struct config_node, delivery),
			  sizeof(enum config_delivery), 0, 0, delivery_names,
			  UNIT_NONE },
};
/* clang-format on */
