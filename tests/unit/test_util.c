/*
 * test_util.c - bitmaps, bounded buffers, the error table, the JSON
 * writer and reader (the reader behind request bodies).
 */
#include <inttypes.h>

#include <gpufleet/bitmap.h>
#include <gpufleet/err.h>

#include "helpers.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/fmt.h"
#include "util/hash.h"
#include "util/json.h"
#include "util/mem.h"
#include "util/siphash.h"
#include "util/str.h"

static void test_bitmap_list_roundtrip(void **state)
{
	(void)state;
	struct gf_bitmap b, c;
	char out[128];
	assert_int_equal(gf_bitmap_parse_list(&b, "0-7,16-23,40"), 0);
	assert_int_equal(gf_bitmap_count(&b), 17);
	assert_true(gf_bitmap_isset(&b, 16));
	assert_false(gf_bitmap_isset(&b, 8));
	assert_int_equal(gf_bitmap_format_list(&b, out, sizeof(out)), 12);
	assert_string_equal(out, "0-7,16-23,40");
	assert_int_equal(gf_bitmap_parse_list(&c, out), 0);
	assert_true(gf_bitmap_equal(&b, &c));
	assert_int_equal(gf_bitmap_next(&b, 8), 16);
	assert_int_equal(gf_bitmap_next(&b, 41), -1);
	/* the highest id fits, one more does not */
	assert_int_equal(gf_bitmap_set(&b, GF_BITMAP_BITS - 1), 0);
	assert_int_equal(gf_bitmap_set(&b, GF_BITMAP_BITS), GF_ERANGE);
}

static void test_bitmap_bad_lists(void **state)
{
	(void)state;
	struct gf_bitmap b;
	assert_int_equal(gf_bitmap_parse_list(&b, "1-"), GF_EPARSE);
	assert_int_equal(gf_bitmap_parse_list(&b, "5-3"), GF_EPARSE);
	assert_int_equal(gf_bitmap_parse_list(&b, "a"), GF_EPARSE);
	assert_int_equal(gf_bitmap_parse_list(&b, "1,,2"), GF_EPARSE);
	assert_int_equal(gf_bitmap_parse_list(&b, "99999"), GF_ERANGE);
	assert_int_equal(gf_bitmap_parse_list(&b, ""), 0);
	assert_true(gf_bitmap_is_empty(&b));
	char small[4];
	gf_bitmap_parse_list(&b, "0,2,4,6");
	assert_int_equal(gf_bitmap_format_list(&b, small, sizeof(small)),
			 GF_ETOOBIG);
}

static void test_buf_cap(void **state)
{
	(void)state;
	struct gf_buf b;
	gf_buf_init(&b, 8);
	assert_string_equal(gf_buf_str(&b), "");
	assert_int_equal(gf_buf_puts(&b, "abcd"), 0);
	assert_int_equal(gf_buf_printf(&b, "%d", 123), 0);
	assert_string_equal(gf_buf_str(&b), "abcd123");
	assert_int_equal(gf_buf_error(&b), 0);
	/* over the cap: refused, content unchanged */
	assert_int_equal(gf_buf_puts(&b, "xy"), GF_ETOOBIG);
	assert_string_equal(gf_buf_str(&b), "abcd123");
	/* sticky: a piece that would fit is refused too, so no page can
	 * come out with a hole where "xy" was */
	assert_int_equal(gf_buf_putc(&b, 'z'), GF_ETOOBIG);
	assert_int_equal(gf_buf_printf(&b, "%s", ""), GF_ETOOBIG);
	assert_int_equal(b.len, 7);
	assert_int_equal(gf_buf_error(&b), GF_ETOOBIG);
	gf_buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_int_equal(gf_buf_error(&b), 0);
	assert_int_equal(gf_buf_puts(&b, "12345678"), 0);
	assert_int_equal(gf_buf_putc(&b, 'z'), GF_ETOOBIG);
	gf_buf_release(&b);
	assert_null(b.data);
}

