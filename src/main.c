/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ibfs: mount an InfiniBand UD fabric as a file system.
 *
 *   ibfs -c CONFIG [-n NODE] [-f] [-v] [-d] [-o OPTS] MOUNTPOINT
 *
 * The command line is read by opts.c, and all of it is checked, with
 * libfuse's mount options, before anything is opened.
 *
 * Start-up runs in order — config, (fork), peers, file tree, the fabric
 * (verbs, resolver, bootstrap: fabric.c), mount — and shutdown undoes it
 * in reverse, except that the fabric's threads stop before the FUSE session
 * goes (main_run says why).  Without -f the parent waits until the child has
 * mounted and exits with the child's verdict, so `ibfs … && echo hi >
 * MNT/beta/chat` works in scripts. Exit status: 0 on success, 2 for bad usage
 * or config, 1 otherwise.  With ca, the node's certificate is checked with
 * the config (exit 2), and SIGHUP reads the certificates again (main_hup).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "cert.h"
#include "config.h"
#include "fabric.h"
#include "fs.h"
#include "log.h"
#include "opts.h"
#include "peer.h"
#include "transport.h"
#include "util.h"

/* IBFS_VERSION: the Makefile passes debian/changelog's version. */
#define EXIT_USAGE 2

/* The daemon: what main builds, in the order it builds it. */
struct ibfs {
	struct opts o; /* o.fuse: the arguments libfuse gets */
	struct fuse_cmdline_opts fo;
	struct config cfg;
	struct peer *peers;
	struct fs *fs;
	struct fabric *fab;
	/* guards fab for SIGHUP's thread, which outlives it: set once open,
	 * cleared before it closes */
	pthread_mutex_t fab_lock;
	int fab_open;	   /* under fab_lock */
	struct cert *cert; /* with ca: ours, and the CA's; else NULL */
	pthread_t hup;	   /* with cert: SIGHUP's thread (main_hup) */
	int hup_started;
	atomic_int hup_stop;
	int ready; /* the readiness pipe to the parent; -1: none */
};

/* The usage text; also the reference for ibfs(8). */
static void main_usage(const char *prog)
{
	printf("usage: %s -c CONFIG [options] MOUNTPOINT\n"
	       "       %s -t -c CONFIG [-n NAME] [-o OPT] [MOUNTPOINT]\n\n"
	       "Expose InfiniBand UD datagrams as files: every node of CONFIG "
	       "is a\ndirectory, every channel a file.  `echo hi > "
	       "MOUNTPOINT/beta/chat` sends\nto beta; on beta, `cat "
	       "MOUNTPOINT/alpha/chat` reads it.\n\n"
	       "options (a long option's value follows '=' or a space):\n"
	       "  -c, --config FILE      cluster configuration (ibfs.conf(5))\n"
	       "  -n, --node NAME        this node's name (default: host "
	       "name)\n"
	       "  -f                     stay in the foreground, log to "
	       "stderr\n"
	       "  -v, --verbose          ibfs's debug lines too\n"
	       "  -d                     -v and libfuse's trace of every "
	       "request\n"
	       "                         (implies -f)\n"
	       "  -o OPT[,OPT...]        mount options: ibfs's below, or "
	       "FUSE's\n"
	       "                         (allow_other, ro, ...; "
	       "default_permissions\n"
	       "                         is always on)\n"
	       "      --device DEV       RDMA device, overrides [global] "
	       "device\n"
	       "  -i, --port N           port number, overrides [global] port\n"
	       "  -g, --gid-index N      GID index, overrides [global] "
	       "gid_index\n"
	       "  -t, --test             check CONFIG and the options as "
	       "ibfs would, print\n"
	       "                         the nodes and exit (0 good, 2 bad); "
	       "with -n, as\n"
	       "                         NAME sees it; opens no device, so "
	       "refuses --device,\n"
	       "                         --port and --gid-index\n"
	       "  -h, --help             this text\n"
	       "  -V, --version          version\n\n"
	       "ibfs's mount options:\n"
	       "  -o uid=N|USER          owner of every file and directory "
	       "(default:\n"
	       "                         the daemon's)\n"
	       "  -o gid=N|GROUP         their group; with allow_other and "
	       "group bits\n"
	       "                         in file_mode and dir_mode, that "
	       "group's users\n"
	       "                         get in (ibfs(8), ALLOWING OTHER "
	       "USERS)\n"
	       "  -o ibfs_debug          the same as -v\n\n"
	       "Exit status: 0 mounted, 1 runtime error, 2 usage or config "
	       "error\n(checked before any device is opened).\n",
	       prog, prog);
}

