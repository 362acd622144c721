/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Configuration: the INI file every node of a cluster shares, parsed with
 * inih.  [global] holds device and tuning keys, each [node NAME] one node.
 * Every error names file and line; nothing half-parsed is ever returned.
 */
#ifndef IBFS_CONFIG_H
#define IBFS_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <infiniband/ib.h>

#include "util.h"

#define CONFIG_NAME_MAX                                                        \
	(UTIL_NAME_MAX + 1) /* node and channel names, NUL included */
/*
 * ibfs's own bootstrap port: not 18515 and up (ibv_*_pingpong's and
 * perftest's), 4791 (RoCE v2), 4420 (NVMe-oF), 3260 (iSCSI, iSER),
 * 5001/5201 (iperf), and below Linux's ephemeral ports (32768 up).
 */
#define CONFIG_DEFAULT_BOOTSTRAP_PORT 17515
#define CONFIG_MAX_NODES	      65536 /* nodes one config may name */
#define CONFIG_ERR_MAX		      512
/* A shared secret's least length: 16 random bytes do not yield to offline
 * guessing from a recorded proof (SECURITY.md). */
#define CONFIG_SECRET_MIN 16

/* MOUNT/all/ sends to every node (issue 19): no node may take its name. */
#define CONFIG_NAME_ALL "all"

enum config_route {
	ROUTE_SA,  /* rdma_cm route resolution -> path record -> AH */
	ROUTE_GID, /* AH straight from the exchanged LID/GID */
};

enum config_delivery {
	DELIVERY_DATAGRAM,
	DELIVERY_RELIABLE,
};

/* [global] multicast: whether MOUNT/all/ joins the group (issue 19). */
enum config_mcast {
	MCAST_AUTO, /* join; when that fails, one unicast copy per peer */
	MCAST_YES,  /* join, or refuse to start */
	MCAST_NO,   /* never join: unicast copies */
};

/* [global] bootstrap: how nodes learn each other's address (issue 19). */
enum config_bootstrap {
	BOOTSTRAP_TCP,	     /* sessions to each node's bootstrap endpoint */
	BOOTSTRAP_MULTICAST, /* announces on the group: announce.h */
};

/*
 * A node's address as a number: IPv4, IPv6 or AF_IB (a GID), with
 * ss_family AF_UNSPEC for a host name.  48 bytes where a sockaddr_storage
 * takes 128: a config holds two per node.
 */
union config_sa {
	sa_family_t ss_family; /* every sockaddr's first field */
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
	struct sockaddr_ib ib;
};

/* Longest addr, and bootstrap host, as written (without its NUL). */
#define CONFIG_HOST_MAX 127

/*
 * One configured node; a 10,000-node config holds 10,000 of these, so it
 * stays small (96 bytes, its strings apart) and loading one does no name
 * lookup: a host name is kept as written with its sockaddr AF_UNSPEC, and
 * resolved by config_node_addr / config_node_bootstrap when it is needed.
 * Its strings, and a bootstrap sockaddr of its own, lie in the config's
 * string blocks (config_free frees them).
 */
struct config_node {
	const char *name;
	const char *addr; /* as written: IPv4, IPv6, a name or a GID */
	/* as written, without the port; addr itself when defaulted */
	const char *bootstrap_host;
	int line;		  /* line of its [node …] header */
	uint16_t addr_dline;	  /* line of its addr key, minus line */
	uint16_t bootstrap_dline; /* ... of bootstrap (addr's if defaulted) */
	uint16_t bootstrap_port;  /* CONFIG_DEFAULT_BOOTSTRAP_PORT */
	uint8_t addr_len;	  /* of addr_sa; 0 for a host name */
	uint8_t bootstrap_len;	  /* of bootstrap_sa; 0 for a host name */
	enum config_delivery delivery; /* [global] value unless overridden */
	/* AF_INET, AF_INET6 or AF_IB; AF_UNSPEC when addr is a host name */
	union config_sa addr_sa;
	/* the bootstrap endpoint's sockaddr, numeric with its port (or
	 * AF_UNSPEC for a name), when its host is not addr's; NULL when it
	 * is (the common case: addr_sa at bootstrap_port).  Read it through
	 * config_node_bootstrap_sa. */
	union config_sa *bootstrap_own;
};

/* Node n's bootstrap endpoint as a sockaddr, into out: numeric with its
 * port, or AF_UNSPEC for a host name. */
