/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Configuration: the entry points of config.h.  A file is read whole and
 * parsed as a string (config_ini.c does that), so both loaders share one
 * code path; a secret_file is read at load time, so a bad one stops the
 * daemon before it mounts.  Nothing half-parsed is ever returned.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "config.h"
#include "config_parse.h"
#include "util.h"

#define FILE_MAX (1u << 20) /* a config is a few hundred bytes */

/* The keys' defaults come from their rows (config_keys.c); the rest is
 * not a key. */
static void config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	config_keys_default(cfg);
	cfg->uid = getuid();
	cfg->gid = getgid();
	cfg->local = -1;
}

/* Nothing from an earlier config may survive, even on error. */
int config_load_string(const char *text, const char *name, struct config *cfg,
		       char *err, size_t errlen)
{
	int rc;

	if (err && errlen)
		*err = '\0';
	if (!name)
		name = "<string>";
	config_defaults(cfg);
	snprintf(cfg->path, sizeof(cfg->path), "%s", name);
	if (!text) {
		if (err && errlen)
			snprintf(err, errlen, "%s: no text", name);
		config_free(cfg);
		return -EINVAL;
	}
	rc = config_ini_parse(text, name, cfg, err, errlen);
	if (rc)
		config_free(cfg);
	return rc;
}

/* Read up to len bytes, through EINTR: how many (fewer: EOF), or -errno. */
static ssize_t config_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* What a file that is not a regular one is, for the message. */
static const char *config_file_type(mode_t mode)
{
	if (S_ISDIR(mode))
		return "not a regular file but a directory";
	if (S_ISFIFO(mode))
		return "not a regular file but a FIFO";
	if (S_ISSOCK(mode))
		return "not a regular file but a socket";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "not a regular file but a device";
	return "not a regular file";
}

/*
 * Open path (with flags besides O_RDONLY) only when it is a regular file:
 * the descriptor, its stat in *st; or -errno and, when it opened but is
 * something else, what it is in *what (NULL: strerror says it).  Opened
 * without blocking, so a FIFO does not wait for a writer: the one rule for
 * every file a config names, the config itself included.
 */