/* gf_fmt says a cut with GF_ETOOBIG; gf_note marks it with "..." */
static void test_fmt(void **state)
{
	(void)state;
	char d[8];
	assert_int_equal(gf_fmt(d, sizeof d, "%s/%d", "ab", 12), 0);
	assert_string_equal(d, "ab/12");
	assert_int_equal(gf_fmt(d, sizeof d, "%s", "1234567"), 0);
	assert_int_equal(gf_fmt(d, sizeof d, "%s", "12345678"), GF_ETOOBIG);
	assert_string_equal(d, "1234567");
	assert_int_equal(gf_fmt(d, 0, "x"), GF_EINVAL);
	gf_note(d, sizeof d, "%s", "short");
	assert_string_equal(d, "short");
	gf_note(d, sizeof d, "%s", "a longer message");
	assert_string_equal(d, "a lo...");
	char t[3];
	gf_note(t, sizeof t, "%s", "abcdef");
	assert_string_equal(t, "ab");
}

/* the hash index against a plain array: puts, gets, deletes that shift
 * runs back, over many rounds of churn */
static uint32_t hkeys[4096];
static bool heq(const void *key, uint32_t row)
{
	return hkeys[row] == *(const uint32_t *)key;
}

static void test_hmap(void **state)
{
	(void)state;
	struct gf_hmap m;
	bool in[4096] = { false };
	gf_hmap_init(&m);
	uint64_t x = 1;
	for (uint32_t i = 0; i < 4096; i++)
		hkeys[i] = i * 2654435761u;
	for (int round = 0; round < 20000; round++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t r = (uint32_t)(x >> 33) % 4096;
		uint64_t h = gf_hash_bytes(&hkeys[r], sizeof(hkeys[r])) &
			     (r & 1 ? ~0ull : 0x3full); /* even keys collide */
		if (in[r]) {
			assert_int_equal(gf_hmap_get(&m, h, heq, &hkeys[r]), r);
			if (x & (1ull << 60)) {
				assert_true(gf_hmap_del(&m, h, heq, &hkeys[r]));
				in[r] = false;
			}
		} else {
			assert_int_equal(gf_hmap_get(&m, h, heq, &hkeys[r]),
					 -1);
			assert_int_equal(gf_hmap_put(&m, h, r), 0);
			in[r] = true;
		}
	}
	size_t n = 0;
	for (uint32_t r = 0; r < 4096; r++) {
		uint64_t h = gf_hash_bytes(&hkeys[r], sizeof(hkeys[r])) &
			     (r & 1 ? ~0ull : 0x3full);
		assert_int_equal(gf_hmap_get(&m, h, heq, &hkeys[r]),
				 in[r] ? (int64_t)r : -1);
		n += in[r];
	}
	assert_int_equal(m.n, n);
	assert_int_not_equal(gf_hash_str("a"), gf_hash_str("b"));
	assert_int_not_equal(gf_hash_mix(1, 2), gf_hash_mix(2, 1));
	gf_hmap_release(&m);
}

static void test_err_table(void **state)
{
	(void)state;
	assert_string_equal(gf_err_name(GF_EPARSE), "GF_EPARSE");
	assert_string_equal(gf_strerror(GF_ETOOBIG),
			    "input exceeds a size limit");
	assert_string_equal(gf_strerror(-2), "No such file or directory");
	assert_string_equal(gf_err_name(-2), "ERRNO");
	assert_string_equal(gf_strerror(0), "success");
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_err_set(&e, GF_EINVAL, "bad '%s'", "x"), GF_EINVAL);
	assert_string_equal(e.msg, "bad 'x'");
	assert_int_equal(gf_err_set(NULL, GF_EINVAL, "ignored"), GF_EINVAL);
}

/* White space between tokens dropped; strings (quotes, escapes, spaces)
 * as they are; the value the same. */
