/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Config parser tests: each good case checks the fields it sets, each bad
 * case checks the return code, that the message names the line and the
 * key at fault, and that nothing half-parsed is left in cfg
 * (config_harness.h).  The multicast keys: test_config_mcast.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <infiniband/ib.h>

#include "config_harness.h"

static union config_sa bsa; /* a node's bootstrap sockaddr, as read */

/* ---- good cases ------------------------------------------------------ */

static void t_defaults(void **state)
{
	struct sockaddr_in *sin;

	good(NODE_A);
	assert_string_equal(cfg.path, "t.ini");
	assert_string_equal(cfg.device, "");
	assert_int_equal(cfg.port, 1);
	assert_int_equal(cfg.gid_index, -1);
	assert_int_equal(cfg.route, ROUTE_SA);
	assert_int_equal(cfg.recv_depth, 4096);
	assert_int_equal(cfg.send_depth, 256);
	assert_int_equal(cfg.max_message, 1 << 20);
	assert_int_equal(cfg.queue_limit, 64 << 20);
	assert_int_equal(cfg.max_channels, 1024);
	/* an eighth of the machine's memory, never below queue_limit */
	assert_true(cfg.memory_limit >= cfg.queue_limit);
	assert_true(cfg.memory_limit ==
			    (uint64_t)sysconf(_SC_PHYS_PAGES) *
				    (uint64_t)sysconf(_SC_PAGESIZE) / 8 ||
		    cfg.memory_limit == cfg.queue_limit);
	assert_int_equal(cfg.qkey, 0x1b1f5000);
	assert_int_equal(cfg.read_timeout_ms, 0);
	assert_int_equal(cfg.reassembly_timeout_ms, 2000);
	assert_int_equal(cfg.peer_timeout_ms, 10000);
	assert_int_equal(cfg.busy_poll, 0);
	assert_int_equal(cfg.file_mode, 0600);
	assert_int_equal(cfg.dir_mode, 0700);
	assert_int_equal(cfg.delivery, DELIVERY_DATAGRAM);
	assert_string_equal(cfg.secret, "");
	assert_string_equal(cfg.secret_file, "");
	assert_int_equal(cfg.local, -1);
	assert_int_equal(cfg.nnodes, 1);
	assert_string_equal(cfg.nodes[0].name, "alpha");
	assert_int_equal(cfg.nodes[0].line, 1);
	assert_string_equal(cfg.nodes[0].addr, "10.0.2.15");
	sin = (struct sockaddr_in *)&cfg.nodes[0].addr_sa;
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(cfg.nodes[0].addr_len, sizeof(*sin));
	assert_int_equal(sin->sin_addr.s_addr, inet_addr("10.0.2.15"));
	assert_string_equal(cfg.nodes[0].bootstrap_host, "10.0.2.15");
	assert_int_equal(cfg.nodes[0].bootstrap_port, 17515);
	config_node_bootstrap_sa(&cfg.nodes[0], &bsa);
	sin = (struct sockaddr_in *)&bsa;
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohs(sin->sin_port), 17515);
	assert_int_equal(sin->sin_addr.s_addr, inet_addr("10.0.2.15"));
	assert_int_equal(cfg.nodes[0].bootstrap_len, sizeof(*sin));
	assert_int_equal(cfg.nodes[0].delivery, DELIVERY_DATAGRAM);
}

static void t_all_global_keys(void **state)
{
	good("[global]\n"
	     "device = rxe0\n"
	     "port = 2\n"
	     "gid_index = 3\n"
	     "route = gid\n"
	     "recv_depth = 16\n"
	     "send_depth = 65536\n"
	     "max_message = 64M\n"
	     "queue_limit = 1GiB\n"
	     "max_channels = 1000000\n"
	     "memory_limit = 2G\n"
	     "qkey = 0x11223344\n"
	     "read_timeout = 250ms\n"
	     "reassembly_timeout = 3s\n"
	     "peer_timeout = 1500\n"
	     "busy_poll = yes\n"
	     "file_mode = 0640\n"
	     "dir_mode = 750\n"
	     "delivery = reliable\n"
	     "secret = s3cr;t and sixteen\n" NODE_A);
	assert_string_equal(cfg.device, "rxe0");
	assert_int_equal(cfg.port, 2);
	assert_int_equal(cfg.gid_index, 3);
	assert_int_equal(cfg.route, ROUTE_GID);
	assert_int_equal(cfg.recv_depth, 16);
	assert_int_equal(cfg.send_depth, 65536);
	assert_int_equal(cfg.max_message, 64 << 20);
	assert_int_equal(cfg.queue_limit, 1 << 30);
	assert_int_equal(cfg.max_channels, 1000000);
	assert_int_equal(cfg.memory_limit, 2ull << 30);
	assert_int_equal(cfg.qkey, 0x11223344);
	assert_int_equal(cfg.read_timeout_ms, 250);
	assert_int_equal(cfg.reassembly_timeout_ms, 3000);
	assert_int_equal(cfg.peer_timeout_ms, 1500);
	assert_int_equal(cfg.busy_poll, 1);
	assert_int_equal(cfg.file_mode, 0640);
	assert_int_equal(cfg.dir_mode, 0750);
	assert_int_equal(cfg.delivery, DELIVERY_RELIABLE);
	assert_string_equal(cfg.secret, "s3cr;t and sixteen");
	/* [global] came first, so the node inherits its delivery */
	assert_int_equal(cfg.nodes[0].delivery, DELIVERY_RELIABLE);
}

