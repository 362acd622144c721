/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The config parser's insides, shared by its files and by nothing else
 * (config.h is the public API):
 *
 *   config.c       the entry points: files, the secret file, the local node
 *   config_ini.c   the INI reader: lines, [sections], key lookup, the
 *                  checks across keys, the file:line error messages, and
 *                  the index of nodes by name
 *   config_keys.c  the key tables and the typed value parsers
 *   config_addr.c  node addresses: addr, bootstrap, and their resolvers
 *   config_num.c   numbers and sizes as people write them
 */
#ifndef IBFS_CONFIG_PARSE_H
#define IBFS_CONFIG_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "config.h"

#define KiB 1024ull
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

/* A value after %n is replaced, and a [node ...] header as written. */
#define CONFIG_LINE_MAX 512

/* Indices into config_gkeys[]: cross-checks need to know where a key was.
 * A new key is this line, its config.h field and its row in config_keys.c;
 * its default and its ibfs.conf(5) entry come from the row (CONTRIBUTING). */
enum config_gkey {
	GK_DEVICE,
	GK_PORT,
	GK_GID_INDEX,
	GK_ROUTE,
	GK_RECV_DEPTH,
	GK_SEND_DEPTH,
	GK_MAX_MESSAGE,
	GK_QUEUE_LIMIT,
	GK_MAX_CHANNELS,
	GK_MEMORY_LIMIT,
	GK_QKEY,
	GK_READ_TIMEOUT,
	GK_REASSEMBLY_TIMEOUT,
	GK_PEER_TIMEOUT,
	GK_IDLE_TIMEOUT,
	GK_BUSY_POLL,
	GK_FILE_MODE,
	GK_DIR_MODE,
	GK_DELIVERY,
	GK_MULTICAST,
	GK_MCAST_GROUP,
	GK_BOOTSTRAP,
	GK_ANNOUNCE_INTERVAL,
	GK_SECRET,
	GK_SECRET_FILE,
	GK_CA,
	GK_CERT,
	GK_KEY,
	GK_CRL,
	GK_STRICT_SOURCE,
	GK_PKEY,
	GK_SL,
	GK_TRAFFIC_CLASS,
	GK_MAX
};

/* Indices into config_nkeys[], the keys of a [node NAME] section. */
enum config_nkey { NK_ADDR, NK_BOOTSTRAP, NK_DELIVERY, NK_MAX };

/* How a number key's value is written: which scanner, which message. */
enum config_unit { UNIT_NONE, UNIT_NUM, UNIT_SIZE, UNIT_MS, UNIT_MODE };

/* One parse in progress (config_ini.c); parsers only report through it. */
struct config_parse;
struct config_key;

/* Parse val into the field at dst; 0, or the error config_ini_bad gave. */
typedef int (*config_key_parser)(struct config_parse *p,
				 const struct config_key *k, const char *val,
				 void *dst);

/*
 * One key: where its value goes, what it may be, its default, and its
 * entry in ibfs.conf(5), which tests/tools/docnames.c writes from this
 * row (make man).  In doc, arg and def_doc `x` is bold and *x* italic.
 */
struct config_key {
	const char *name;
	config_key_parser parse;
	size_t off;	   /* of the field in struct config / config_node */
	size_t size;	   /* of that field */
	uint64_t min, max; /* value range, or length range for strings */
	const char *const *choices; /* for enumerations: index = value */
	enum config_unit unit;	    /* for numbers */
	/* the default, stored as the parser would store a value; applied
	 * to 4- and 8-byte fields (config_keys_default), strings start "" */
	int64_t def;
	const char *def_doc; /* the default in words, when def is not it */
	const char *arg;     /* the value in the page's tag; NULL: the unit's */
	const char *doc;     /* the page's paragraph */
};

/* The [global] keys, in enum config_gkey order; the [node NAME] keys. */
extern const struct config_key config_gkeys[GK_MAX];
extern const struct config_key config_nkeys[NK_MAX];

/* Every [global] key's default into cfg (zeroed already). */
void config_keys_default(struct config *cfg);

/*
 * Parse text into cfg, which is defaulted and named already; on error
 * -EINVAL (-ENOMEM) with "name:line: what" in err, and cfg half-parsed:
 * the caller wipes it (config_free).
 */
int config_ini_parse(const char *text, const char *name, struct config *cfg,
		     char *err, size_t errlen);

/* s[0..len) kept with its NUL in the config's string blocks, for the
 * life of the config; NULL (out of memory, reported) on failure. */
const char *config_ini_str(struct config_parse *p, const char *s, size_t len);

/* Free the config's string blocks (config_free). */
void config_ini_free_strs(struct config *cfg);

/* v with each "%n" replaced by node, into buf; -1 if too long. */
int config_ini_subst(const char *v, const char *node, char *buf, size_t len);

/* A bad value of key k on the current line: "k: why"; returns the error. */
int config_ini_bad(struct config_parse *p, const struct config_key *k,
		   const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * The address keys' values (config_addr.c), checked and stored, or
 * -EINVAL with why, which config_keys.c's parsers report at the line:
 * addr = IP, host name or gid:GID, into node n; bootstrap = HOST,
 * HOST:PORT or [IPV6]:PORT, into node n; mcast_group = ADDR, a numeric
 * IPv4 or IPv6 multicast group, into cfg.
 */
int config_addr_set_addr(struct config_node *n, const char *val, char *why,
			 size_t whylen);
int config_addr_set_bootstrap(struct config_node *n, const char *val,
			      char host[CONFIG_HOST_MAX + 1],
			      union config_sa *sa, char *why, size_t whylen);
int config_addr_set_mcast(struct config *cfg, const char *val, char *why,
			  size_t whylen);

/* No mcast_group: cfg->qkey's group, 239.192.X.Y (see ibfs.conf(5)). */
void config_addr_mcast_default(struct config *cfg);

/* A hash of n's bootstrap endpoint: equal for endpoints that
 * config_addr_same_bootstrap takes as one. */
uint32_t config_addr_bootstrap_hash(const struct config_node *n);

/* A node without bootstrap: its addr, with the default port. */
void config_addr_default_bootstrap(struct config_node *n);

/* Whether n's bootstrap sockaddr sa is its addr at bootstrap_port (1), so
 * that n keeps no bootstrap sockaddr of its own. */
int config_addr_bootstrap_is_addr(const struct config_node *n,
				  const union config_sa *sa);

/* The bootstrap key's sockaddr of node n, kept by the parser until the
 * node's end (ini_finish_node), which stores it only where it is not
 * the addr's.  0 or -ENOMEM. */
int config_ini_bootstrap_sa(struct config_parse *p, struct config_node *n,
			    const union config_sa *sa);

/* Whether two nodes' bootstrap endpoints are one (family, address, port). */
int config_addr_same_bootstrap(const struct config_node *na,
			       const struct config_node *nb);

/* Past blanks: units may follow a number after them ("1 MiB"). */
const char *config_num_skip_blanks(const char *s);

/*
 * A number that starts with a digit (0x... too with hex): 0, -EINVAL, or
 * -ERANGE when it does not fit; *end is where it stopped.
 */
int config_num_scan(const char *s, int hex, uint64_t *v, const char **end);

/* v in the unit it was probably written in: "64k", "1M", "100". */
const char *config_num_fmt_size(uint64_t v, char *buf, size_t len);

#endif
