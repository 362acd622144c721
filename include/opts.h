/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The command line: ibfs's own options, each long one taking its value
 * after '=' or as the next word, the mount options that are ibfs's own
 * (uid=, gid=, ibfs_debug) taken out of -o, and the rest handed on to
 * libfuse, checked by a session that libfuse makes and drops at once, so
 * that every usage error shows before the device or a socket is touched.
 * Main thread only, before anything else runs.
 */
#ifndef IBFS_OPTS_H
#define IBFS_OPTS_H

#include <stddef.h>
#include <sys/types.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

struct opts {
	char *config;  /* -c, --config */
	char *node;    /* -n, --node */
	char *device;  /* --device */
	int port;      /* -i, --port; -1: the config's */
	int gid_index; /* -g, --gid-index; -1: the config's */
	int help;      /* -h, --help */
	int version;   /* -V, --version */
	int test;      /* -t, --test: check the config, print its nodes */
	int verbose;   /* each -v, and -o ibfs_debug, one more */
	int uid_set;   /* -o uid= given */
	uid_t uid;     /* owner of every file and directory */
	int gid_set;   /* -o gid= given */
	gid_t gid;     /* their group */
	/* argv[0], -f, -d, what is left of -o, the mount point: libfuse's */
	struct fuse_args fuse;
};

/*
 * Parse argv into o; 0, or -EINVAL with a one-line reason in err.  With
 * -t, --device, --port and --gid-index are refused: only the device could
 * check them.
 */
int opts_parse(struct opts *o, int argc, char *argv[], char *err,
	       size_t errlen);
/*
 * libfuse's part: fuse_parse_cmdline into fo (the mount point, -f, -d),
 * then extra (a -o of options of ours) and -odebug for -d added, and all
 * of it tried on a session made and dropped at once.  0, or -errno with
 * one line, what libfuse said, in err.  With -t, fo->mountpoint may be
 * NULL: the options are checked all the same.
 */
int opts_fuse(struct opts *o, struct fuse_cmdline_opts *fo, const char *extra,
	      char *err, size_t errlen);
/* Free what opts_parse allocated; o may be parsed or failed. */
void opts_free(struct opts *o);

#endif