static void t_gid_index_auto_qkey_decimal(void **state)
{
	good("[global]\ngid_index = auto\nqkey = 4096\nbusy_poll = FALSE\n"
	     "read_timeout = 0\n" NODE_A);
	assert_int_equal(cfg.gid_index, -1);
	assert_int_equal(cfg.qkey, 4096);
	assert_int_equal(cfg.busy_poll, 0);
	assert_int_equal(cfg.read_timeout_ms, 0);
}

static void t_secret_file(void **state)
{
	good("[global]\nsecret_file = /etc/ibfs/secret\n" NODE_A);
	assert_string_equal(cfg.secret_file, "/etc/ibfs/secret");
	assert_string_equal(cfg.secret, "");
}

static void t_ipv6_addr_and_bootstrap(void **state)
{
	struct sockaddr_in6 *s6;
	struct in6_addr want;

	good("[node beta]\naddr = fd00::2\nbootstrap = [::1]:18516\n");
	inet_pton(AF_INET6, "fd00::2", &want);
	s6 = (struct sockaddr_in6 *)&cfg.nodes[0].addr_sa;
	assert_int_equal(s6->sin6_family, AF_INET6);
	assert_int_equal(cfg.nodes[0].addr_len, sizeof(*s6));
	assert_memory_equal(&s6->sin6_addr, &want, sizeof(want));
	assert_string_equal(cfg.nodes[0].bootstrap_host, "::1");
	assert_int_equal(cfg.nodes[0].bootstrap_port, 18516);
	config_node_bootstrap_sa(&cfg.nodes[0], &bsa);
	s6 = (struct sockaddr_in6 *)&bsa;
	assert_int_equal(s6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(s6->sin6_port), 18516);
	assert_memory_equal(&s6->sin6_addr, &in6addr_loopback,
			    sizeof(in6addr_loopback));
}

static void t_ipv6_bootstrap_default(void **state)
{
	struct sockaddr_in6 *s6;

	good("[node beta]\naddr = fd00::2\n");
	assert_string_equal(cfg.nodes[0].bootstrap_host, "fd00::2");
	config_node_bootstrap_sa(&cfg.nodes[0], &bsa);
	s6 = (struct sockaddr_in6 *)&bsa;
	assert_int_equal(s6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(s6->sin6_port), 17515);
}

static void t_gid_addr(void **state)
{
	struct sockaddr_ib *sib;
	struct sockaddr_in *sin;
	const uint8_t want[16] = {0xfe, 0x80, 0, 0, 0,	  0,	0, 0,
				  0,	0x02, 0, 0, 0xc9, 0x03, 0, 0x0a};

	good("[node gamma]\naddr = gid:fe80::2:0:c903:a\n"
	     "bootstrap = 10.0.0.3:9000\n");
	sib = (struct sockaddr_ib *)&cfg.nodes[0].addr_sa;
	assert_int_equal(sib->sib_family, AF_IB);
	assert_int_equal(be16toh(sib->sib_pkey), 0xffff);
	assert_memory_equal(&sib->sib_addr, want, 16);
	assert_int_equal(cfg.nodes[0].addr_len, sizeof(*sib));
	assert_string_equal(cfg.nodes[0].addr, "gid:fe80::2:0:c903:a");
	config_node_bootstrap_sa(&cfg.nodes[0], &bsa);
	sin = (struct sockaddr_in *)&bsa;
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohs(sin->sin_port), 9000);
	assert_int_equal(cfg.nodes[0].bootstrap_port, 9000);
}

static void t_bootstrap_host_only(void **state)
{
	good("[node a]\naddr = 10.0.0.1\nbootstrap = 10.0.0.9\n");
	assert_string_equal(cfg.nodes[0].bootstrap_host, "10.0.0.9");
	assert_int_equal(cfg.nodes[0].bootstrap_port, 17515);
}

