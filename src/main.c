/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ibfs: mount an InfiniBand UD fabric as a file system.
 *
 *   ibfs -c CONFIG [-n NODE] [-f] [-d] [-o OPTS] MOUNTPOINT
 *
 * Start-up runs in order — config, (fork), peers, file tree, verbs,
 * resolver, bootstrap, mount — and shutdown undoes it in reverse.  Without
 * -f the parent waits until the child has mounted and exits with the
 * child's verdict, so `ibfs … && echo hi > MNT/beta/chat` works in scripts.
 * Exit status: 0 on success, 2 for bad usage or config, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"
#include "config.h"
#include "fs.h"
#include "log.h"
#include "peer.h"
#include "route.h"
#include "transport.h"

#define IBFS_VERSION "0.1.0"
#define EXIT_USAGE   2

struct opts {
	char *config;
	char *node;
	char *device;
	int port;
	int gid_index;
	int help;
	int version;
};

enum { KEY_HELP, KEY_VERSION };

#define OPT(t, f)                                                              \
	{                                                                      \
		t, offsetof(struct opts, f), 1                                 \
	}
static const struct fuse_opt main_opt_spec[] = {
	OPT("-c %s", config),
	OPT("--config=%s", config),
	OPT("-n %s", node),
	OPT("--node=%s", node),
	OPT("--device=%s", device),
	OPT("-i %d", port),
	OPT("--port=%d", port),
	OPT("-g %d", gid_index),
	OPT("--gid-index=%d", gid_index),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_END};

/* --help and --version are ours; everything else goes on to libfuse. */
static int main_opt_proc(void *data, const char *arg, int key,
			 struct fuse_args *outargs)
{
	struct opts *o = data;

	switch (key) {
	case KEY_HELP:
		o->help = 1;
		return 0;
	case KEY_VERSION:
		o->version = 1;
		return 0;
	}
	return 1;
}

/* The usage text; also the reference for ibfs(8). */
static void main_usage(const char *prog)
{
	printf("usage: %s -c CONFIG [options] MOUNTPOINT\n\n"
	       "Expose InfiniBand UD datagrams as files: every node of CONFIG "
	       "is a\ndirectory, every channel a file.  `echo hi > "
	       "MOUNTPOINT/beta/chat` sends\nto beta; on beta, `cat "
	       "MOUNTPOINT/alpha/chat` reads it.\n\n"
	       "options:\n"
	       "  -c, --config=FILE      cluster configuration (ibfs.conf(5))\n"
	       "  -n, --node=NAME        this node's name (default: host "
	       "name)\n"
	       "  -f                     stay in the foreground, log to "
	       "stderr\n"
	       "  -d                     debug output (implies -f)\n"
	       "  -o OPT[,OPT...]        FUSE mount options (allow_other, "
	       "...)\n"
	       "      --device=DEV       RDMA device, overrides [global] "
	       "device\n"
	       "  -i, --port=N           port number, overrides [global] port\n"
	       "  -g, --gid-index=N      GID index, overrides [global] "
	       "gid_index\n"
	       "  -h, --help             this text\n"
	       "  -V, --version          version\n\n"
	       "Exit status: 0 mounted, 1 runtime error, 2 usage or config "
	       "error.\n",
	       prog);
}

/* Load the config and apply command-line overrides; -EINVAL when bad. */
static int main_config(struct opts *o, struct config *cfg)
{
	char err[CONFIG_ERR_MAX];

	if (!o->config) {
		fprintf(stderr,
			"ibfs: no config given (-c FILE); see --help\n");
		return -EINVAL;
	}
	if (config_load(o->config, cfg, err, sizeof(err)) ||
	    config_select_local(cfg, o->node, err, sizeof(err))) {
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

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct opts o = {.port = -1, .gid_index = -1};
	struct fuse_cmdline_opts fo;
	struct tp_ops ops = {.deliver = fs_deliver, .announce = fs_announce};
	struct config cfg;
	struct peer *peers = NULL;
	struct fs *fs = NULL;
	struct tp *tp = NULL;
	struct route *rt = NULL;
	struct bootstrap *bs = NULL;
	char fsname[128];
	int ready = -1, rc, status;

	log_init("ibfs", 1, 0);
	memset(&fo, 0, sizeof(fo));
	memset(&cfg, 0, sizeof(cfg));
	status = EXIT_USAGE;
	if (fuse_opt_parse(&args, &o, main_opt_spec, main_opt_proc))
		goto out_args;
	status = 0;
	if (o.help) {
		main_usage(argv[0]);
		goto out_args;
	}
	if (o.version) {
		printf("ibfs %s (libfuse %s)\n", IBFS_VERSION,
		       fuse_pkgversion());
		goto out_args;
	}
	status = EXIT_USAGE;
	if (fuse_parse_cmdline(&args, &fo))
		goto out_args;
	if (!fo.mountpoint) {
		fprintf(stderr, "ibfs: no mount point given; see --help\n");
		goto out_args;
	}
	if (main_config(&o, &cfg))
		goto out_args;
	status = 1;
	log_setverbose(fo.debug);
	snprintf(fsname, sizeof(fsname),
		 "-odefault_permissions,fsname=ibfs:%s,subtype=ibfs",
		 cfg.nodes[cfg.local].name);
	fuse_opt_add_arg(&args, fsname);
	if (fo.debug)
		fuse_opt_add_arg(&args, "-odebug");

	/* Verbs and threads do not survive fork: fork before any of them. */
	if (!fo.foreground)
		ready = main_daemonize();

	rc = peer_table_open(&peers, &cfg);
	if (rc)
		goto out_config;
	rc = fs_open(&fs, &cfg, peers);
	if (rc)
		goto out_peers;
	rc = tp_open(&tp, &cfg, peers, &ops, fs);
	if (rc)
		goto out_fs;
	fs_set_transport(fs, tp);
	rc = route_open(&rt, tp, &cfg);
	if (rc)
		goto out_tp;
	rc = bootstrap_open(&bs, &cfg, peers, tp, rt);
	if (rc)
		goto out_route;
	rc = fs_mount(fs, &args, fo.mountpoint);
	if (rc)
		goto out_bootstrap;
	log_info("node %s mounted on %s", cfg.nodes[cfg.local].name,
		 fo.mountpoint);
	main_ready(ready, 0);
	ready = -1;
	rc = fs_loop(fs);
	status = rc ? 1 : 0;
	if (rc)
		log_warnx("serving %s failed: %s", fo.mountpoint,
			  strerror(-rc));
	rc = 0;
	log_info("unmounting %s", fo.mountpoint);
	fs_unmount(fs);
out_bootstrap:
	bootstrap_close(bs);
out_route:
	route_close(rt);
out_tp:
	tp_close(tp);
out_fs:
	fs_close(fs);
out_peers:
	peer_table_close(peers, cfg.nnodes);
out_config:
	if (rc)
		log_warnx("start-up failed: %s", strerror(-rc));
	main_ready(ready, status);
	config_free(&cfg);
out_args:
	free(fo.mountpoint);
	fuse_opt_free_args(&args);
	free(o.config);
	free(o.node);
	free(o.device);
	return status;
}