static void test_json_squeeze(void **state)
{
	(void)state;
	char s[] = "{\n  \"a b\": [ 1 ,\t2 ],\r\n  \"q\": \"x \\\" , y\\\\\" ,"
		   " \"e\" : { } }\n";
	size_t n = gf_json_squeeze(s, strlen(s));
	assert_string_equal(
		s, "{\"a b\":[1,2],\"q\":\"x \\\" , y\\\\\",\"e\":{}}");
	assert_int_equal(n, strlen(s));
	struct gf_jv *v;
	struct gf_err e;
	assert_int_equal(gf_jv_parse(s, n, &v, &e), 0);
	assert_string_equal(gf_jv_str(gf_jv_get(v, "q")), "x \" , y\\");
	gf_jv_free(v);
	char none[] = "[]";
	assert_int_equal(gf_json_squeeze(none, 2), 2);
	assert_string_equal(none, "[]");
}

static void test_json_writer(void **state)
{
	(void)state;
	struct gf_buf b;
	struct gf_json j;
	gf_json_open(&j, &b, 8); /* the cap is the buffer's */
	gf_json_str(&j, NULL, "longer than eight");
	assert_int_not_equal(gf_json_error(&j), 0);
	gf_buf_release(&b);
	gf_json_open(&j, &b, 4096);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "s", "a\"b\\c\n\x01");
	gf_json_int(&j, "i", -3);
	gf_json_arr_begin(&j, "empty");
	gf_json_arr_end(&j);
	gf_json_arr_begin(&j, "a");
	gf_json_bool(&j, NULL, true);
	gf_json_null(&j, NULL);
	gf_json_arr_end(&j);
	gf_json_obj_end(&j);
	assert_int_equal(gf_json_error(&j), 0);
	assert_string_equal(gf_buf_str(&b),
			    "{\n  \"s\": \"a\\\"b\\\\c\\n\\u0001\",\n"
			    "  \"i\": -3,\n  \"empty\": [],\n"
			    "  \"a\": [\n    true,\n    null\n  ]\n}\n");
	gf_buf_release(&b);
	/* a full buffer is a sticky error */
	gf_buf_init(&b, 4);
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "long", "value");
	gf_json_obj_end(&j);
	assert_int_equal(gf_json_error(&j), GF_ETOOBIG);
	gf_buf_release(&b);
}

/* The writer's integers and escapes as printf and the byte-at-a-time
 * escaping wrote them: every byte 1..255, the integers' edges. */
static void test_json_writer_bytes(void **state)
{
	(void)state;
	char all[256], want[2048];
	size_t w = 0;
	want[w++] = '"';
	for (int c = 1; c < 256; c++) {
		all[c - 1] = (char)c;
		const char *esc = c == '"'    ? "\\\""
				  : c == '\\' ? "\\\\"
				  : c == '\n' ? "\\n"
				  : c == '\t' ? "\\t"
				  : c == '\r' ? "\\r"
					      : NULL;
		if (esc)
			w += (size_t)snprintf(want + w, sizeof(want) - w, "%s",
					      esc);
		else if (c < 0x20)
			w += (size_t)snprintf(want + w, sizeof(want) - w,
					      "\\u%04x", c);
		else
			want[w++] = (char)c;
	}
	all[255] = '\0';
	want[w++] = '"';
	want[w] = '\0';
	struct gf_buf b;
	struct gf_json j;
	gf_buf_init(&b, 4096);
	gf_json_init(&j, &b);
	gf_json_str(&j, NULL, all);
	assert_string_equal(gf_buf_str(&b), want);
	gf_buf_release(&b);
	static const int64_t ints[] = { 0,   1,		-1,	   9,	     10,
					-10, 123456789, INT64_MAX, INT64_MIN };
	for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++) {
		char ref[64];
		snprintf(ref, sizeof(ref), "%" PRId64, ints[k]);
		gf_buf_init(&b, 64);
		gf_json_init(&j, &b);
		gf_json_int(&j, NULL, ints[k]);
		assert_string_equal(gf_buf_str(&b), ref);
		gf_buf_release(&b);
		snprintf(ref, sizeof(ref), "%" PRIu64, (uint64_t)ints[k]);
		gf_buf_init(&b, 64);
		gf_json_init(&j, &b);
		gf_json_uint(&j, NULL, (uint64_t)ints[k]);
		assert_string_equal(gf_buf_str(&b), ref);
		gf_buf_release(&b);
	}
}