static void t_node_delivery_override(void **state)
{
	/* [global] after the nodes still sets their default */
	good("[node a]\naddr = 10.0.0.1\ndelivery = reliable\n"
	     "[node b]\naddr = 10.0.0.2\n"
	     "[global]\ndelivery = datagram\n");
	assert_int_equal(cfg.nnodes, 2);
	assert_int_equal(cfg.nodes[0].delivery, DELIVERY_RELIABLE);
	assert_int_equal(cfg.nodes[1].delivery, DELIVERY_DATAGRAM);
	assert_int_equal(cfg.nodes[1].line, 4);
}

static void t_many_nodes(void **state)
{
	char text[8192];
	size_t used = 0;
	int i;

	for (i = 0; i < 40; i++)
		used += snprintf(text + used, sizeof(text) - used,
				 "[node n%d]\naddr = 10.0.1.%d\n", i, i + 1);
	good(text);
	assert_int_equal(cfg.nnodes, 40);
	assert_int_equal(config_node_index(&cfg, "n39"), 39);
	assert_int_equal(cfg.nodes[39].line, 79);
}

static void t_layout_comments_indent_crlf_bom(void **state)
{
	good("\xef\xbb\xbf; comment\r\n"
	     "# another\r\n"
	     "\r\n"
	     "  [global]   ; trailing comment\r\n"
	     "    port = 3 ; inline\r\n"
	     "    recv_depth = 32\r\n"
	     "\t[ node  alpha ]\r\n"
	     "\taddr: 10.0.2.15\r\n");
	assert_int_equal(cfg.port, 3);
	assert_int_equal(cfg.recv_depth, 32);
	assert_string_equal(cfg.nodes[0].name, "alpha");
	assert_int_equal(cfg.nodes[0].line, 7);
}

static void t_max_name(void **state)
{
	char text[256];

	snprintf(text, sizeof(text), "[node %063d]\naddr = 10.0.0.1\n", 7);
	good(text);
	assert_int_equal(strlen(cfg.nodes[0].name), 63);
}

static void t_load_file(void **state)
{
	char path[] = "/tmp/test_config_XXXXXX";
	const char text[] = "[global]\nport = 4\n" NODE_A;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), sizeof(text) - 1);
	close(fd);
	assert_int_equal(config_load(path, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.path, path);
	assert_int_equal(cfg.port, 4);
	assert_int_equal(cfg.nnodes, 1);
	unlink(path);
}

static void t_free_twice_and_reuse(void **state)
{
	good(NODE_A);
	config_free(&cfg);
	config_free(&cfg);
	assert_null(cfg.nodes);
	assert_int_equal(cfg.nnodes, 0);
	good("[node b]\naddr = 10.0.0.2\n");
	assert_string_equal(cfg.nodes[0].name, "b");
}

static void t_node_index(void **state)
{
	good(NODE_A "[node beta]\naddr = 10.0.2.16\n");
	assert_int_equal(config_node_index(&cfg, "alpha"), 0);
	assert_int_equal(config_node_index(&cfg, "beta"), 1);
	assert_int_equal(config_node_index(&cfg, "gamma"), -1);
	assert_int_equal(config_node_index(&cfg, NULL), -1);
}

/* ---- bad cases ------------------------------------------------------- */

BAD(t_syntax_error, "[global]\nport = 1\nthis is not a key\n" NODE_A, 3,
    "syntax error")
BAD(t_header_without_bracket, "[global\n" NODE_A, 1, "without ']'")
BAD(t_header_junk, "[global] port = 1\n" NODE_A, 1, "junk after")
BAD(t_unknown_section, NODE_A "\n[nodes beta]\naddr = 10.0.0.2\n", 4,
    "unknown section [nodes beta]")
BAD(t_key_outside_section, "port = 1\n" NODE_A, 1,
    "port: key before any [global]")
BAD(t_unknown_global_key, "[global]\nport = 1\ncolour = red\n" NODE_A, 3,
    "unknown key 'colour' in [global]")
BAD(t_unknown_node_key, NODE_A "port = 1\n", 3,
    "unknown key 'port' in [node alpha]")
BAD(t_duplicate_global_key, "[global]\nport = 1\n\nport = 2\n" NODE_A, 4,
    "duplicate key 'port' (first at line 2)")
BAD(t_duplicate_node_key, NODE_A "addr = 10.0.2.16\n", 3,
    "duplicate key 'addr' (first at line 2)")
BAD(t_duplicate_global_section, "[global]\n[global]\n" NODE_A, 2,
    "duplicate [global]")
BAD(t_duplicate_node, NODE_A "[node beta]\naddr = 10.0.0.2\n" NODE_A, 5,
    "duplicate node 'alpha' (first at line 1)")
