/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The command line, read with getopt_long so that `--config FILE` and
 * `--config=FILE` are the same (libfuse's fuse_opt takes only one of the
 * two per template), every option is checked here, and an unknown one is
 * a usage error before any device or socket is opened.  What libfuse
 * owns (-f, -d, the -o options left over, the mount point) is rebuilt
 * into o->fuse for fuse_parse_cmdline and fuse_session_new.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

enum { OPT_DEVICE = 256 };

static const struct option opts_long[] = {
	{"config", required_argument, NULL, 'c'},
	{"node", required_argument, NULL, 'n'},
	{"device", required_argument, NULL, OPT_DEVICE},
	{"port", required_argument, NULL, 'i'},
	{"gid-index", required_argument, NULL, 'g'},
	{"verbose", no_argument, NULL, 'v'},
	{"test", no_argument, NULL, 't'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

/* Leading ':': a missing value is told apart from an unknown option. */
#define OPTS_SHORT ":c:n:i:g:o:fdvthV"

/* Our mount options; the rest of -o is libfuse's. */
enum { KEY_IBFS_DEBUG };
struct opts_mount {
	char *uid;
	char *gid;
	int debug;
};
static const struct fuse_opt opts_mount_spec[] = {
	{"uid=%s", offsetof(struct opts_mount, uid), 0},
	{"gid=%s", offsetof(struct opts_mount, gid), 0},
	FUSE_OPT_KEY("ibfs_debug", KEY_IBFS_DEBUG),
	FUSE_OPT_END,
};

/* Write a reason into err; always -EINVAL. */
static int opts_bad(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int opts_bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A whole decimal number in [lo, hi] into *out; -EINVAL otherwise. */
static int opts_num(const char *val, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (!*val || *end || errno || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* --port and --gid-index: a number in [lo, hi]; name is for the error. */
static int opts_int(const char *name, const char *val, long lo, long hi,
		    int *out, char *err, size_t errlen)
{
	long v;

	if (opts_num(val, lo, hi, &v))
		return opts_bad(err, errlen,
				"%s wants a number %ld..%ld, not '%s'", name,
				lo, hi, val);
	*out = (int)v;
	return 0;
}

/* The id of user (or group, when !user) name; -ENOENT when none. */
static int opts_id_of(const char *name, int user, unsigned *id)
{
	struct passwd *pw;
	struct group *gr;

	if (user) {
		pw = getpwnam(name);
		if (pw)
			*id = pw->pw_uid;
		return pw ? 0 : -ENOENT;
	}
	gr = getgrnam(name);
	if (gr)
		*id = gr->gr_gid;
	return gr ? 0 : -ENOENT;
}

/* uid=N|USER or gid=N|GROUP, as chown(1) takes them, into *id. */
static int opts_id(const char *val, int user, unsigned *id, char *err,
		   size_t errlen)
{
	long v;

	if (!opts_num(val, 0, UINT_MAX - 1, &v)) {
		*id = (unsigned)v;
		return 0;
	}
	if (!opts_id_of(val, user, id))
		return 0;
	return opts_bad(err, errlen, "-o %s=%s: no such %s or number",
			user ? "uid" : "gid", val, user ? "user" : "group");
}

/* Keep every option fuse_opt does not know (libfuse's) in the output. */
static int opts_mount_proc(void *data, const char *arg, int key,
			   struct fuse_args *outargs)
{
	struct opts_mount *m = data;

	if (key != KEY_IBFS_DEBUG)
		return 1;
	m->debug = 1;
	return 0;
}

/* Take uid=, gid= and ibfs_debug out of o->fuse's -o options. */
static int opts_mount(struct opts *o, char *err, size_t errlen)
{
	struct opts_mount m = {0};
	unsigned id = 0;
	int rc = 0;

	if (fuse_opt_parse(&o->fuse, &m, opts_mount_spec, opts_mount_proc))
		rc = opts_bad(err, errlen, "cannot parse the -o options");
	if (!rc && m.uid) {
		rc = opts_id(m.uid, 1, &id, err, errlen);
		o->uid = id;
		o->uid_set = !rc;
	}
	if (!rc && m.gid) {
		rc = opts_id(m.gid, 0, &id, err, errlen);
		o->gid = id;
		o->gid_set = !rc;
	}
	o->verbose += m.debug;
	free(m.uid);
	free(m.gid);
	return rc;
}

/* Add one argument to o->fuse; -ENOMEM when it cannot. */
static int opts_add(struct opts *o, const char *arg)
{
	return fuse_opt_add_arg(&o->fuse, arg) ? -ENOMEM : 0;
}

/* Replace a string option's value (the last one given counts). */
static void opts_set(char **dst, const char *val)
{
	free(*dst);
	*dst = strdup(val);
}

/* Explain what getopt refused: c is ':' (no value) or '?' (unknown). */
static int opts_refused(int c, char *argv[], char *err, size_t errlen)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		return opts_bad(err, errlen, "option %s needs a value", arg);
	if (optopt && !strncmp(arg, "--", 2) && strchr(arg, '='))
		return opts_bad(err, errlen, "option %.*s takes no value",
				(int)strcspn(arg, "="), arg);
	if (optopt && strncmp(arg, "--", 2))
		return opts_bad(err, errlen, "unknown option -%c", optopt);
	return opts_bad(err, errlen, "unknown option %s", arg);
}

/* One option getopt returned; 0 or -EINVAL/-ENOMEM. */
static int opts_one(struct opts *o, int c, char *argv[], char *err,
		    size_t errlen)
{
	switch (c) {
	case 'c':
		opts_set(&o->config, optarg);
		return 0;
	case 'n':
		opts_set(&o->node, optarg);
		return 0;
	case OPT_DEVICE:
		opts_set(&o->device, optarg);
		return 0;
	case 'i':
		return opts_int("--port", optarg, 1, 255, &o->port, err,
				errlen);
	case 'g':
		return opts_int("--gid-index", optarg, 0, 255, &o->gid_index,
				err, errlen);
	case 'o':
		return opts_add(o, "-o") ?: opts_add(o, optarg);
	case 'f':
		return opts_add(o, "-f");
	case 'd':
		return opts_add(o, "-d");
	case 'v':
		o->verbose++;
		return 0;
	case 't':
		o->test = 1;
		return 0;
	case 'h':
		o->help = 1;
		return 0;
	case 'V':
		o->version = 1;
		return 0;
	}
	return opts_refused(c, argv, err, errlen);
}

/*
 * -t checks what the daemon checks before it opens the device: the config
 * and the whole command line, -o options and a mount point too (opts_fuse).
 * What only the device can answer, it cannot check: refused, so that a
 * good exit never vouches for it.
 */
static int opts_test(const struct opts *o, char *err, size_t errlen)
{
	const char *opt = o->device	      ? "--device"
			  : o->port >= 0      ? "--port"
			  : o->gid_index >= 0 ? "--gid-index"
					      : NULL;

	if (!o->test || !opt)
		return 0;
	return opts_bad(err, errlen,
			"-t opens no device, so it cannot check %s: drop it",
			opt);
}

/* Every option, then at most one mount point, then our -o options. */
int opts_parse(struct opts *o, int argc, char *argv[], char *err, size_t errlen)
{
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->port = -1;
	o->gid_index = -1;
	if (opts_add(o, argc > 0 ? argv[0] : "ibfs"))
		return -ENOMEM;
	opterr = 0;
	optind = 0; /* glibc: start over, as a second parse in one process */
	while ((c = getopt_long(argc, argv, OPTS_SHORT, opts_long, NULL)) !=
	       -1) {
		rc = opts_one(o, c, argv, err, errlen);
		if (rc)
			return rc;
	}
	if (optind < argc && opts_add(o, argv[optind++]))
		return -ENOMEM;
	if (optind < argc)
		return opts_bad(err, errlen,
				"unexpected argument '%s' after the mount "
				"point",
				argv[optind]);
	return opts_test(o, err, errlen) ?: opts_mount(o, err, errlen);
}

/*
 * Where libfuse's log goes while opts_fuse runs: its first line, which it
 * may write in pieces ("unknown option(s): `", "-o bogus", "'\n").
 */
static struct {
	char *buf;
	size_t len, used;
	int done; /* the line is whole */
} opts_fuse_log_to;

/* A fuse_log_func_t that keeps libfuse's first line, without "fuse: ". */
static void opts_fuse_log(enum fuse_log_level level, const char *fmt,
			  va_list ap)
{
	char *line = opts_fuse_log_to.buf, *nl;
	size_t room = opts_fuse_log_to.len - opts_fuse_log_to.used;
	int n;

	/* -d's "FUSE library version" and the like: the mount says it */
	if (level > FUSE_LOG_WARNING || !line || opts_fuse_log_to.done ||
	    room < 2)
		return;
	n = vsnprintf(line + opts_fuse_log_to.used, room, fmt, ap);
	if (n < 0)
		return;
	opts_fuse_log_to.used += (size_t)n < room ? (size_t)n : room - 1;
	nl = strchr(line, '\n');
	if (nl) {
		*nl = '\0';
		opts_fuse_log_to.done = 1;
	}
	if (!strncmp(line, "fuse: ", 6)) {
		memmove(line, line + 6, strlen(line + 6) + 1);
		opts_fuse_log_to.used = strlen(line);
	}
}

/*
 * Hand a copy of args to fuse_session_new and drop the session at once:
 * it parses every option the mount will (without opening /dev/fuse), so
 * an unknown -o option fails here, before the fabric is up.
 */
static int opts_try_session(const struct fuse_args *args)
{
	static const struct fuse_lowlevel_ops none;
	struct fuse_args copy = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se;
	int i;

	for (i = 0; i < args->argc; i++)
		if (fuse_opt_add_arg(&copy, args->argv[i])) {
			fuse_opt_free_args(&copy);
			return -ENOMEM;
		}
	se = fuse_session_new(&copy, &none, sizeof(none), NULL);
	fuse_opt_free_args(&copy);
	if (!se)
		return -EINVAL;
	fuse_session_destroy(se);
	return 0;
}

/* libfuse's part of the command line, as the mount will see it; -t
 * needs no mount point, but checks one given. */
static int opts_fuse_args(struct opts *o, struct fuse_cmdline_opts *fo,
			  const char *extra)
{
	if (fuse_parse_cmdline(&o->fuse, fo))
		return -EINVAL;
	if (!fo->mountpoint && !o->test)
		return -ENOENT;
	if (fuse_opt_add_arg(&o->fuse, extra) ||
	    (fo->debug && fuse_opt_add_arg(&o->fuse, "-odebug")))
		return -ENOMEM;
	return opts_try_session(&o->fuse);
}

/*
 * fuse_parse_cmdline on o->fuse into fo, then extra (our own -o options)
 * added, -odebug with -d, and the result tried on a throw-away session,
 * with libfuse's log caught: 0, or -errno with one line in err.
 */
int opts_fuse(struct opts *o, struct fuse_cmdline_opts *fo, const char *extra,
	      char *err, size_t errlen)
{
	int rc;

	*err = '\0';
	opts_fuse_log_to.buf = err;
	opts_fuse_log_to.len = errlen;
	opts_fuse_log_to.used = 0;
	opts_fuse_log_to.done = 0;
	fuse_set_log_func(opts_fuse_log);
	rc = opts_fuse_args(o, fo, extra);
	fuse_set_log_func(NULL);
	opts_fuse_log_to.buf = NULL;
	if (rc == -ENOENT)
		return opts_bad(err, errlen, "no mount point given");
	if (rc && !*err)
		return opts_bad(err, errlen, "bad FUSE options: %s",
				strerror(-rc));
	return rc;
}

/* Free what opts_parse allocated. */
void opts_free(struct opts *o)
{
	fuse_opt_free_args(&o->fuse);
	free(o->config);
	free(o->node);
	free(o->device);
}
