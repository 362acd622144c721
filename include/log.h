/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging in the manner of OpenSMTPD's log.c: stderr in the foreground,
 * syslog once daemonised.  log_warn appends strerror(errno); the x forms
 * do not.  fatal/fatalx log and exit(1).
 */
#ifndef IBFS_LOG_H
#define IBFS_LOG_H

#include <stdarg.h>

/* Choose the destination and verbosity; ident names the syslog stream. */
void log_init(const char *ident, int foreground, int debug);
/* Change verbosity after start-up (e.g. -d after config). */
void log_setverbose(int debug);
int log_getverbose(void);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

#endif
