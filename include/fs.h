/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The file system: every node of the config is a directory, every channel
 * a file in it.  A write sends one message to that node on that channel;
 * a read takes one message that node sent on it.  Reads that must wait are
 * parked and answered later from the receive path, so no worker thread
 * ever blocks on the network.
 */
#ifndef IBFS_FS_H
#define IBFS_FS_H

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

#include "config.h"
#include "peer.h"
#include "transport.h"

struct fs;

/* Build the tree for cfg's nodes; messages may be delivered at once. */
int fs_open(struct fs **out, const struct config *cfg, struct peer *peers);

/* Let writes reach the network (the tp is opened after the fs). */
void fs_set_transport(struct fs *fs, struct tp *tp);

/*
 * tp_ops.deliver: queue a message, or hand it to a parked reader: a small
 * one at once, a large one by fs_announce.  0: taken (data is ours).
 * Otherwise nothing was queued, data is still the caller's, and the
 * return says why, one errno per cause (the transport counts each as its
 * own drop reason; a reliable stream may tell its writer):
 *   -EAGAIN   the channel holds queue_limit already: its reader makes
 *             room (each message costs its payload + FS_MSG_OVERHEAD)
 *   -ENOBUFS  memory_limit: the daemon is full, or this peer holds its
 *             share (budget.h); readers of any of its channels make room
 *   -ENOSPC   a new channel past max_channels for this peer: only rm of
 *             one of its channels makes room
 *   -EINVAL   a name no channel may have (a leading '.', a '/', empty,
 *             too long): never taken
 *   -ENOMEM   malloc failed here
 */
int fs_deliver(void *arg, struct peer *p, const char *chan, void *data,
	       size_t len);

/* tp_ops.announce: answer the readers and pollers fs_deliver left. */
void fs_announce(void *arg);

/* tp_ops.peer_up: send the writes that waited for p to be met. */
void fs_peer_up(void *arg, struct peer *p);

/* tp_ops.peer_failed: writes to all/ that waited for p to be tried go
 * on (bootstrap thread). */
void fs_peer_failed(void *arg, struct peer *p);

/* Create the FUSE session on mountpoint with args; -errno on failure. */
int fs_mount(struct fs *fs, struct fuse_args *args, const char *mountpoint);

/* Serve requests until unmounted or signalled; returns 0 or -errno. */
int fs_loop(struct fs *fs);

/* Answer every parked reader with an error, then unmount; the transport
 * is closed first (its threads answer through the session). */
void fs_unmount(struct fs *fs);

/* Free the tree (unmounting first if still mounted). */
void fs_close(struct fs *fs);

#endif
