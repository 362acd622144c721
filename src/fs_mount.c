/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The FUSE session's life: the mount point checked, the session made on
 * fs.c's operations table (fs->ops, set by fs_open), the signal handlers, the
 * mount; the loop that serves it; and the unmount, in reverse.  Main thread
 * only.
 */
#include <errno.h>
#include <sys/stat.h>

#include "fs_int.h"
#include "log.h"

/* Explain a mount point that a killed ibfs left behind. */
static int fs_check_mountpoint(const char *mountpoint)
{
	struct stat st;

	if (stat(mountpoint, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			log_warnx("mount point %s is not a directory",
				  mountpoint);
			return -ENOTDIR;
		}
		return 0;
	}
	if (errno == ENOTCONN) {
		log_warnx("mount point %s is still held by an ibfs that died; "
			  "clear it with: fusermount3 -u %s (or umount -l %s)",
			  mountpoint, mountpoint, mountpoint);
		return -ENOTCONN;
	}
	log_warn("mount point %s", mountpoint);
	return -errno;
}

/* Session, signal handlers, mount: in that order, undone in reverse. */
int fs_mount(struct fs *fs, struct fuse_args *args, const char *mountpoint)
{
	int rc;

	rc = fs_check_mountpoint(mountpoint);
	if (rc)
		return rc;
	fs->se = fuse_session_new(args, fs->ops,
				  sizeof(struct fuse_lowlevel_ops), fs);
	if (!fs->se)
		return -EINVAL;
	if (fuse_set_signal_handlers(fs->se)) {
		rc = -EIO;
		goto err_session;
	}
	fs->sighandlers = 1;
	if (fuse_session_mount(fs->se, mountpoint)) {
		log_warnx("cannot mount on %s", mountpoint);
		rc = -EIO;
		goto err_signals;
	}
	fs->mounted = 1;
	return 0;

err_signals:
	fuse_remove_signal_handlers(fs->se);
	fs->sighandlers = 0;
err_session:
	fuse_session_destroy(fs->se);
	fs->se = NULL;
	return rc;
}

/* Worker threads serve requests until umount or SIGINT/SIGTERM. */
int fs_loop(struct fs *fs)
{
	struct fuse_loop_config lc = {
		.clone_fd = 0,
		.max_idle_threads = 10,
	};

	int rc = fuse_session_loop_mt(fs->se, &lc);

	/* A positive value is the signal that ended the loop: a clean stop. */
	if (rc > 0)
		log_info("signal %d: shutting down", rc);
	return rc < 0 ? -EIO : 0;
}

/*
 * Stop serving: answer parked readers, drop poll handles (they point into
 * the session), unmount and destroy the session.  The transport must be
 * stopped first (main.c): its threads answer and tell through the
 * session with no lock held.  A message delivered afterwards only queues.
 */
void fs_unmount(struct fs *fs)
{
	if (!fs)
		return;
	fs_park_stop(fs);
	if (fs->mounted)
		fuse_session_unmount(fs->se);
	fs->mounted = 0;
	if (fs->sighandlers)
		fuse_remove_signal_handlers(fs->se);
	fs->sighandlers = 0;
	if (fs->se)
		fuse_session_destroy(fs->se);
	fs->se = NULL;
}