/* A usage error: one line naming what was wrong, and where to look. */
static int main_usage_error(const char *why)
{
	fprintf(stderr, "ibfs: %s; see ibfs --help or man ibfs\n", why);
	return EXIT_USAGE;
}

/*
 * Load the config, look up the local node's names (only its own: peers'
 * are looked up when they are met) and apply command-line overrides;
 * -EINVAL when bad.
 */
static int main_config(struct ibfs *d)
{
	struct opts *o = &d->o;
	struct config *cfg = &d->cfg;
	char err[CONFIG_ERR_MAX];

	if (!o->config) {
		main_usage_error("no config given (-c FILE)");
		return -EINVAL;
	}
	if (config_load(o->config, cfg, err, sizeof(err)) ||
	    config_select_local(cfg, o->node, err, sizeof(err)) ||
	    config_resolve_local(cfg, err, sizeof(err))) {
		fprintf(stderr, "ibfs: %s\n", err);
		config_free(cfg);
		return -EINVAL;
	}
	if (config_cert_open(cfg, &d->cert, err, sizeof(err))) {
		fprintf(stderr, "ibfs: %s\n", err);
		config_free(cfg);
		return -EINVAL;
	}
	if (o->device)
		snprintf(cfg->device, sizeof(cfg->device), "%s", o->device);
	if (o->port > 0)
		cfg->port = o->port;
	if (o->gid_index >= 0)
		cfg->gid_index = o->gid_index;
	if (o->uid_set)
		cfg->uid = o->uid;
	if (o->gid_set)
		cfg->gid = o->gid;
	return 0;
}

/*
 * Fork; the parent waits on a pipe for the child's verdict and exits
 * with it.  Returns the pipe's write end in the child.
 */
static int main_daemonize(void)
{
	int fds[2];
	char st = 1;
	pid_t pid;

	if (pipe(fds))
		fatal("pipe");
	pid = fork();
	if (pid < 0)
		fatal("fork");
	if (pid > 0) {
		close(fds[1]);
		if (read(fds[0], &st, 1) != 1)
			st = 1;
		_exit(st);
	}
	close(fds[0]);
	setsid();
	return fds[1];
}

/* Tell the waiting parent how start-up went, then leave the terminal. */
static void main_ready(int fd, int status)
{
	char st = status;
	int null;

	if (fd < 0)
		return;
	if (write(fd, &st, 1) != 1)
		log_warn("readiness pipe");
	close(fd);
	if (status)
		return;
	log_init("ibfs", 0, log_getverbose());
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	if (chdir("/"))
		log_warn("chdir /");
}

/*
 * libfuse's part of the command line with what ibfs always adds (our
 * fsname for node, default_permissions), tried on a throw-away session;
 * the exit status of a usage error, or 0.
 */
static int main_fuse_args(struct ibfs *d, const char *node)
{
	char fsname[128], err[512];

	snprintf(fsname, sizeof(fsname),
		 "-odefault_permissions,fsname=ibfs:%s,subtype=ibfs", node);
	if (opts_fuse(&d->o, &d->fo, fsname, err, sizeof(err)))
		return main_usage_error(err);
	return 0;
}

/*
 * ibfs -t: what the daemon checks before it opens the device (the config,
 * with -n that node as the local one, and the command line: libfuse's
 * options and a mount point when one is given), then one row per node,
 * every host name looked up (the daemon itself looks up only its own at
 * start): what an admin checks before starting a cluster, as with sshd
 * -t.  Exit 0, or 2 with a FILE:LINE error for the config, or for the
 * names that do not resolve.
 */
static int main_test(struct ibfs *d)
{
	const struct opts *o = &d->o;
	struct config *cfg = &d->cfg;
	char err[CONFIG_ERR_MAX];
	int bad, certs_bad = 0;

	if (!o->config)
		return main_usage_error("-t needs a config (-c FILE)");
	if (config_load(o->config, cfg, err, sizeof(err)) ||
	    (o->node && config_select_local(cfg, o->node, err, sizeof(err)))) {
		fprintf(stderr, "ibfs: %s\n", err);
		config_free(cfg);
		return EXIT_USAGE;
	}
	if (main_fuse_args(d, o->node ? cfg->nodes[cfg->local].name : "-")) {
		config_free(cfg);
		return EXIT_USAGE;
	}
	bad = config_check(cfg, stdout, stderr);
	if (bad < 0)
		fatalx("out of memory");
	if (cfg->ca[0] && cfg->local < 0 &&
	    config_select_local(cfg, NULL, err, sizeof(err)))
		fprintf(stderr,
			"ibfs: %s: certificates not checked: whose? "
			"(-n NAME)\n",
			o->config);
	else if (config_check_certs(cfg, stdout, stderr))
		certs_bad = 1;
	if (bad)
		fprintf(stderr,
			"ibfs: %s: %d nodes, %d with names that do not "
			"resolve\n",
			o->config, cfg->nnodes, bad);
	else if (certs_bad)
		fprintf(stderr, "ibfs: %s: the certificates are not good\n",
			o->config);
	else
		fprintf(stderr, "ibfs: %s: %d nodes, good%s%s\n", o->config,
			cfg->nnodes, o->node ? "; local node " : "",
			o->node ? o->node : "");
	config_free(cfg);
	return bad || certs_bad ? EXIT_USAGE : 0;
}