BAD(t_indented_key_not_continuation,
    "[global]\n  port = 1\n  port = 2\n" NODE_A, 3, "duplicate key 'port'")
BAD(t_empty_value, "[global]\ndevice =\n" NODE_A, 2, "device: empty value")
BAD(t_number_junk, "[global]\nport = 1x\n" NODE_A, 2,
    "port: '1x' is not a number")
BAD(t_number_negative, "[global]\nrecv_depth = -16\n" NODE_A, 2,
    "recv_depth: '-16' is not a number")
BAD(t_number_word, "[global]\nmax_channels = many\n" NODE_A, 2,
    "max_channels: 'many' is not a number")
BAD(t_port_zero, "[global]\nport = 0\n" NODE_A, 2, "port: 0 is out of range")
BAD(t_port_256, "[global]\nport = 256\n" NODE_A, 2,
    "port: 256 is out of range 1..255")
BAD(t_gid_index_range, "[global]\ngid_index = 256\n" NODE_A, 2,
    "gid_index: 256 is out of range")
BAD(t_recv_depth_small, "[global]\nrecv_depth = 15\n" NODE_A, 2,
    "recv_depth: 15 is out of range 16..65536")
BAD(t_send_depth_big, "[global]\nsend_depth = 65537\n" NODE_A, 2,
    "send_depth: 65537 is out of range")
BAD(t_max_channels_zero, "[global]\nmax_channels = 0\n" NODE_A, 2,
    "max_channels: 0 is out of range")
BAD(t_qkey_too_big, "[global]\nqkey = 0x100000000\n" NODE_A, 2,
    "qkey: 0x100000000 is out of range")
BAD(t_number_overflow, "[global]\nport = 99999999999999999999999\n" NODE_A, 2,
    "port: 99999999999999999999999 is out of range")
BAD(t_bad_size, "[global]\nmax_message = 1Q\n" NODE_A, 2,
    "max_message: '1Q' is not a size")
BAD(t_size_too_big, "[global]\nmax_message = 65M\n" NODE_A, 2,
    "max_message: 65M is out of range 1..64M")
BAD(t_size_zero, "[global]\nqueue_limit = 0\n" NODE_A, 2,
    "queue_limit: 0 is out of range")
BAD(t_queue_below_message,
    "[global]\nmax_message = 8M\nqueue_limit = 4M\n" NODE_A, 3,
    "queue_limit 4M is below max_message 8M")
BAD(t_memory_below_message,
    "[global]\nmemory_limit = 512k\nmax_message = 1M\n" NODE_A, 3,
    "memory_limit 512k is below max_message 1M")
BAD(t_bad_duration, "[global]\nread_timeout = 5min\n" NODE_A, 2,
    "read_timeout: '5min' is not a duration")
BAD(t_duration_range, "[global]\npeer_timeout = 0\n" NODE_A, 2,
    "peer_timeout: 0 is out of range 1..86400000 ms")
BAD(t_duration_seconds_range, "[global]\nreassembly_timeout = 86401s\n" NODE_A,
    2, "reassembly_timeout: 86401s is out of range")
BAD(t_bad_bool, "[global]\nbusy_poll = maybe\n" NODE_A, 2,
    "busy_poll: 'maybe' is not yes/no")
BAD(t_bad_mode, "[global]\nfile_mode = 0800\n" NODE_A, 2,
    "file_mode: '0800' is not an octal mode")
BAD(t_mode_range, "[global]\ndir_mode = 01777\n" NODE_A, 2,
    "dir_mode: 01777 is out of range 0000..0777")
BAD(t_bad_route, "[global]\nroute = ospf\n" NODE_A, 2,
    "route: 'ospf' is not sa or gid")
BAD(t_bad_delivery, NODE_A "delivery = maybe\n", 3,
    "delivery: 'maybe' is not datagram or reliable")
BAD(t_long_device,
    "[global]\ndevice = "
    "0123456789012345678901234567890123456789012345678901234567890123\n" NODE_A,
    2, "device: must be 1..63 bytes long, not 64")
BAD(t_bad_addr, "[node a]\naddr = 10.0.0.300\n", 2,
    "addr: '10.0.0.300' is not an IPv4/IPv6 address, a host name or gid:GID")
BAD(t_addr_bad_hostname, "[node a]\naddr = alpha..example\n", 2,
    "addr: 'alpha..example' is not an IPv4/IPv6 address")
BAD(t_addr_short_ipv4, "[node a]\naddr = 10.1\n", 2,
    "addr: '10.1' is not an IPv4/IPv6 address")
BAD(t_bad_gid, "[node a]\naddr = gid:fe80::zz\nbootstrap = 10.0.0.1:1\n", 2,
    "addr: 'gid:fe80::zz' is not a GID")