/* Reading: an absent member reads as null; a value dumped back as
 * compact text, a member added only where absent. */
static void test_json_reader(void **state)
{
	(void)state;
	static const char doc[] = "{\"a\": [1, \"x\"], \"t\": \"v\"}";
	struct gf_jv *v;
	struct gf_err e;
	assert_int_equal(gf_jv_parse(doc, strlen(doc), &v, &e), 0);
	assert_int_equal(gf_jv_type(v), GF_JV_OBJ);
	assert_int_equal(gf_jv_type(gf_jv_get(v, "a")), GF_JV_ARR);
	assert_int_equal(gf_jv_type(gf_jv_get(v, "absent")), GF_JV_NULL);
	assert_int_equal(gf_jv_type(NULL), GF_JV_NULL);
	struct gf_buf b;
	gf_buf_init(&b, 4096);
	assert_int_equal(gf_jv_dump(v, "t", "w", &b), 0);
	assert_string_equal(gf_buf_str(&b), "{\"a\":[1,\"x\"],\"t\":\"v\"}");
	gf_buf_release(&b);
	gf_buf_init(&b, 4096);
	assert_int_equal(gf_jv_dump(v, "team", "vision", &b), 0);
	assert_string_equal(gf_buf_str(&b), "{\"a\":[1,\"x\"],\"t\":\"v\","
					    "\"team\":\"vision\"}");
	gf_buf_release(&b);
	gf_buf_init(&b, 8);
	assert_int_equal(gf_jv_dump(v, NULL, NULL, &b), GF_ETOOBIG);
	gf_buf_release(&b);
	gf_jv_free(v);
}

/* The paper's test vector (key 00..0f, message 00..0e), and the empty
 * message of the reference implementation's vectors. */
/* gf_grow: doubling from first, new elements zeroed, old ones kept. */
static void test_grow(void **state)
{
	(void)state;
	size_t cap = 0;
	int *a = gf_grow(NULL, sizeof(*a), &cap, 0, 4);
	assert_int_equal(cap, 4);
	a[3] = 7;
	int *same = gf_grow(a, sizeof(*a), &cap, 3, 4);
	assert_ptr_equal(same, a);
	a = gf_grow(a, sizeof(*a), &cap, 9, 4);
	assert_int_equal(cap, 16);
	assert_int_equal(a[3], 7);
	for (int i = 4; i < 16; i++)
		assert_int_equal(a[i], 0);
	gf_free(a);
}

static void test_siphash(void **state)
{
	(void)state;
	uint8_t key[16], msg[15];
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	assert_true(gf_siphash24(key, msg, 15) == 0xa129ca6149be45e5ULL);
	assert_true(gf_siphash24(key, msg, 0) == 0x726fdb47dd0e0e31ULL);
	assert_true(gf_siphash24(key, msg, 8) == 0x93f5f5799a932462ULL);
}

/* the clocks: wall time in the epoch's range, monotonic never going
 * back, deadlines normalised */
static void test_str(void **state)
{
	(void)state;
	char a[] = " \t key = 1 \r\n";
	assert_string_equal(gf_str_trim(a), "key = 1");
	char b[] = " \t\r\n";
	assert_string_equal(gf_str_trim(b), "");
	const char *s = "n[1-3,5],m(x,y),z";
	const char *e = gf_str_item_end(s, ',', '[', ']');
	assert_int_equal(e - s, 8);
	e = gf_str_item_end(e + 1, ',', '(', ')');
	assert_string_equal(e, ",z");
	assert_string_equal(gf_str_item_end("a[b,c", ',', '[', ']'), "");
}