void config_node_bootstrap_sa(const struct config_node *n,
			      union config_sa *out);

struct config_strblk;

struct config {
	char path[4096];

	/* [global]: each key's default, range and meaning are its row in
	 * config_keys.c (ibfs.conf(5) is made from it) */
	char device[64]; /* "": the first device with an ACTIVE port */
	int port;
	int gid_index; /* -1: auto */
	enum config_route route;
	uint32_t recv_depth;
	uint32_t send_depth;
	uint64_t max_message;
	uint64_t queue_limit;  /* bytes queued per channel */
	uint32_t max_channels; /* channels a peer may create */
	uint64_t memory_limit; /* all queues together */
	uint32_t qkey;
	int read_timeout_ms; /* 0: wait for ever */
	int reassembly_timeout_ms;
	int peer_timeout_ms;
	int idle_timeout_ms; /* 0: sessions never idle out */
	int busy_poll;	     /* 0: event-driven completions */
	mode_t file_mode;
	mode_t dir_mode;
	uid_t uid; /* every file's owner: -o uid=, or ours */
	gid_t gid; /* and group: -o gid=, or ours */
	enum config_delivery delivery;
	enum config_mcast multicast;
	/* mcast_group as written, or the default derived from the qkey
	 * (config_load fills both); mcast_sa is its numeric sockaddr */
	char mcast_group[64];
	struct sockaddr_storage mcast_sa;
	socklen_t mcast_len;
	enum config_bootstrap bootstrap;
	int announce_interval_ms; /* bootstrap = multicast only */
	char secret[256];	  /* "": no authentication */
	char secret_file[4096];	  /* an absolute path, or "" */
	int secret_line; /* of the secret or secret_file key, for messages */
	/* Node certificates (cert.h), absolute paths as written, "" unset;
	 * cert and key may hold %n (config_cert_files expands it) */
	char ca[4096];
	char cert[4096];
	char key[4096];
	char crl[4096];
	/* each one's line, in the order of struct cert_files, for messages */
	int cert_lines[4];
	/* 1: a bootstrap session speaks for a node only from an address the
	 * config gives it (addr or bootstrap host); 0 for NAT, multi-homed */
	int strict_source;
	/* the fabric's settings, perftest's --pkey_index, --sl, --tclass;
	 * -1 = unset: the P_Key at index 0 of the port's table, and the sl
	 * and traffic class the route gives (SA path record, or 0) */
	int pkey; /* a P_Key value, looked up in the port's table */
	int sl;
	int traffic_class; /* on RoCE v2 the IP TOS byte */

	struct config_node *nodes;
	int nnodes;
	int local; /* index of this node, -1 until chosen */
	/* nodes by name (config_node_index): open addressing, -1 empty,
	 * index_mask + 1 slots, at least twice nnodes */
	int *index;
	uint32_t index_mask;
	/* the nodes' strings, in blocks that never move (config_ini.c) */
	struct config_strblk *strs;
};

/*
 * Parse path into cfg (zeroed and defaulted first).  On error return
 * -EINVAL (or -errno for I/O) and write "path:line: what" into err.
 */
int config_load(const char *path, struct config *cfg, char *err, size_t errlen);

/* Same, from a string; name stands for the file name in messages. */
int config_load_string(const char *text, const char *name, struct config *cfg,
		       char *err, size_t errlen);

/*
 * Choose the local node: name, or the host name when name is NULL.
 * -ENOENT with a message when no node matches.
 */
int config_select_local(struct config *cfg, const char *name, char *err,
			size_t errlen);

/* The certificate files as the local node reads them: %n in cert and
 * key expanded to its name; "" where unset. */
struct config_cert_paths {
	char ca[4096];
	char cert[4096];
	char key[4096];
	char crl[4096];
};

/* Fill out for cfg->local (chosen): 0, or -ENAMETOOLONG with
 * "FILE:LINE: cert: 'x' is too long once %n is expanded" in err. */
int config_cert_paths(const struct config *cfg, struct config_cert_paths *out,
		      char *err, size_t errlen);

/* Index of the node called name, or -1.  A hash lookup: the bootstrap
 * does one for every hello. */
int config_node_index(const struct config *cfg, const char *name);