static int config_open_regular(const char *path, int flags, struct stat *st,
			       const char **what)
{
	int fd, rc;

	*what = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (!S_ISREG(st->st_mode)) {
		*what = config_file_type(st->st_mode);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static int config_secret_err(const struct config *cfg, char *err, size_t errlen,
			     int rc, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* "FILE:LINE: secret_file F: why" into err (paths may be long: cut them). */
static int config_secret_err(const struct config *cfg, char *err, size_t errlen,
			     int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(err, errlen, "%.200s:%d: secret_file %.200s: ", cfg->path,
		     cfg->secret_line, cfg->secret_file);
	if (n < 0 || (size_t)n >= errlen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
	return rc;
}

/* A secret file others may read (or change) is a secret no longer. */
static int config_secret_check(const struct config *cfg, mode_t mode, char *err,
			       size_t errlen)
{
	const char *how = util_mode_exposed(mode);

	if (how)
		return config_secret_err(cfg, err, errlen, -EACCES,
					 "mode %04o: group or others may %s "
					 "it; refusing it (chmod 600 it)",
					 (unsigned int)(mode & 07777), how);
	return 0;
}

/* An inline secret is as secret as the config that holds it: refuse one
 * in a file group or others may read or change, as secret_file. */
static int config_inline_secret_check(const struct config *cfg, mode_t mode,
				      char *err, size_t errlen)
{
	const char *how = util_mode_exposed(mode);

	if (!cfg->secret[0] || cfg->secret_file[0] || !how)
		return 0;
	if (err && errlen)
		snprintf(err, errlen,
			 "%.200s:%d: secret: mode %04o: group or others may %s "
			 "this file; refusing its secret (chmod 600 it, or "
			 "move the secret to a secret_file)",
			 cfg->path, cfg->secret_line,
			 (unsigned int)(mode & 07777), how);
	return -EACCES;
}

/*
 * Read secret_file into cfg->secret at start-up, so a bad file stops us
 * before mounting: it must be a regular file nobody but its owner can read,
 * 16..255 bytes once one trailing newline is stripped, with no NUL byte.
 * The content is never echoed.
 */
static int config_secret_load(struct config *cfg, char *err, size_t errlen)
{
	char buf[sizeof(cfg->secret) + 1];
	const char *what = NULL;
	struct stat st;
	size_t len;
	ssize_t n;
	int fd, rc;

	rc = config_open_regular(cfg->secret_file, O_NOFOLLOW, &st, &what);
	if (rc < 0)
		return config_secret_err(cfg, err, errlen, rc, "%s",
					 what ? what : strerror(-rc));
	fd = rc;
	rc = config_secret_check(cfg, st.st_mode, err, errlen);
	if (rc)
		goto out;
	n = config_read_full(fd, buf, sizeof(buf));
	if (n < 0) {
		rc = config_secret_err(cfg, err, errlen, (int)n, "%s",
				       strerror((int)-n));
		goto out;
	}
	len = (size_t)n;
	if (len && buf[len - 1] == '\n' && len <= sizeof(cfg->secret))
		len--;
	if (len < CONFIG_SECRET_MIN || len >= sizeof(cfg->secret) ||
	    memchr(buf, '\0', len)) {
		rc = config_secret_err(
			cfg, err, errlen, -EINVAL,
			"the secret must be %d..%zu bytes without NUL "
			"(one trailing newline is stripped)",
			CONFIG_SECRET_MIN, sizeof(cfg->secret) - 1);
		goto out;
	}
	memcpy(cfg->secret, buf, len);
	cfg->secret[len] = '\0';
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return rc;
}

/*
 * The whole file into *out, NUL-terminated, at most FILE_MAX bytes, and
 * its mode; on failure -errno and in *what the first words of the message,
 * or, with -EINVAL (a file that is not a regular one), all of it.
 */
static int config_slurp(const char *path, char **out, size_t *outlen,
			mode_t *mode, const char **what)
{
	char *buf = NULL, *grown;
	size_t len = 0, cap = 0;
	struct stat st;
	ssize_t n;
	int fd, rc = 0;

	fd = config_open_regular(path, 0, &st, what);
	if (fd < 0) {
		if (!*what)
			*what = "cannot open";
		return fd;
	}
	*mode = st.st_mode;
	for (;;) {
		if (len + 1 >= cap) {
			cap = cap ? 2 * cap : 4096;
			if (cap > FILE_MAX + 1) {
				rc = -EFBIG;
				*what = "larger than 1 MiB";
				break;
			}
			grown = realloc(buf, cap);
			if (!grown) {
				rc = -ENOMEM;
				*what = "cannot read";
				break;
			}
			buf = grown;
		}
		n = config_read_full(fd, buf + len, cap - len - 1);
		if (n < 0) {
			rc = (int)n;
			*what = "cannot read";
			break;
		}
		len += (size_t)n;
		if (len + 1 < cap)
			break; /* a short read: the end of the file */
	}
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

/* A NUL byte would end the text early: refuse it, naming its line. */
static int config_check_nul(const char *path, const char *buf, size_t len,
			    char *err, size_t errlen)
{
	const char *nul = memchr(buf, '\0', len), *c;
	int line = 1;

	if (!nul)
		return 0;
	for (c = buf; c < nul; c++)
		line += *c == '\n';
	if (err && errlen)
		snprintf(err, errlen, "%s:%d: NUL byte in the file", path,
			 line);
	return -EINVAL;
}

/* Read the whole file, then parse it as a string: one code path. */
int config_load(const char *path, struct config *cfg, char *err, size_t errlen)
{
	char e[CONFIG_ERR_MAX], *buf = NULL;
	const char *what = NULL;
	size_t len = 0;
	mode_t mode = 0;
	int rc;

	/* cfg may hold garbage: wipe it rather than free what it points at */
	memset(cfg, 0, sizeof(*cfg));
	cfg->local = -1;
	if (err && errlen)
		*err = '\0';
	rc = config_slurp(path, &buf, &len, &mode, &what);
	if (rc) {
		if (err && errlen && rc == -EINVAL)
			snprintf(err, errlen, "%s: %s", path, what);
		else if (err && errlen)
			snprintf(err, errlen, "%s: %s: %s", path, what,
				 rc == -EFBIG ? "the limit for a config"
					      : strerror(-rc));
		return rc;
	}
	rc = config_check_nul(path, buf, len, err, errlen);
	if (!rc)
		rc = config_load_string(buf, path, cfg, err, errlen);
	free(buf);
	if (rc)
		return rc;
	rc = config_inline_secret_check(cfg, mode, e, sizeof(e));
	if (!rc && cfg->secret_file[0])
		rc = config_secret_load(cfg, e, sizeof(e));
	if (rc) {
		if (err && errlen)
			snprintf(err, errlen, "%s", e);
		config_free(cfg);
	}
	return rc;
}

/* The nodes config_no_node names: a few, enough to see the pattern. */
#define CONFIG_NAMES_SHOWN 5

/*
 * "FILE: no node named 'x'; nodes: a, b" into err, the list cut after a
 * few whole names with how many it left out ("n00001, ..., n00005 and
 * 9995 more (10000 in all)"): a 10,000-node config would fill the line.
 */
static void config_no_node(const struct config *cfg, const char *name,
			   int is_host, char *err, size_t errlen)
{
	const size_t tail = 48; /* room kept for " and N more (N in all)" */
	size_t used;
	int i;

	snprintf(err, errlen,
		 "%.200s: no node named '%.64s'%s; nodes:", cfg->path, name,
		 is_host ? " (the host name)" : "");
	for (i = 0; i < cfg->nnodes && i < CONFIG_NAMES_SHOWN; i++) {
		used = strlen(err);
		if (used + strlen(cfg->nodes[i].name) + 2 + tail >= errlen)
			break;
		snprintf(err + used, errlen - used, "%s %s", i ? "," : "",
			 cfg->nodes[i].name);
	}
	used = strlen(err);
	if (!cfg->nnodes)
		snprintf(err + used, errlen - used, " none");
	else if (i < cfg->nnodes)
		snprintf(err + used, errlen - used, " and %d more (%d in all)",
			 cfg->nnodes - i, cfg->nnodes);
}

/* Exact match first; then the short host name, as hosts may be FQDNs. */
int config_select_local(struct config *cfg, const char *name, char *err,
			size_t errlen)
{
	char host[HOST_NAME_MAX + 1], *dot;
	int i = -1;

	if (!name) {
		if (gethostname(host, sizeof(host)) < 0) {
			i = -errno;
			if (err && errlen)
				snprintf(err, errlen, "gethostname: %s",
					 strerror(errno));
			return i;
		}
		host[HOST_NAME_MAX] = '\0';
		name = host;
		i = config_node_index(cfg, host);
		dot = strchr(host, '.');
		if (i < 0 && dot) {
			*dot = '\0';
			i = config_node_index(cfg, host);
			if (i < 0)
				*dot = '.';
		}
	} else {
		i = config_node_index(cfg, name);
	}
	if (i >= 0) {
		cfg->local = i;
		return 0;
	}
	if (err && errlen)
		config_no_node(cfg, name, name == host, err, errlen);
	return -ENOENT;
}

int config_cert_paths(const struct config *cfg, struct config_cert_paths *out,
		      char *err, size_t errlen)
{
	const char *const in[] = {cfg->ca, cfg->cert, cfg->key, cfg->crl};
	char *const dst[] = {out->ca, out->cert, out->key, out->crl};
	static const char *const names[] = {"ca", "cert", "key", "crl"};
	const char *node = cfg->nodes[cfg->local].name;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(in); i++) {
		if (config_ini_subst(in[i], node, dst[i], sizeof(out->ca)) <
		    0) {
			if (err && errlen)
				snprintf(err, errlen,
					 "%.200s:%d: %s: '%.200s' is too long "
					 "once %%n is expanded",
					 cfg->path, cfg->cert_lines[i],
					 names[i], in[i]);
			return -ENAMETOOLONG;
		}
	}
	return 0;
}

/* Wipe everything, the secret included, so a second call is harmless. */
void config_free(struct config *cfg)
{
	if (!cfg)
		return;
	free(cfg->nodes);
	free(cfg->index);
	config_ini_free_strs(cfg);
	explicit_bzero(cfg, sizeof(*cfg));
	cfg->local = -1;
}
