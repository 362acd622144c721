/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * parkpoll: parked readers, pollers and a writer on one channel, for the
 * e2e test that stops a daemon under traffic (t_45).
 *
 *   parkpoll PATH READERS POLLERS COUNTFILE
 *
 * Opens PATH (a channel, O_RDWR | O_CREAT: reads always wait) once per
 * reader, poller and the writer.  Each reader blocks in read(2); each
 * poller waits in poll(2) on its own open file, then reads without
 * blocking; the writer sends a short message every 10 ms.  Every 100 ms
 * the number of messages read so far is written to COUNTFILE.  When the
 * daemon goes, every read, poll and write fails: parkpoll exits 0 once
 * all readers and pollers have seen that, 1 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PP_MAX 16

static atomic_long pp_got;  /* messages read */
static atomic_int pp_alive; /* readers and pollers not ended */
static atomic_int pp_done;  /* all of them ended: the writer stops */

/* Open PATH for one thread; exit on failure (the test fails). */
static int pp_open(const char *path, int flags)
{
	int fd = open(path, O_RDWR | O_CREAT | flags, 0644);

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

/* A reader: read(2) parks until a message comes, until the daemon goes. */
static void *pp_reader(void *arg)
{
	char buf[256];
	int fd = (int)(long)arg;

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n > 0)
			atomic_fetch_add(&pp_got, 1);
		else if (n < 0 && errno != EINTR)
			break;
	}
	atomic_fetch_sub(&pp_alive, 1);
	return NULL;
}

/* A poller: poll(2) parks, then a read that does not wait. */
static void *pp_poller(void *arg)
{
	struct pollfd p = {.fd = (int)(long)arg, .events = POLLIN};
	char buf[256];

	for (;;) {
		ssize_t n;

		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p.revents & (POLLERR | POLLNVAL))
			break;
		n = read(p.fd, buf, sizeof(buf));
		if (n > 0)
			atomic_fetch_add(&pp_got, 1);
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
	}
	atomic_fetch_sub(&pp_alive, 1);
	return NULL;
}

/* The writer: a message every 10 ms (a TCG VM runs ten of these),
 * errors ignored (the daemon may go). */
static void *pp_writer(void *arg)
{
	int fd = (int)(long)arg;

	while (!atomic_load(&pp_done)) {
		if (write(fd, "m", 1) < 0 && errno == ENOTCONN)
			usleep(20000);
		usleep(10000);
	}
	return NULL;
}

/* Start a thread on its own open file of path; exit on failure. */
static void pp_start(void *(*fn)(void *), const char *path, int flags)
{
	pthread_t t;
	long fd = pp_open(path, flags);

	if (pthread_create(&t, NULL, fn, (void *)fd)) {
		fprintf(stderr, "parkpoll: pthread_create failed\n");
		exit(1);
	}
	pthread_detach(t);
}

/* Write n to path as text, replacing what it held. */
static void pp_count(const char *path, long n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	fprintf(f, "%ld\n", n);
	fclose(f);
}

/* Readers, pollers, the writer; count until readers and pollers end. */
int main(int argc, char *argv[])
{
	int nr, np, i;

	if (argc != 5 || (nr = atoi(argv[2])) < 0 || (np = atoi(argv[3])) < 0 ||
	    nr + np < 1 || nr + np > PP_MAX) {
		fprintf(stderr,
			"usage: parkpoll PATH READERS POLLERS COUNTFILE\n");
		return 1;
	}
	atomic_store(&pp_alive, nr + np);
	for (i = 0; i < nr; i++)
		pp_start(pp_reader, argv[1], 0);
	for (i = 0; i < np; i++)
		pp_start(pp_poller, argv[1], O_NONBLOCK);
	pp_start(pp_writer, argv[1], 0);
	while (atomic_load(&pp_alive) > 0) {
		pp_count(argv[4], atomic_load(&pp_got));
		usleep(100000);
	}
	atomic_store(&pp_done, 1);
	pp_count(argv[4], atomic_load(&pp_got));
	return 0;
}