static void test_clock(void **state)
{
	(void)state;
	int64_t ms = gf_clock_wall_ms(), us = gf_clock_wall_us();
	int64_t ms2 = gf_clock_wall_ms();
	assert_true(ms > INT64_C(1600000000000));	  /* after 2020 */
	assert_true(ms <= us / 1000 && us / 1000 <= ms2); /* the same clock */
	double a = gf_clock_ms(), b = gf_clock_ms();
	assert_true(b >= a);
	double s = gf_clock_s();
	assert_true(s * 1e3 >= b - 1);
	assert_true(gf_clock_thread_cpu_ms() >= 0);
	struct timespec t = { .tv_sec = 10, .tv_nsec = 999000000L };
	gf_clock_add_ms(&t, 1500);
	assert_int_equal(t.tv_sec, 12);
	assert_int_equal(t.tv_nsec, 499000000L);
	gf_clock_add_ms(&t, -5);
	assert_int_equal(t.tv_sec, 12);
	struct timespec now, d;
	clock_gettime(CLOCK_MONOTONIC, &now);
	gf_clock_deadline(&d, 250);
	assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
	double gap = (double)(d.tv_sec - now.tv_sec) * 1e3 +
		     (double)(d.tv_nsec - now.tv_nsec) / 1e6;
	assert_true(gap >= 250);
}

/* util/duration.h: each form, a bare number in the caller's unit, and
 * each bad one with its reason; the shortest text back. */
static void test_duration(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		double bare, secs;
	} good[] = {
		{ "30", GF_DUR_BARE_MIN, 1800 },
		{ "30", GF_DUR_BARE_S, 30 },
		{ "250", GF_DUR_BARE_MS, 0.25 },
		{ "1:30", GF_DUR_BARE_S, 90 },
		{ "1:00:00", GF_DUR_BARE_S, 3600 },
		{ "2-12", GF_DUR_BARE_S, 216000 },
		{ "2-12:30", GF_DUR_BARE_S, 217800 },
		{ "2-12:30:15", GF_DUR_BARE_S, 217815 },
		{ "0-0", GF_DUR_BARE_S, 0 },
		{ "90s", GF_DUR_BARE_MIN, 90 },
		{ "500ms", GF_DUR_BARE_S, 0.5 },
		{ "5m", GF_DUR_BARE_S, 300 },
		{ "2h", GF_DUR_BARE_S, 7200 },
		{ "1d", GF_DUR_BARE_S, 86400 },
		{ "1.5h", GF_DUR_BARE_S, 5400 },
		{ ".5s", GF_DUR_BARE_S, 0.5 },
		{ "120:00", GF_DUR_BARE_S, 7200 }, /* M:S, M unbounded */
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		double v = -1;
		const char *why = NULL;
		int rc = gf_duration_parse(good[i].s, good[i].bare, &v, &why);
		if (rc || v != good[i].secs)
			print_message("'%s': rc %d, %g s, %s\n", good[i].s, rc,
				      v, why ? why : "");
		assert_int_equal(rc, 0);
		assert_true(v == good[i].secs);
	}
	static const struct {
		const char *s, *why;
	} bad[] = {
		{ "", "empty" },
		{ "-1", "negative" },
		{ "1:60", "seconds above 59" },
		{ "1:60:00", "minutes above 59" },
		{ "1-2:60", "minutes above 59" },
		{ "1-24", "hours above 23 after 'D-'" },
		{ "1h30m", "unknown unit (ms, s, m, h or d)" },
		{ "10w", "unknown unit" },
		{ "1:2:3:4", "expected a duration (M, M:S" },
		{ ":30", "expected a duration (" },
		{ "1:", "expected a duration (" },
		{ "1-", "expected a duration (" },
		{ "1.5:30", "expected a duration (" },
		{ "inf", "expected a duration (" },
		{ "0x10", "unknown unit" },
		{ "1e9d", "unknown unit" },
		{ "1..5s", "expected a duration (" },
		{ ".", "expected a duration (" },
		{ "400000d", "longer than 1000 years" },
		{ "9999999999999999:00", "expected a duration (" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		double v = 7;
		const char *why = NULL;
		int rc = gf_duration_parse(bad[i].s, GF_DUR_BARE_S, &v, &why);
		if (rc != GF_EINVAL || !why || !strstr(why, bad[i].why))
			print_message("'%s': rc %d, '%s'\n", bad[i].s, rc,
				      why ? why : "(null)");
		assert_int_equal(rc, GF_EINVAL);
		assert_non_null(strstr(why, bad[i].why));
		assert_true(v == 7); /* untouched */
	}
	assert_int_equal(gf_duration_parse(NULL, 1, &(double){ 0 }, NULL),
			 GF_EINVAL);
	char buf[32];
	assert_string_equal(gf_duration_str(90, buf, sizeof(buf)), "90s");
	assert_string_equal(gf_duration_str(7200, buf, sizeof(buf)), "2h");
	assert_string_equal(gf_duration_str(36600.0 * 86400, buf, sizeof(buf)),
			    "36600d");
	assert_string_equal(gf_duration_str(0.25, buf, sizeof(buf)), "250ms");
	assert_string_equal(gf_duration_str(0, buf, sizeof(buf)), "0s");
	assert_string_equal(gf_duration_str(1.5e-6, buf, sizeof(buf)),
			    "1.5e-06s");
}