BAD(t_gid_needs_bootstrap, "[global]\n[node a]\naddr = gid:fe80::1\n", 2,
    "node 'a': a GID addr needs bootstrap")
BAD(t_bootstrap_port_zero, NODE_A "bootstrap = 10.0.0.1:0\n", 3,
    "bootstrap: '0' is not a port")
BAD(t_bootstrap_port_big, NODE_A "bootstrap = 10.0.0.1:65536\n", 3,
    "bootstrap: '65536' is not a port")
BAD(t_bootstrap_port_junk, NODE_A "bootstrap = 10.0.0.1:80x\n", 3,
    "bootstrap: '80x' is not a port")
BAD(t_bootstrap_ipv6_bare, NODE_A "bootstrap = ::1:18515\n", 3,
    "bootstrap: '::1:18515': write IPv6 as [ADDR]:PORT")
BAD(t_bootstrap_bracket, NODE_A "bootstrap = [::1:18515\n", 3,
    "bootstrap: missing ']'")
BAD(t_bootstrap_gid_host, NODE_A "bootstrap = [gid:fe80::1]:1\n", 3,
    "bootstrap: 'gid:fe80::1' is not a numeric")
BAD(t_same_bootstrap,
    NODE_A "[node b]\naddr = 10.0.0.2\n"
	   "bootstrap = 10.0.2.15:17515\n",
    5, "node 'b' reuses bootstrap 10.0.2.15:17515 of 'alpha'")
BAD(t_name_slash, "[node a/b]\naddr = 10.0.0.1\n", 1,
    "node name 'a/b' contains '/'")
BAD(t_name_dot, "[node .hidden]\naddr = 10.0.0.1\n", 1,
    "node name '.hidden' starts with '.'")
BAD(t_name_empty, "[node]\naddr = 10.0.0.1\n", 1, "node name '' is empty")
BAD(t_name_long,
    "[node "
    "0123456789012345678901234567890123456789012345678901234567890123]\n"
    "addr = 10.0.0.1\n",
    1, "is longer than 63 bytes")
BAD(t_node_without_addr, NODE_A "\n[node beta]\nbootstrap = 10.0.0.2:1\n", 4,
    "node 'beta' has no addr")
BAD(t_empty_node_section, NODE_A "[node beta]\n", 3, "node 'beta' has no addr")
BAD(t_empty_file, "", 1, "no [node NAME] section")
BAD(t_only_comments, "; nothing\n\n", 2, "no [node NAME] section")
BAD(t_no_nodes, "[global]\nport = 1\n", 2, "no [node NAME] section")
BAD(t_secret_and_file,
    "[global]\nsecret = 0123456789abcdef\nsecret_file = /s\n" NODE_A, 3,
    "secret and secret_file are both set")
BAD(t_long_secret,
    "[global]\nsecret = "
    "0123456789012345678901234567890123456789012345678901234567890123"
    "0123456789012345678901234567890123456789012345678901234567890123"
    "0123456789012345678901234567890123456789012345678901234567890123"
    "0123456789012345678901234567890123456789012345678901234567890123\n" NODE_A,
    2, "line longer than 198 bytes")

/* The secret must never show up in a message. */
static void t_secret_not_echoed(void **state)
{
	bad("[global]\nsecret = hunter2hunter2hunter2\nsecret = "
	    "hunter3\n" NODE_A,
	    3, "duplicate key 'secret'");
	assert_null(strstr(err, "hunter"));
}

static void t_line_too_long(void **state)
{
	char text[512];

	snprintf(text, sizeof(text), "[global]\n\ndevice = %0300d\n" NODE_A, 0);
	bad(text, 3, "line longer than");
}

static void t_load_missing_file(void **state)
{
	int rc = config_load("/nonexistent/ibfs.ini", &cfg, err, sizeof(err));

	assert_int_equal(rc, -ENOENT);
	assert_string_equal(err, "/nonexistent/ibfs.ini: cannot open: "
				 "No such file or directory");
	assert_null(cfg.nodes);
}

/*
 * Anything but a regular file is refused at once, exit 2 in the daemon
 * and in ibfs -t: a FIFO would otherwise wait for a writer for ever
 * (alarm: a hang fails the test), a directory or a device is no config.
 */
