/*
 * The bootstrap hello: a fixed big-endian layout that round-trips, and a
 * decoder that refuses bad magic, version, length, name and fields.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "unit.h"
#include "bootstrap.h"

/* A hello as the bed's alpha would send it. */
static void hello_alpha(struct hello *h)
{
	memset(h, 0, sizeof(*h));
	h->version = HELLO_VERSION;
	strcpy(h->name, "alpha");
	h->delivery = DELIVERY_DATAGRAM;
	h->addr.qpn = 0x000011;
	h->addr.qkey = 0x1b1f5000;
	h->addr.lid = 0;
	h->addr.mtu = IBV_MTU_1024;
	h->addr.link_layer = IBV_LINK_LAYER_ETHERNET;
	h->addr.gid.raw[10] = h->addr.gid.raw[11] = 0xff;
	h->addr.gid.raw[12] = 10;
	h->addr.gid.raw[15] = 15;
}

/* Encode then decode gives back every field. */
static void test_roundtrip(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello h, d;

	hello_alpha(&h);
	h.addr.lid = 0x1234;
	h.delivery = DELIVERY_RELIABLE;
	assert_int_equal(hello_encode(&h, buf), HELLO_WIRE_LEN);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), 0);
	assert_int_equal(d.version, HELLO_VERSION);
	assert_string_equal(d.name, "alpha");
	assert_int_equal(d.delivery, DELIVERY_RELIABLE);
	assert_int_equal(d.addr.qpn, 0x11);
	assert_int_equal(d.addr.qkey, 0x1b1f5000);
	assert_int_equal(d.addr.lid, 0x1234);
	assert_int_equal(d.addr.mtu, IBV_MTU_1024);
	assert_int_equal(d.addr.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_memory_equal(&d.addr.gid, &h.addr.gid, sizeof(h.addr.gid));
}

/* The layout is fixed and big-endian, whatever the host. */
static void test_layout(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN], want_qpn[4] = {0, 0, 0, 0x11};
	struct hello h;
	char name[CONFIG_NAME_MAX];
	int i;

	hello_alpha(&h);
	memset(buf, 0xee, sizeof(buf));
	hello_encode(&h, buf);
	assert_memory_equal(buf, "IBHH", 4);
	assert_int_equal(buf[4], 0);
	assert_int_equal(buf[5], HELLO_VERSION);
	memset(name, 0, sizeof(name));
	strcpy(name, "alpha");
	assert_memory_equal(buf + 8, name, sizeof(name)); /* NUL-padded */
	assert_memory_equal(buf + 72, want_qpn, 4);
	assert_int_equal(buf[82], IBV_MTU_1024);
	assert_memory_equal(buf + 84, h.addr.gid.raw, 16);
	for (i = 100; i < HELLO_WIRE_LEN; i++)
		assert_int_equal(buf[i], 0); /* flags and reserved */
}

/* A longest (63-byte) name survives. */
static void test_long_name(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello h, d;

	hello_alpha(&h);
	memset(h.name, 'n', CONFIG_NAME_MAX - 1);
	h.name[CONFIG_NAME_MAX - 1] = '\0';
	hello_encode(&h, buf);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), 0);
	assert_string_equal(d.name, h.name);
}

/* Encode alpha into buf for the negative cases. */
static void good(uint8_t *buf)
{
	struct hello h;

	hello_alpha(&h);
	hello_encode(&h, buf);
}

static void test_bad_magic(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello d;

	good(buf);
	buf[0] ^= 0x20;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
}

static void test_bad_version(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello d;

	good(buf);
	buf[5] = HELLO_VERSION + 1;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EPROTO);
	buf[4] = 1;
	buf[5] = HELLO_VERSION;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EPROTO);
}

static void test_truncated(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello d;

	good(buf);
	assert_int_equal(hello_decode(&d, buf, HELLO_WIRE_LEN - 1), -EBADMSG);
	assert_int_equal(hello_decode(&d, buf, 0), -EBADMSG);
	assert_int_equal(hello_decode(&d, NULL, HELLO_WIRE_LEN), -EBADMSG);
}

static void test_unterminated_name(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello d;

	good(buf);
	memset(buf + 8, 'x', CONFIG_NAME_MAX);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
}

/* Names that config would refuse are refused on the wire too. */
static void test_bad_names(void **state)
{
	static const char *const bad[] = {"", "a/b", ".hidden"};
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello d;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		good(buf);
		memset(buf + 8, 0, CONFIG_NAME_MAX);
		memcpy(buf + 8, bad[i], strlen(bad[i]));
		assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
	}
}

/* Fields out of range: delivery, QPN (0 or over 24 bits), MTU. */
static void test_bad_fields(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN];
	struct hello d;

	good(buf);
	buf[6] = 7;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
	good(buf);
	memset(buf + 72, 0, 4);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
	good(buf);
	buf[72] = 1;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
	good(buf);
	buf[82] = 0;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
	good(buf);
	buf[82] = IBV_MTU_4096 + 1;
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), -EBADMSG);
}

/* A longer buffer is fine: the hello is its first HELLO_WIRE_LEN bytes. */
static void test_longer_buffer(void **state)
{
	uint8_t buf[HELLO_WIRE_LEN + 16];
	struct hello d;

	memset(buf, 0x55, sizeof(buf));
	good(buf);
	assert_int_equal(hello_decode(&d, buf, sizeof(buf)), 0);
	assert_string_equal(d.name, "alpha");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_long_name),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_bad_version),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_unterminated_name),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_longer_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
