/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging: one sink chosen at start-up.  In the foreground every line goes
 * to stderr, so users of `ibfs -f` and the tests see it; otherwise syslog.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <pthread.h>

#include "log.h"

static int log_fg = 1;
static int log_verbose;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* Pick stderr or syslog; debug enables log_debug output. */
void log_init(const char *ident, int foreground, int debug)
{
	log_fg = foreground;
	log_verbose = debug;
	if (!foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

/* Raise or lower verbosity at run time. */
void log_setverbose(int debug)
{
	log_verbose = debug;
}

/* Current verbosity, so callers can skip building costly debug lines. */
int log_getverbose(void)
{
	return log_verbose;
}

/* Emit one line at priority pri; err >= 0 appends strerror(err). */
static void log_vemit(int pri, int err, const char *fmt, va_list ap)
{
	char buf[1024];
	int n;

	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return;
	if (err >= 0 && (size_t)n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, ": %s", strerror(err));
	if (log_fg) {
		/* One write per line keeps threads' lines whole. */
		pthread_mutex_lock(&log_lock);
		fprintf(stderr, "ibfs: %s\n", buf);
		fflush(stderr);
		pthread_mutex_unlock(&log_lock);
	} else {
		syslog(pri, "%s", buf);
	}
}

#define LOG_BODY(pri, err)                                                     \
	do {                                                                   \
		va_list ap;                                                    \
		va_start(ap, fmt);                                             \
		log_vemit(pri, err, fmt, ap);                                  \
		va_end(ap);                                                    \
	} while (0)

/* Warning with the current errno's text. */
void log_warn(const char *fmt, ...)
{
	int saved = errno;

	LOG_BODY(LOG_ERR, saved);
	errno = saved;
}

/* Warning without errno. */
void log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_ERR, -1);
}

/* Informational line. */
void log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_INFO, -1);
}

/* Debug line, only with -d. */
void log_debug(const char *fmt, ...)
{
	if (!log_verbose)
		return;
	LOG_BODY(LOG_DEBUG, -1);
}

/* Log with errno and exit. */
void fatal(const char *fmt, ...)
{
	int saved = errno;

	LOG_BODY(LOG_CRIT, saved);
	exit(1);
}

/* Log and exit. */
void fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_CRIT, -1);
	exit(1);
}