static void t_load_not_regular(void **state)
{
	char dir[] = "/tmp/test_config_XXXXXX", fifo[64], want[128];

	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(10);
	assert_int_equal(config_load(fifo, &cfg, err, sizeof(err)), -EINVAL);
	alarm(0);
	snprintf(want, sizeof(want), "%s: not a regular file but a FIFO", fifo);
	assert_string_equal(err, want);
	assert_null(cfg.nodes);
	assert_int_equal(config_load(dir, &cfg, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: not a regular file but a directory",
		 dir);
	assert_string_equal(err, want);
	assert_int_equal(config_load("/dev/null", &cfg, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "/dev/null: not a regular file but a device");
	unlink(fifo);
	rmdir(dir);
}

static void t_load_nul_byte(void **state)
{
	char path[] = "/tmp/test_config_XXXXXX";
	const char text[] = "[global]\nport = 1\x00\n" NODE_A;
	char want[64];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), sizeof(text) - 1);
	close(fd);
	assert_int_equal(config_load(path, &cfg, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: NUL byte", path);
	assert_memory_equal(err, want, strlen(want));
	unlink(path);
}

static void t_load_file_error_line(void **state)
{
	char path[] = "/tmp/test_config_XXXXXX";
	const char text[] = NODE_A "\nqkey = 1\n";
	char want[64];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), sizeof(text) - 1);
	close(fd);
	assert_int_equal(config_load(path, &cfg, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:4: unknown key 'qkey'", path);
	assert_memory_equal(err, want, strlen(want));
	assert_null(cfg.nodes);
	unlink(path);
}

static void t_error_leaves_cfg_freed(void **state)
{
	good(NODE_A);
	config_free(&cfg);
	/* a reload that fails must leave neither the old nor a partial one */
	bad(NODE_A "[node beta]\naddr = 10.0.0.2\n[node beta]\n", 5,
	    "duplicate node");
	assert_string_equal(cfg.path, "");
	config_free(&cfg);
}

static void t_small_err_buffer(void **state)
{
	char small[8];

	assert_int_equal(config_load_string("[node a/b]\n", "t.ini", &cfg,
					    small, sizeof(small)),
			 -EINVAL);
	assert_string_equal(small, "t.ini:1");
	assert_int_equal(config_load_string("", "t.ini", &cfg, NULL, 0),
			 -EINVAL);
}

/* ---- config_parse_size ----------------------------------------------- */

static void t_parse_size_good(void **state)
{
	static const struct {
		const char *s;
		uint64_t v;
	} cases[] = {
		{"0", 0},
		{"64", 64},
		{"4k", 4096},
		{"4K", 4096},
		{"1M", 1 << 20},
		{"1m", 1 << 20},
		{"2G", 2ull << 30},
		{"3 MiB", 3 << 20},
		{"5KB", 5 << 10},
		{"7B", 7},
		{"16777216G", 1ull << 54},
		{"18446744073709551615", UINT64_MAX},
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = 1234;
		assert_int_equal(config_parse_size(cases[i].s, &v), 0);
		assert_true(v == cases[i].v);
	}
}

static void t_parse_size_bad(void **state)
{
	static const char *const cases[] = {
		"",	"k",	 "-1",		 "+1",
		" 1",	"1x",	 "1kk",		 "1iB",
		"1Ki",	"1KiBB", "1T",		 "0x10",
		"1.5M", "1 M B", "17179869184G", "18446744073709551616",
	};
	uint64_t v = 1234;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (config_parse_size(cases[i], &v) != -EINVAL)
			print_error("accepted '%s'\n", cases[i]);
		assert_int_equal(config_parse_size(cases[i], &v), -EINVAL);
		assert_true(v == 1234);
	}
	assert_int_equal(config_parse_size(NULL, &v), -EINVAL);
}

/* ---- config_select_local --------------------------------------------- */

static void t_select_by_name(void **state)
{
	good(NODE_A "[node beta]\naddr = 10.0.2.16\n");
	assert_int_equal(config_select_local(&cfg, "beta", err, sizeof(err)),
			 0);
	assert_int_equal(cfg.local, 1);
}

static void t_select_unknown(void **state)
{
	good(NODE_A "[node beta]\naddr = 10.0.2.16\n");
	assert_int_equal(config_select_local(&cfg, "gamma", err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err,
			    "t.ini: no node named 'gamma'; nodes: alpha, beta");
	assert_int_equal(cfg.local, -1);
}

/*
 * A large config's nodes are not all listed: a few whole names, how many
 * were left out and how many there are; never a name cut in two, even
 * when the message buffer is short.
 */
static void t_select_unknown_many(void **state)
{
	char small[120];
	const char *more;

	good("[node n[00001-10000]]\naddr = 10.0.2.15\n"
	     "bootstrap = 10.0.2.15:[20001-30000]\n");
	assert_int_equal(config_select_local(&cfg, "nope", err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "t.ini: no node named 'nope'; nodes: n00001, "
				 "n00002, n00003, n00004, n00005 and 9995 "
				 "more (10000 in all)");
	assert_int_equal(
		config_select_local(&cfg, "nope", small, sizeof(small)),
		-ENOENT);
	more = strstr(small, " and ");
	assert_non_null(more);
	assert_true(more[-1] >= '0' && more[-1] <= '9'); /* a whole name */
	assert_non_null(strstr(more, " more (10000 in all)"));
	assert_true(strlen(small) < sizeof(small) - 1);
}

static void t_select_hostname(void **state)
{
	char host[HOST_NAME_MAX + 1], text[512];

	assert_int_equal(gethostname(host, sizeof(host)), 0);
	snprintf(text, sizeof(text), NODE_A "[node %s]\naddr = 10.0.2.16\n",
		 host);
	good(text);
	assert_int_equal(config_select_local(&cfg, NULL, err, sizeof(err)), 0);
	assert_int_equal(cfg.local, 1);
}

static void t_select_hostname_missing(void **state)
{
	char host[HOST_NAME_MAX + 1];

	assert_int_equal(gethostname(host, sizeof(host)), 0);
	good("[node not-this-host-x]\naddr = 10.0.0.1\n");
	assert_int_equal(config_select_local(&cfg, NULL, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, host));
	assert_non_null(strstr(err, "(the host name)"));
	assert_non_null(strstr(err, "nodes: not-this-host-x"));
}

/* ---- hostlists ------------------------------------------------------- */

/* A section names many nodes; list values pair up with them in order. */
static void t_hostlist_pairs(void **state)
{
	const struct sockaddr_in *sin;

	good("[node cn[001-004]]\naddr = 10.0.2.[15-18]\n"
	     "bootstrap = 10.0.2.15:[18601-18604]\n");
	assert_int_equal(cfg.nnodes, 4);
	assert_string_equal(cfg.nodes[0].name, "cn001");
	assert_string_equal(cfg.nodes[3].name, "cn004");
	assert_string_equal(cfg.nodes[3].addr, "10.0.2.18");
	assert_int_equal(cfg.nodes[3].bootstrap_port, 18604);
	config_node_bootstrap_sa(&cfg.nodes[3], &bsa);
	sin = (const struct sockaddr_in *)&bsa;
	assert_int_equal(ntohs(sin->sin_port), 18604);
	assert_int_equal(sin->sin_addr.s_addr, inet_addr("10.0.2.15"));
	assert_int_equal(cfg.nodes[2].line, 1);
	/* a bootstrap host that is the node's addr costs no sockaddr of its
	 * own (issue 33: 48 bytes a node); another host keeps one */
	assert_null(cfg.nodes[0].bootstrap_own);
	config_node_bootstrap_sa(&cfg.nodes[0], &bsa);
	assert_int_equal(ntohs(sin->sin_port), 18601);
	assert_int_equal(sin->sin_addr.s_addr, inet_addr("10.0.2.15"));
	assert_non_null(cfg.nodes[3].bootstrap_own);
}

/* One value is every node's; sections of one and many mix. */
static void t_hostlist_one_value(void **state)
{
	good("[global]\ndelivery = reliable\n"
	     "[node n[1-3],login]\naddr = 10.0.2.15\n"
	     "bootstrap = 10.0.2.15:[18601-18604]\ndelivery = datagram\n"
	     "[node io]\naddr = 10.0.2.16\n");
	assert_int_equal(cfg.nnodes, 5);
	assert_string_equal(cfg.nodes[3].name, "login");
	assert_string_equal(cfg.nodes[3].addr, "10.0.2.15");
	assert_int_equal(cfg.nodes[3].bootstrap_port, 18604);
	assert_int_equal(cfg.nodes[1].delivery, DELIVERY_DATAGRAM);
	assert_int_equal(cfg.nodes[4].delivery, DELIVERY_RELIABLE);
	assert_int_equal(config_node_index(&cfg, "n2"), 1);
}

/* 256 nodes in a dozen lines, as the scale issue asks. */
static void t_hostlist_256(void **state)
{
	good("[global]\nroute = gid\n"
	     "[node rack[1-4]n[01-64]]\naddr = 10.0.2.15\n"
	     "bootstrap = 10.0.2.15:[18601-18856]\n");
	assert_int_equal(cfg.nnodes, 256);
	assert_string_equal(cfg.nodes[64].name, "rack2n01");
	assert_int_equal(cfg.nodes[255].bootstrap_port, 18856);
}

/* What is wrong with a list is said on its line. */
static void t_hostlist_errors(void **state)
{
	bad("[node n[3-1]]\naddr = 10.0.2.15\n", 1, "runs backwards");
	bad("[node n[1-3]]\naddr = 10.0.2.[15-16]\n", 2,
	    "addr: 2 values for the 3 nodes of [node n[1-3]]");
	bad("[node n[1-2]]\naddr = 10.0.2.[15-17]\n", 2,
	    "addr: more values for the 2 nodes");
	bad("[node a[1-2]]\naddr = 10.0.2.[15-16]\n"
	    "bootstrap = 10.0.2.15:[18601-18602]\n"
	    "[node a2]\naddr = 10.0.2.17\n",
	    4, "duplicate node 'a2' (first at line 1)");
	bad("[node n[1-2]]\naddr = %n..x\n", 2,
	    "addr: 'n1..x' is not an IPv4/IPv6 address");
	bad("[node n[1-2]]\naddr = 10.0.2.15\n", 1,
	    "node 'n2' reuses bootstrap 10.0.2.15:17515 of 'n1'");
}

/* The inputs that load, and what they load to. */
static int run_good(void)
{
	const struct CMUnitTest tests[] = {
		T(t_defaults),
		T(t_all_global_keys),
		T(t_gid_index_auto_qkey_decimal),
		T(t_secret_file),
		T(t_ipv6_addr_and_bootstrap),
		T(t_ipv6_bootstrap_default),
		T(t_gid_addr),
		T(t_bootstrap_host_only),
		T(t_node_delivery_override),
		T(t_many_nodes),
		T(t_layout_comments_indent_crlf_bom),
		T(t_max_name),
		T(t_load_file),
		T(t_free_twice_and_reuse),
		T(t_node_index),
		T(t_hostlist_pairs),
		T(t_hostlist_one_value),
		T(t_hostlist_256),
		T(t_hostlist_errors),
	};

	return cmocka_run_group_tests_name("good", tests, NULL, NULL);
}

/* The inputs that do not, each with its file:line message. */
static int run_bad(void)
{
	const struct CMUnitTest tests[] = {
		T(t_syntax_error),
		T(t_header_without_bracket),
		T(t_header_junk),
		T(t_unknown_section),
		T(t_key_outside_section),
		T(t_unknown_global_key),
		T(t_unknown_node_key),
		T(t_duplicate_global_key),
		T(t_duplicate_node_key),
		T(t_duplicate_global_section),
		T(t_duplicate_node),
		T(t_indented_key_not_continuation),
		T(t_empty_value),
		T(t_number_junk),
		T(t_number_negative),
		T(t_number_word),
		T(t_port_zero),
		T(t_port_256),
		T(t_gid_index_range),
		T(t_recv_depth_small),
		T(t_send_depth_big),
		T(t_max_channels_zero),
		T(t_qkey_too_big),
		T(t_number_overflow),
		T(t_bad_size),
		T(t_size_too_big),
		T(t_size_zero),
		T(t_queue_below_message),
		T(t_memory_below_message),
		T(t_bad_duration),
		T(t_duration_range),
		T(t_duration_seconds_range),
		T(t_bad_bool),
		T(t_bad_mode),
		T(t_mode_range),
		T(t_bad_route),
		T(t_bad_delivery),
		T(t_long_device),
		T(t_bad_addr),
		T(t_addr_bad_hostname),
		T(t_addr_short_ipv4),
		T(t_bad_gid),
		T(t_gid_needs_bootstrap),
		T(t_bootstrap_port_zero),
		T(t_bootstrap_port_big),
		T(t_bootstrap_port_junk),
		T(t_bootstrap_ipv6_bare),
		T(t_bootstrap_bracket),
		T(t_bootstrap_gid_host),
		T(t_same_bootstrap),
		T(t_name_slash),
		T(t_name_dot),
		T(t_name_empty),
		T(t_name_long),
		T(t_node_without_addr),
		T(t_empty_node_section),
		T(t_empty_file),
		T(t_only_comments),
		T(t_no_nodes),
		T(t_secret_and_file),
		T(t_long_secret),
		T(t_secret_not_echoed),
		T(t_line_too_long),
	};

	return cmocka_run_group_tests_name("bad", tests, NULL, NULL);
}

/* Loading files, config_parse_size and choosing the local node. */
static int run_files(void)
{
	const struct CMUnitTest tests[] = {
		T(t_load_missing_file),	      T(t_load_nul_byte),
		T(t_load_file_error_line),    T(t_error_leaves_cfg_freed),
		T(t_small_err_buffer),	      T(t_parse_size_good),
		T(t_parse_size_bad),	      T(t_select_by_name),
		T(t_select_unknown),	      T(t_select_hostname),
		T(t_select_hostname_missing), T(t_select_unknown_many),
		T(t_load_not_regular),
	};

	return cmocka_run_group_tests_name("files", tests, NULL, NULL);
}

/* Three groups, so no list of tests grows past a screenful. */
int main(void)
{
	return run_good() + run_bad() + run_files();
}