/* util/str.h: environment variable names and logins (issue 21). */
static void test_names(void **state)
{
	(void)state;
	static const char *const env_ok[] = { "A", "_", "PATH", "a_1",
					      "CUDA_HOME" };
	static const char *const env_bad[] = { "",    "1A",  "A-B", "A.B",
					       "A B", "A=B", "é" };
	for (size_t i = 0; i < sizeof(env_ok) / sizeof(env_ok[0]); i++)
		assert_true(gf_str_is_env_name(env_ok[i], strlen(env_ok[i])));
	for (size_t i = 0; i < sizeof(env_bad) / sizeof(env_bad[0]); i++)
		assert_false(
			gf_str_is_env_name(env_bad[i], strlen(env_bad[i])));
	char longname[GF_STR_ENV_NAME_MAX + 1];
	memset(longname, 'A', sizeof(longname));
	assert_true(gf_str_is_env_name(longname, GF_STR_ENV_NAME_MAX - 1));
	assert_false(gf_str_is_env_name(longname, GF_STR_ENV_NAME_MAX));
	assert_true(gf_str_is_env_name("AB=c", 2)); /* the name of "AB=c" */
	static const char *const login_ok[] = {
		"alice", "a", "_svc", "Bob.x", "build-01", "machine$"
	};
	static const char *const login_bad[] = {
		"",    "-rf", ".hidden",
		"a b", "a/b", "a:b",
		"$",   "a$b", "abcdefghijabcdefghijabcdefghijabc" /* 33 */
	};
	for (size_t i = 0; i < sizeof(login_ok) / sizeof(login_ok[0]); i++)
		assert_true(gf_str_is_login(login_ok[i]));
	for (size_t i = 0; i < sizeof(login_bad) / sizeof(login_bad[0]); i++)
		assert_false(gf_str_is_login(login_bad[i]));
}

/* The reader as request bodies meet it: typed reads, members in
 * document order, and a malformed or refused document said where and
 * what (moved from test_server.c). */