/*
 * Parse the command line, load the config and check libfuse's options,
 * all before any device, socket or fork: -1 to go on, or the exit.
 */
static int main_args(struct ibfs *d, int argc, char *argv[])
{
	char err[256];
	int rc;

	rc = opts_parse(&d->o, argc, argv, err, sizeof(err));
	if (rc == -ENOMEM)
		fatalx("out of memory");
	if (rc)
		return main_usage_error(err);
	if (d->o.help) {
		main_usage(argv[0]);
		return 0;
	}
	if (d->o.version) {
		printf("ibfs %s (libfuse %s)\n", IBFS_VERSION,
		       fuse_pkgversion());
		return 0;
	}
	if (d->o.test)
		return main_test(d);
	if (main_config(d))
		return EXIT_USAGE;
	if (main_fuse_args(d, d->cfg.nodes[d->cfg.local].name)) {
		cert_close(d->cert);
		config_free(&d->cfg);
		return EXIT_USAGE;
	}
	return -1;
}

/*
 * Tell systemd we are ready ("READY=1" once mounted), when it asked by
 * setting $NOTIFY_SOCKET (Type=notify).  etc/ibfs@.service runs ibfs -f
 * that way so that ibfs itself is the unit's main process: systemd's
 * RestartPreventExitStatus=2 looks only at the main process, and with
 * Type=forking that is the child, which a usage error never reaches.
 */
static void main_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = path ? strlen(path) : 0;
	int fd;

	if (!n || (path[0] != '/' && path[0] != '@') ||
	    n >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; /* the abstract namespace */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || sendto(fd, state, strlen(state), MSG_NOSIGNAL,
			     (struct sockaddr *)&sa,
			     offsetof(struct sockaddr_un, sun_path) + n) < 0)
		log_warn("telling systemd %s on NOTIFY_SOCKET %s", state, path);
	if (fd >= 0)
		close(fd);
}

/* Mounted: tell the parent, serve until a signal or umount; the status. */
static int main_serve(struct ibfs *d)
{
	int rc;

	log_info("node %s mounted on %s", d->cfg.nodes[d->cfg.local].name,
		 d->fo.mountpoint);
	main_ready(d->ready, 0);
	d->ready = -1;
	main_notify("READY=1");
	rc = fs_loop(d->fs);
	if (rc)
		log_warnx("serving %s failed: %s", d->fo.mountpoint,
			  strerror(-rc));
	log_info("unmounting %s", d->fo.mountpoint);
	return rc ? 1 : 0;
}

/*
 * With ca, SIGHUP re-reads ca, cert, key and crl (cert_reload): the new
 * files are used only when all of them are good, and the daemon stays up
 * either way.  Peers are checked against them at their next handshake.
 * SIGHUP is blocked in every thread (main_hup_start runs before any
 * other starts) and taken here with sigwait, so that libfuse's handler,
 * which ends the session on SIGHUP, never runs.  Without ca SIGHUP ends
 * the daemon as before.
 */
static void *main_hup(void *arg)
{
	struct ibfs *d = arg;
	char why[CERT_WHY_MAX];
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	pthread_setname_np(pthread_self(), "ibfs-sighup");
	while (!sigwait(&set, &sig) && !atomic_load(&d->hup_stop)) {
		if (cert_reload(d->cert, NULL, why, sizeof(why)))
			log_warnx("SIGHUP: the certificates in use stay: %s",
				  why);
		else
			log_info("SIGHUP: ca, cert, key and crl read again "
				 "(generation %llu); peers are checked "
				 "against them at their next handshake",
				 (unsigned long long)cert_generation(d->cert));
		pthread_mutex_lock(&d->fab_lock);
		if (d->fab_open)
			fabric_reloaded(d->fab);
		pthread_mutex_unlock(&d->fab_lock);
	}
	return NULL;
}

/* SIGHUP blocked here, in main, before any thread starts, and its thread;
 * 0 or -errno. */