/*
 * Node n's addr as a sockaddr for rdma_cm: a copy when numeric, else
 * looked up now (getaddrinfo; IPv4 first, then IPv6).  -EHOSTUNREACH
 * with "NAME: why" in err when it does not resolve.  Blocks: the
 * bootstrap thread, or the main thread at start and in -t.
 */
int config_node_addr(const struct config_node *n, struct sockaddr_storage *ss,
		     socklen_t *len, char *err, size_t errlen);

/* Node n's bootstrap endpoint, port filled in, as config_node_addr. */
int config_node_bootstrap(const struct config_node *n,
			  struct sockaddr_storage *ss, socklen_t *len,
			  char *err, size_t errlen);

/*
 * Node i's addr (or bootstrap endpoint) as config_node_addr (or
 * config_node_bootstrap) gives it, the failure in config words:
 * "FILE:LINE: node NAME: addr 'x' does not resolve: why".  Blocks: the
 * main thread, at start and in -t.
 */
int config_resolve_addr(const struct config *cfg, int i,
			struct sockaddr_storage *ss, socklen_t *len, char *err,
			size_t errlen);
int config_resolve_bootstrap(const struct config *cfg, int i,
			     struct sockaddr_storage *ss, socklen_t *len,
			     char *err, size_t errlen);

/* The line of node n's addr key (bootstrap: of its bootstrap key). */
int config_node_line(const struct config_node *n, int bootstrap);

/* "FILE:LINE: node NAME: addr 'x' does not resolve: why" into err, for
 * node i's addr (bootstrap: its bootstrap host). */
void config_resolve_msg(const struct config *cfg, int i, int bootstrap,
			const char *why, char *err, size_t errlen);

/* Look-ups ibfs -t has in flight at once (config_lookup_all). */
#define CONFIG_LOOKUPS_INFLIGHT 16

/* A node's names as ibfs -t looked them up; a _why is NULL when that name
 * resolved (or is numeric), else the resolver's reason, static text. */
struct config_lookup {
	struct sockaddr_storage addr, bootstrap;
	socklen_t addr_len, bootstrap_len;
	const char *addr_why, *bootstrap_why;
};

/*
 * Every node's addr and bootstrap endpoint into out[cfg->nnodes], as
 * config_node_addr and config_node_bootstrap give them, at most
 * CONFIG_LOOKUPS_INFLIGHT look-ups at once, on threads of its own that
 * are gone when it returns.  Blocks: the main thread, in -t.
 */
void config_lookup_all(const struct config *cfg, struct config_lookup *out);

/*
 * ibfs -t (config_check.c): one row per node on out, every name looked
 * up, then on errs, once out is flushed, each name that does not resolve,
 * FILE:LINE first (many with one reason in one line).  How many nodes
 * have a name that does not resolve, or -ENOMEM.  The main thread.
 */
int config_check(const struct config *cfg, FILE *out, FILE *errs);

struct cert;

/*
 * With ca: the local node's certificate files (%n expanded) opened and
 * checked as a peer would check them (cert_open: readable, the key's
 * mode, the chain, the dates, the name), before anything else is
 * opened.  0 with *out (NULL without ca), or -errno and "FILE:LINE: key
 * /etc/ibfs/beta.key: mode 0644: ..." in err, at the line of the key
 * whose file it is: a config error (exit 2).  config_check.c.
 */
int config_cert_open(const struct config *cfg, struct cert **out, char *err,
		     size_t errlen);

/*
 * ibfs -t's check of the certificates, for the local node: config_cert_open
 * (its error on errs), then the days each certificate has left on out
 * ("cert /etc/ibfs/alpha.pem: CN=alpha: 364 days left, until
 * 2027-12-03", then each CA's).  0, or 1 when they are not good.
 */
int config_check_certs(const struct config *cfg, FILE *out, FILE *errs);

/*
 * Resolve the local node's addr and bootstrap host once, into its addr_sa
 * and bootstrap_sa, so the listener and the GID choice see numbers; the
 * error as config_resolve_addr.  Blocks: the main thread, at start.
 */
int config_resolve_local(struct config *cfg, char *err, size_t errlen);

/* Release what config_load allocated; cfg may be reused afterwards. */
void config_free(struct config *cfg);

/* "64", "4k", "1M", "2G" (powers of 1024) -> bytes; -EINVAL when bad. */
int config_parse_size(const char *s, uint64_t *out);

/* A node or channel name: util.h's rule (util_name_problem). */

#endif