static void test_json_reader_bodies(void **state)
{
	(void)state;
	struct gf_jv *v;
	struct gf_err e;
	static const char doc[] = "{\"name\": \"train\", \"gpus\": 8, "
				  "\"frac\": 0.5, \"gang\": true, "
				  "\"tags\": [\"a\", \"b\"], \"x\": null}";
	assert_int_equal(gf_jv_parse(doc, strlen(doc), &v, &e), 0);
	assert_int_equal(gf_jv_type(v), GF_JV_OBJ);
	assert_int_equal(gf_jv_len(v), 6);
	assert_string_equal(gf_jv_str(gf_jv_get(v, "name")), "train");
	int64_t i;
	double d;
	bool b;
	assert_true(gf_jv_int(gf_jv_get(v, "gpus"), &i));
	assert_int_equal(i, 8);
	assert_true(gf_jv_num(gf_jv_get(v, "gpus"), &d));
	assert_false(gf_jv_int(gf_jv_get(v, "frac"), &i));
	assert_true(gf_jv_num(gf_jv_get(v, "frac"), &d));
	assert_true(d == 0.5);
	assert_true(gf_jv_bool(gf_jv_get(v, "gang"), &b) && b);
	assert_null(gf_jv_str(gf_jv_get(v, "gpus")));
	assert_null(gf_jv_get(v, "absent"));
	assert_int_equal(gf_jv_type(gf_jv_get(v, "x")), GF_JV_NULL);
	const struct gf_jv *tags = gf_jv_get(v, "tags");
	assert_int_equal(gf_jv_len(tags), 2);
	assert_string_equal(gf_jv_str(gf_jv_at(tags, 1)), "b");
	assert_null(gf_jv_at(tags, 2));
	/* members in document order */
	void *it = NULL;
	const struct gf_jv *val;
	const char *want[] = { "name", "gpus", "frac", "gang", "tags", "x" };
	for (int k = 0; k < 6; k++)
		assert_string_equal(gf_jv_next(v, &it, &val), want[k]);
	assert_null(gf_jv_next(v, &it, &val));
	gf_jv_free(v);
	/* malformed: where and what */
	gf_err_clear(&e);
	assert_int_equal(gf_jv_parse("{\"a\": 1,\n \"b\": }", 16, &v, &e),
			 GF_EPARSE);
	assert_null(v);
	assert_non_null(strstr(e.msg, "line 2, column "));
	static const char *const refused[] = {
		"{\"a\": 1, \"a\": 2}", /* duplicate key */
		"{\"a\": \"\xff\"}",	/* not UTF-8 */
		"{\"a\": 1} x",		/* something after */
		"{\"a\": \"\\u0000\"}", /* NUL in a string */
		"{\"a\": 99999999999999999999}",
		"7", /* neither object nor array */
		"",
	};
	for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
		assert_int_equal(
			gf_jv_parse(refused[k], strlen(refused[k]), &v, &e),
			GF_EPARSE);
		assert_null(v);
	}
	/* depth: GF_JV_MAX_DEPTH nested arrays pass, one more does not */
	char deep[2 * GF_JV_MAX_DEPTH + 4];
	for (int depth = GF_JV_MAX_DEPTH; depth <= GF_JV_MAX_DEPTH + 1;
	     depth++) {
		memset(deep, '[', (size_t)depth);
		memset(deep + depth, ']', (size_t)depth);
		int rc = gf_jv_parse(deep, 2 * (size_t)depth, &v, &e);
		assert_int_equal(rc, depth > GF_JV_MAX_DEPTH ? GF_ETOOBIG : 0);
		gf_jv_free(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bitmap_list_roundtrip),
		cmocka_unit_test(test_bitmap_bad_lists),
		cmocka_unit_test(test_buf_cap),
		cmocka_unit_test(test_fmt),
		cmocka_unit_test(test_hmap),
		cmocka_unit_test(test_err_table),
		cmocka_unit_test(test_json_writer),
		cmocka_unit_test(test_json_squeeze),
		cmocka_unit_test(test_json_writer_bytes),
		cmocka_unit_test(test_json_reader),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_siphash),
		cmocka_unit_test(test_str),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_json_reader_bodies),
	};
	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