static int main_hup_start(struct ibfs *d)
{
	sigset_t set;
	int rc;

	if (!d->cert)
		return 0;
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	rc = -pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (!rc)
		rc = -pthread_create(&d->hup, NULL, main_hup, d);
	d->hup_started = !rc;
	return rc;
}

static void main_hup_stop(struct ibfs *d)
{
	if (!d->hup_started)
		return;
	atomic_store(&d->hup_stop, 1);
	pthread_kill(d->hup, SIGHUP);
	pthread_join(d->hup, NULL);
	d->hup_started = 0;
}

/*
 * Peers, the file tree (it needs the peers before the fabric delivers),
 * the fabric, the mount; serve; then all of it closed in reverse, but for
 * one step: the fabric's threads stop before the FUSE session goes.  They
 * answer parked reads and tell pollers through the session with no lock
 * held (fs_deliver, fs_announce, a reliable write's completion), so the
 * session must outlive them; the mount comes last at start so that a
 * fabric that fails leaves nothing mounted.  0 once served, with the exit
 * status in *status, or -errno from start-up.
 */
static int main_run(struct ibfs *d, int *status)
{
	struct tp_ops ops = {
		.deliver = fs_deliver,
		.announce = fs_announce,
		.peer_up = fs_peer_up,
		.peer_failed = fs_peer_failed,
	};
	int rc;

	rc = main_hup_start(d);
	if (rc)
		return rc;
	rc = peer_table_open(&d->peers, &d->cfg);
	if (rc)
		goto out_hup;
	rc = fs_open(&d->fs, &d->cfg, d->peers);
	if (rc)
		goto out_peers;
	rc = fabric_open(&d->fab, &d->cfg, d->peers, d->cert, &ops, d->fs);
	if (rc)
		goto out_fs;
	fs_set_transport(d->fs, fabric_tp(d->fab));
	pthread_mutex_lock(&d->fab_lock);
	d->fab_open = 1;
	pthread_mutex_unlock(&d->fab_lock);
	rc = fs_mount(d->fs, &d->o.fuse, d->fo.mountpoint);
	if (!rc)
		*status = main_serve(d);
	pthread_mutex_lock(&d->fab_lock);
	d->fab_open = 0;
	pthread_mutex_unlock(&d->fab_lock);
	fabric_close(d->fab);
	fs_unmount(d->fs); /* nothing to undo when the mount failed */
out_fs:
	fs_close(d->fs);
out_peers:
	peer_table_close(d->peers, d->cfg.nnodes);
out_hup:
	main_hup_stop(d);
	return rc;
}

/*
 * Raise the soft limit on open files to the hard one: a daemon holds a
 * socket per bootstrap session and a descriptor per FUSE and verbs
 * object, and systemd's default soft limit (1024) is met long before its
 * hard one (524288).  Failing that is not fatal: the limit stays.
 */
static void main_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		log_warn("setrlimit RLIMIT_NOFILE %llu",
			 (unsigned long long)rl.rlim_max);
}

/*
 * No transparent huge pages for this process: its memory is small tables
 * (about 1.2 KB a configured node) and a few registered rings, and with
 * THP "always" (Debian's and RHEL's default) the kernel backs a heap that
 * crosses a 2 MiB boundary with a whole huge page, so the daemon's RSS
 * would grow 2 MiB at a time instead of with what it uses: on a compute
 * node that is the job's memory.  Failing that is harmless.
 */
static void main_no_thp(void)
{
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		log_debug("prctl PR_SET_THP_DISABLE: %s", strerror(errno));
}

/* Arguments, config, (fork), run; exit 0, 1, or 2 (usage or config). */
int main(int argc, char *argv[])
{
	struct ibfs d = {.ready = -1, .fab_lock = PTHREAD_MUTEX_INITIALIZER};
	int rc, status;

	log_init("ibfs", 1, 0);
	status = main_args(&d, argc, argv);
	if (status >= 0)
		goto out_args;
	status = 1;
	/* -d is libfuse's request trace and ours; -v ours alone */
	log_setverbose(d.o.verbose + d.fo.debug);
	log_debug("node %s of %s, mounting on %s; debug lines on",
		  d.cfg.nodes[d.cfg.local].name, d.o.config, d.fo.mountpoint);
	main_raise_nofile();
	main_no_thp();
	/* Verbs and threads do not survive fork: fork before any of them. */
	if (!d.fo.foreground)
		d.ready = main_daemonize();
	rc = main_run(&d, &status);
	if (rc)
		log_warnx("start-up failed: %s", strerror(-rc));
	main_ready(d.ready, status);
	cert_close(d.cert);
	config_free(&d.cfg);
out_args:
	free(d.fo.mountpoint);
	opts_free(&d.o);
	return status;
}
