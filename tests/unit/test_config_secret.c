/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The secret's own rules (issue 20) and strict_source: a secret is 16..255
 * bytes, inline or in secret_file; an inline secret in a config that group
 * or others may read or change is refused, as a secret_file is; and
 * strict_source ([global], default yes) parses as a boolean.  Files are
 * written with mkstemp and chmod'ed, then loaded with config_load.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "config_harness.h"

#define SECRET16 "0123456789abcdef"

/* Write text to a fresh temp file of mode mode; its path in path. */
static void write_file(char *path, const char *text, mode_t mode)
{
	int fd = mkstemp(path);
	size_t len = strlen(text);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* Overwrite the file at path with text (its mode stays). */
static void write_file_at(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	size_t len = strlen(text);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* 16 bytes is the least; 15 is refused in config words, at its line. */
static void t_secret_min(void **state)
{
	good("[global]\nsecret = " SECRET16 "\n" NODE_A);
	assert_string_equal(cfg.secret, SECRET16);
}

BAD(t_secret_short, "[global]\nsecret = 0123456789abcde\n" NODE_A, 2,
    "secret: must be 16..255 bytes long, not 15")
BAD(t_secret_one_byte, "[global]\nport = 1\nsecret = x\n" NODE_A, 3,
    "secret: must be 16..255 bytes long, not 1")

/* The short secret's value never shows in the message. */
static void t_secret_short_not_echoed(void **state)
{
	bad("[global]\nsecret = hunter2\n" NODE_A, 2, "not 7");
	assert_null(strstr(err, "hunter"));
}

/* An inline secret in a 0600 file loads; 0640, 0604, 0620 do not. */
static void t_inline_secret_mode(void **state)
{
	static const mode_t refused[] = {0640, 0604, 0620, 0644, 0601};
	const char text[] = "[global]\nsecret = " SECRET16 "\n" NODE_A;
	char path[] = "/tmp/test_config_secret_XXXXXX";
	size_t i;

	write_file(path, text, 0600);
	assert_int_equal(config_load(path, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.secret, SECRET16);
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		config_free(&cfg);
		assert_int_equal(chmod(path, refused[i]), 0);
		assert_int_equal(config_load(path, &cfg, err, sizeof(err)),
				 -EACCES);
		assert_memory_equal(err, path, strlen(path));
		/* FILE:LINE, the secret key's line */
		assert_memory_equal(err + strlen(path), ":2: secret: mode 0",
				    18);
		assert_non_null(strstr(err, "group or others may"));
		assert_non_null(strstr(err, "chmod 600"));
		assert_null(strstr(err, SECRET16));
		assert_null(cfg.nodes);
	}
	unlink(path);
}

/* Without a secret a world-readable config is fine, as it always was. */
static void t_no_secret_any_mode(void **state)
{
	char path[] = "/tmp/test_config_secret_XXXXXX";

	write_file(path, "[global]\nport = 1\n" NODE_A, 0644);
	assert_int_equal(config_load(path, &cfg, err, sizeof(err)), 0);
	unlink(path);
}

/* secret_file: a readable config naming a private file is fine; the
 * file's secret must be 16 bytes too. */
static void t_secret_file_min(void **state)
{
	char spath[] = "/tmp/test_config_secret_XXXXXX";
	char cpath[] = "/tmp/test_config_secret_XXXXXX";
	char text[256];

	write_file(spath, SECRET16 "\n", 0600);
	snprintf(text, sizeof(text), "[global]\nsecret_file = %s\n" NODE_A,
		 spath);
	write_file(cpath, text, 0644);
	assert_int_equal(config_load(cpath, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.secret, SECRET16);
	config_free(&cfg);
	/* the same file, now 15 bytes and a newline */
	assert_int_equal(truncate(spath, 0), 0);
	write_file_at(spath, "0123456789abcde\n");
	assert_int_equal(config_load(cpath, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "the secret must be 16..255 bytes"));
	assert_null(strstr(err, "0123456789abcde"));
	unlink(spath);
	unlink(cpath);
}

/* A secret_file others may read is refused at the line that names it. */
static void t_secret_file_mode_line(void **state)
{
	char spath[] = "/tmp/test_config_secret_XXXXXX";
	char cpath[] = "/tmp/test_config_secret_XXXXXX";
	char text[256], want[256];

	write_file(spath, SECRET16 "\n", 0640);
	snprintf(text, sizeof(text),
		 "[global]\nport = 1\n\nsecret_file = %s\n" NODE_A, spath);
	write_file(cpath, text, 0600);
	assert_int_equal(config_load(cpath, &cfg, err, sizeof(err)), -EACCES);
	snprintf(want, sizeof(want),
		 "%s:4: secret_file %s: mode 0640: group or others may read "
		 "it; refusing it (chmod 600 it)",
		 cpath, spath);
	assert_string_equal(err, want);
	assert_null(cfg.nodes);
	unlink(spath);
	unlink(cpath);
}

/* A secret_file that is a FIFO is refused at once, not waited on. */
static void t_secret_file_fifo(void **state)
{
	char dir[] = "/tmp/test_config_secret_XXXXXX";
	char cpath[] = "/tmp/test_config_secret_XXXXXX";
	char fifo[64], text[256], want[256];

	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(text, sizeof(text), "[global]\nsecret_file = %s\n" NODE_A,
		 fifo);
	write_file(cpath, text, 0600);
	alarm(10);
	assert_int_equal(config_load(cpath, &cfg, err, sizeof(err)), -EINVAL);
	alarm(0);
	snprintf(want, sizeof(want),
		 "%s:2: secret_file %s: not a regular file but a FIFO", cpath,
		 fifo);
	assert_string_equal(err, want);
	unlink(cpath);
	unlink(fifo);
	rmdir(dir);
}

/* secret_file is an absolute path: a relative one would be opened from
 * the daemon's working directory, / under systemd. */
BAD(t_secret_file_relative, "[global]\nsecret_file = ibfs/secret\n" NODE_A, 2,
    "secret_file: 'ibfs/secret' is not an absolute path")

/* strict_source: yes unless the config says no. */
static void t_strict_source(void **state)
{
	good(NODE_A);
	assert_int_equal(cfg.strict_source, 1);
	config_free(&cfg);
	good("[global]\nstrict_source = no\n" NODE_A);
	assert_int_equal(cfg.strict_source, 0);
	config_free(&cfg);
	good("[global]\nstrict_source = yes\n" NODE_A);
	assert_int_equal(cfg.strict_source, 1);
}

BAD(t_strict_source_bad, "[global]\nstrict_source = maybe\n" NODE_A, 2,
    "strict_source: 'maybe' is not yes/no")
BAD(t_strict_source_node, NODE_A "strict_source = no\n", 3,
    "unknown key 'strict_source'")

/* The certificate keys (issue 31): cert and key take %n, expanded for
 * the local node; each path absolute. */
static void t_cert_paths(void **state)
{
	struct config_cert_paths pa;

	good("[global]\nca = /etc/ibfs/ca.pem\ncert = /etc/ibfs/%n.pem\n"
	     "key = /etc/ibfs/%n.key\ncrl = /etc/ibfs/crl.pem\n" NODE_A);
	assert_int_equal(cfg.cert_lines[2], 4);
	assert_int_equal(config_select_local(&cfg, "alpha", err, sizeof(err)),
			 0);
	assert_int_equal(config_cert_paths(&cfg, &pa, err, sizeof(err)), 0);
	assert_string_equal(pa.ca, "/etc/ibfs/ca.pem");
	assert_string_equal(pa.cert, "/etc/ibfs/alpha.pem");
	assert_string_equal(pa.key, "/etc/ibfs/alpha.key");
	assert_string_equal(pa.crl, "/etc/ibfs/crl.pem");
}

BAD(t_cert_without_ca, "[global]\ncert = /c.pem\nkey = /k.pem\n" NODE_A, 2,
    "cert without ca")
BAD(t_ca_without_key, "[global]\nca = /ca.pem\ncert = /c.pem\n" NODE_A, 2,
    "ca without key")
BAD(t_key_relative,
    "[global]\nca = /ca.pem\ncert = /c.pem\nkey = k.pem\n" NODE_A, 4,
    "key: 'k.pem' is not an absolute path")

/* bootstrap = multicast takes certificates too: its challenge and
 * response carries them (announce_auth.c). */
static void t_ca_multicast(void **state)
{
	good("[global]\nbootstrap = multicast\nca = /ca.pem\ncert = /c.pem\n"
	     "key = /k.pem\n" NODE_A);
	assert_int_equal(cfg.bootstrap, BOOTSTRAP_MULTICAST);
	assert_string_equal(cfg.ca, "/ca.pem");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(t_secret_min),
		T(t_secret_short),
		T(t_secret_one_byte),
		T(t_secret_short_not_echoed),
		T(t_inline_secret_mode),
		T(t_no_secret_any_mode),
		T(t_secret_file_min),
		T(t_strict_source),
		T(t_strict_source_bad),
		T(t_strict_source_node),
		T(t_secret_file_mode_line),
		T(t_secret_file_fifo),
		T(t_secret_file_relative),
		T(t_cert_paths),
		T(t_cert_without_ca),
		T(t_ca_without_key),
		T(t_key_relative),
		T(t_ca_multicast),
	};

	return cmocka_run_group_tests_name("secret", tests, NULL, NULL);
}
