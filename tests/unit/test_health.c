/*
 * test_health.c - the GPU health machine (telemetry/health.h): each Xid
 * class; the quiet period to the millisecond and restarted by a second
 * Xid; a reset-class Xid never recovering by time; application Xids only
 * counted; a lost GPU, and one answering again; a clock that steps back;
 * the caps (GPUs, codes out of the table, reasons that must fit).  The
 * invariants (gf_health_check) are checked after every step.
 *
 * Then the whole path in one process: the fake NVML's events file
 * (GPUFLEET_FAKE_NVML_EVENTS) read by the collector, which feeds the
 * machine, and what /metrics and /v1/gpus show; and a running agent's
 * snapshot (gf_agent_health) seeing an Xid 79 on GPU 2.
 */
#include <limits.h>
#include <time.h>

#include <gpufleet/err.h>

#include "agent/agent.h"
#include "helpers.h"
#include "telemetry/collect.h"
#include "telemetry/expo.h"
#include "telemetry/health.h"

#define Q 300000 /* the default quiet period, ms */

/* 2025-01-01T10:00:00Z */
static const int64_t T0 = 1735725600000;

static void check(const struct gf_health *h)
{
	char msg[256] = "";
	int rc = gf_health_check(h, msg, sizeof(msg));
	if (rc)
		print_message("gf_health_check: %s\n", msg);
	assert_int_equal(rc, 0);
}

static const char *why(const struct gf_health *h, int gpu)
{
	static char buf[GF_HEALTH_REASON_MAX];
	return gf_health_reason(h, gpu, buf, sizeof(buf));
}

static void test_classes(void **state)
{
	(void)state;
	static const unsigned reset[] = { 48,  61,  62,	 63,  64,  74,
					  79,  92,  94,	 95,  110, 119,
					  120, 123, 140, 143, 154 };
	static const unsigned app[] = { 13, 31, 43, 45, 68, 109 };
	for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		assert_int_equal(gf_xid_class(reset[i]), GF_XID_RESET);
	for (size_t i = 0; i < sizeof(app) / sizeof(app[0]); i++)
		assert_int_equal(gf_xid_class(app[i]), GF_XID_APP);
	assert_int_equal(gf_xid_class(8), GF_XID_TRANSIENT);
	assert_int_equal(gf_xid_class(44), GF_XID_TRANSIENT);
	/* unknown: transient, and said so */
	assert_int_equal(gf_xid_class(0), GF_XID_TRANSIENT);
	assert_int_equal(gf_xid_class(200), GF_XID_TRANSIENT);
	assert_string_equal(gf_xid_meaning(200), "unknown Xid");
	assert_string_equal(gf_xid_meaning(79), "fell off the bus");
	assert_string_equal(gf_xid_meaning(48), "double-bit ECC error");
	assert_string_equal(gf_xid_class_name(GF_XID_RESET), "reset");
	assert_string_equal(gf_xid_class_name(GF_XID_APP), "application");
	assert_string_equal(gf_xid_class_name(GF_XID_TRANSIENT), "transient");
	/* every meaning fits a reason whole, with the longest code */
	for (unsigned c = 0; c < GF_XID_CODES; c++) {
		char r[GF_HEALTH_REASON_MAX * 2];
		int n = snprintf(r, sizeof(r),
				 "xid %u: %s (application error; the GPU "
				 "stays healthy)",
				 UINT_MAX, gf_xid_meaning(c));
		assert_true(n < GF_HEALTH_REASON_MAX);
	}
}

static void test_reset_class_never_recovers_by_time(void **state)
{
	(void)state;
	struct gf_health h;
	assert_int_equal(gf_health_init(&h, 8, 0, T0), 0);
	assert_int_equal(h.quiet_ms, Q);
	assert_int_equal(gf_health_xid(&h, 2, 79, T0 + 5000), 0);
	check(&h);
	assert_false(gf_health_is_healthy(&h, 2));
	assert_int_equal(gf_health_state(&h, 2), GF_HEALTH_RESET);
	assert_string_equal(why(&h, 2),
			    "xid 79: fell off the bus (needs a GPU reset)");
	assert_int_equal(gf_health_gpu(&h, 2)->since_ms, T0 + 5000);
	for (int g = 0; g < 8; g++)
		if (g != 2) {
			assert_true(gf_health_is_healthy(&h, g));
			assert_string_equal(why(&h, g), "");
			assert_int_equal(gf_health_gpu(&h, g)->since_ms, T0);
		}
	/* a day of ticks, a transient Xid on top: still waiting */
	for (int64_t t = T0; t <= T0 + 86400000; t += 60000)
		gf_health_tick(&h, t);
	gf_health_xid(&h, 2, 8, T0 + 86400000);
	gf_health_tick(&h, T0 + 2 * 86400000);
	check(&h);
	assert_int_equal(gf_health_state(&h, 2), GF_HEALTH_RESET);
	assert_int_equal(gf_health_gpu(&h, 2)->since_ms, T0 + 5000);
	assert_int_equal(gf_health_gpu(&h, 2)->xids, 2);
	assert_int_equal(gf_health_gpu(&h, 2)->last_xid, 8);
	/* the first reset cause stays the reason */
	gf_health_xid(&h, 2, 48, T0 + 2 * 86400000);
	assert_string_equal(why(&h, 2),
			    "xid 79: fell off the bus (needs a GPU reset)");
	/* every reset-class code holds its GPU */
	gf_health_xid(&h, 5, 94, T0);
	gf_health_tick(&h, T0 + 10 * Q);
	assert_int_equal(gf_health_state(&h, 5), GF_HEALTH_RESET);
	assert_string_equal(why(&h, 5),
			    "xid 94: contained ECC error (needs a GPU reset)");
	check(&h);
}

static void test_transient_quiet_period_exact(void **state)
{
	(void)state;
	struct gf_health h;
	assert_int_equal(gf_health_init(&h, 2, 0, T0), 0);
	gf_health_xid(&h, 0, 8, T0);
	check(&h);
	assert_int_equal(gf_health_state(&h, 0), GF_HEALTH_RECOVERING);
	assert_int_equal(gf_health_gpu(&h, 0)->since_ms, T0);
	assert_string_equal(why(&h, 0),
			    "recovering: xid 8 at 2025-01-01T10:00:00Z, "
			    "healthy again at 2025-01-01T10:05:00Z");
	gf_health_tick(&h, T0 + Q - 1);
	check(&h);
	assert_false(gf_health_is_healthy(&h, 0));
	gf_health_tick(&h, T0 + Q);
	check(&h);
	assert_true(gf_health_is_healthy(&h, 0));
	assert_int_equal(gf_health_gpu(&h, 0)->since_ms, T0 + Q);
	assert_string_equal(why(&h, 0),
			    "recovered: xid 8 at 2025-01-01T10:00:00Z, "
			    "healthy again at 2025-01-01T10:05:00Z");
	/* a late tick: healthy since the quiet period ended, not since
	 * the tick */
	gf_health_xid(&h, 1, 8, T0);
	gf_health_tick(&h, T0 + Q + 777);
	assert_int_equal(gf_health_gpu(&h, 1)->since_ms, T0 + Q);
	/* a configured quiet period: 2 s */
	assert_int_equal(gf_health_init(&h, 1, 2000, T0), 0);
	gf_health_xid(&h, 0, 13000, T0); /* unknown: transient */
	gf_health_tick(&h, T0 + 1999);
	assert_false(gf_health_is_healthy(&h, 0));
	gf_health_tick(&h, T0 + 2000);
	assert_true(gf_health_is_healthy(&h, 0));
	check(&h);
}

static void test_second_xid_restarts_quiet(void **state)
{
	(void)state;
	struct gf_health h;
	assert_int_equal(gf_health_init(&h, 1, 0, T0), 0);
	gf_health_xid(&h, 0, 8, T0);
	gf_health_tick(&h, T0 + 100000);
	gf_health_xid(&h, 0, 46, T0 + 100000); /* transient too */
	check(&h);
	gf_health_tick(&h, T0 + Q);
	assert_false(gf_health_is_healthy(&h, 0));
	gf_health_tick(&h, T0 + 100000 + Q - 1);
	assert_false(gf_health_is_healthy(&h, 0));
	/* still unhealthy since the first one */
	assert_int_equal(gf_health_gpu(&h, 0)->since_ms, T0);
	assert_string_equal(why(&h, 0),
			    "recovering: xid 46 at 2025-01-01T10:01:40Z, "
			    "healthy again at 2025-01-01T10:06:40Z");
	gf_health_tick(&h, T0 + 100000 + Q);
	assert_true(gf_health_is_healthy(&h, 0));
	assert_int_equal(gf_health_gpu(&h, 0)->xids, 2);
	assert_int_equal(gf_health_gpu(&h, 0)->by_class[GF_XID_TRANSIENT], 2);
	/* an Xid stamped before the current one does not shorten it */
	gf_health_xid(&h, 0, 8, T0 + 200000 + Q);
	gf_health_xid(&h, 0, 8, T0 + 100000 + Q);
	gf_health_tick(&h, T0 + 200000 + 2 * Q - 1);
	assert_false(gf_health_is_healthy(&h, 0));
	check(&h);
}

static void test_application_xids_counted_only(void **state)
{
	(void)state;
	struct gf_health h;
	assert_int_equal(gf_health_init(&h, 2, 0, T0), 0);
	static const unsigned app[] = { 13, 31, 43, 45, 68, 109 };
	for (size_t i = 0; i < sizeof(app) / sizeof(app[0]); i++) {
		gf_health_xid(&h, 1, app[i], T0 + 1000 * (int64_t)i);
		check(&h);
		assert_true(gf_health_is_healthy(&h, 1));
	}
	const struct gf_health_gpu *g = gf_health_gpu(&h, 1);
	assert_int_equal(g->since_ms, T0);
	assert_int_equal(g->xids, 6);
	assert_int_equal(g->by_class[GF_XID_APP], 6);
	assert_int_equal(g->last_xid, 109);
	gf_health_xid(&h, 1, 31, T0 + 9000);
	assert_string_equal(why(&h, 1),
			    "xid 31: GPU memory page fault (application "
			    "error; the GPU stays healthy)");
	/* during a quiet period: it neither ends nor restarts it */
	gf_health_xid(&h, 0, 8, T0);
	gf_health_xid(&h, 0, 31, T0 + 200000);
	gf_health_tick(&h, T0 + Q - 1);
	assert_false(gf_health_is_healthy(&h, 0));
	gf_health_tick(&h, T0 + Q);
	assert_true(gf_health_is_healthy(&h, 0));
	check(&h);
}

static void test_lost_then_back(void **state)
{
	(void)state;
	struct gf_health h;
	assert_int_equal(gf_health_init(&h, 4, 0, T0), 0);
	/* not lost: answering again changes nothing */
	assert_int_equal(gf_health_back(&h, 3, T0), 0);
	assert_true(gf_health_is_healthy(&h, 3));
	assert_string_equal(why(&h, 3), "");
	/* the driver raises Xid 79 with it; lost shows first */
	gf_health_lost(&h, 3, T0 + 1000);
	gf_health_xid(&h, 3, 79, T0 + 1000);
	check(&h);
	assert_int_equal(gf_health_state(&h, 3), GF_HEALTH_LOST);
	assert_string_equal(why(&h, 3), "fell off the bus (NVML: GPU is lost)");
	assert_int_equal(gf_health_gpu(&h, 3)->since_ms, T0 + 1000);
	gf_health_tick(&h, T0 + 100 * Q);
	assert_int_equal(gf_health_state(&h, 3), GF_HEALTH_LOST);
	/* lost twice: since stays */
	gf_health_lost(&h, 3, T0 + 2000);
	assert_int_equal(gf_health_gpu(&h, 3)->since_ms, T0 + 1000);
	/* back: reset, proving itself for a quiet period */
	int64_t t = T0 + 3600000;
	gf_health_back(&h, 3, t);
	check(&h);
	assert_int_equal(gf_health_state(&h, 3), GF_HEALTH_RECOVERING);
	assert_string_equal(why(&h, 3),
			    "recovering: answering again at "
			    "2025-01-01T11:00:00Z, healthy again at "
			    "2025-01-01T11:05:00Z");
	assert_int_equal(gf_health_gpu(&h, 3)->since_ms, T0 + 1000);
	gf_health_tick(&h, t + Q - 1);
	assert_false(gf_health_is_healthy(&h, 3));
	gf_health_tick(&h, t + Q);
	assert_true(gf_health_is_healthy(&h, 3));
	assert_int_equal(gf_health_gpu(&h, 3)->since_ms, t + Q);
	assert_string_equal(why(&h, 3),
			    "recovered: answering again at "
			    "2025-01-01T11:00:00Z, healthy again at "
			    "2025-01-01T11:05:00Z");
	/* a reset-class Xid before the loss is gone with the reset */
	gf_health_xid(&h, 1, 48, T0);
	gf_health_lost(&h, 1, T0 + 1);
	gf_health_back(&h, 1, T0 + 2);
	assert_int_equal(gf_health_state(&h, 1), GF_HEALTH_RECOVERING);
	/* lost while recovering: the quiet period ends unseen */
	gf_health_xid(&h, 2, 8, T0);
	gf_health_lost(&h, 2, T0 + 10);
	gf_health_tick(&h, T0 + Q);
	assert_int_equal(gf_health_state(&h, 2), GF_HEALTH_LOST);
	check(&h);
}

static void test_clock_steps_back(void **state)
{
	(void)state;
	struct gf_health h;
	assert_int_equal(gf_health_init(&h, 1, 0, T0), 0);
	gf_health_xid(&h, 0, 8, T0);
	/* the wall clock goes back an hour: at most a quiet period more */
	int64_t back = T0 - 3600000;
	gf_health_tick(&h, back);
	check(&h);
	assert_false(gf_health_is_healthy(&h, 0));
	gf_health_tick(&h, back + Q - 1);
	assert_false(gf_health_is_healthy(&h, 0));
	gf_health_tick(&h, back + Q);
	assert_true(gf_health_is_healthy(&h, 0));
	check(&h);
}

static void test_caps(void **state)
{
	(void)state;
	struct gf_health h;
	assert_int_equal(gf_health_init(&h, GF_HEALTH_MAX_GPUS + 1, 0, T0),
			 GF_ETOOBIG);
	assert_int_equal(h.n, 0);
	assert_int_equal(gf_health_init(&h, -1, 0, T0), GF_EINVAL);
	assert_int_equal(gf_health_init(&h, 1, -5, T0), GF_EINVAL);
	assert_int_equal(h.n, 0);
	assert_int_equal(h.quiet_ms, Q);
	check(&h);
	assert_int_equal(gf_health_init(&h, GF_HEALTH_MAX_GPUS, 0, T0), 0);
	int last = GF_HEALTH_MAX_GPUS - 1;
	assert_int_equal(gf_health_xid(&h, last, 79, T0), 0);
	assert_false(gf_health_is_healthy(&h, last));
	/* GPUs out of range: refused, nothing changes */
	assert_int_equal(gf_health_xid(&h, GF_HEALTH_MAX_GPUS, 79, T0),
			 GF_EINVAL);
	assert_int_equal(gf_health_xid(&h, -1, 79, T0), GF_EINVAL);
	assert_int_equal(gf_health_lost(&h, GF_HEALTH_MAX_GPUS, T0), GF_EINVAL);
	assert_int_equal(gf_health_back(&h, -1, T0), GF_EINVAL);
	assert_int_equal(gf_health_state(&h, GF_HEALTH_MAX_GPUS),
			 GF_HEALTH_LOST);
	assert_false(gf_health_is_healthy(&h, -1));
	assert_null(gf_health_gpu(&h, GF_HEALTH_MAX_GPUS));
	assert_string_equal(why(&h, GF_HEALTH_MAX_GPUS), "no such GPU");
	/* codes past the table: transient, counted, said whole */
	gf_health_xid(&h, 0, GF_XID_CODES, T0);
	gf_health_xid(&h, 1, 100000, T0);
	gf_health_xid(&h, 2, UINT_MAX, T0);
	check(&h);
	for (int g = 0; g < 3; g++)
		assert_int_equal(gf_health_state(&h, g), GF_HEALTH_RECOVERING);
	assert_int_equal(gf_health_gpu(&h, 2)->last_xid, UINT_MAX);
	assert_string_equal(why(&h, 2),
			    "recovering: xid 4294967295 at "
			    "2025-01-01T10:00:00Z, healthy again at "
			    "2025-01-01T10:05:00Z");
	/* a reason cut to a small buffer stays a string, the cut marked */
	char small[8];
	gf_health_reason(&h, 2, small, sizeof(small));
	assert_string_equal(small, "reco...");
	/* n = 0: nothing to tick, nothing healthy */
	assert_int_equal(gf_health_init(&h, 0, 0, T0), 0);
	gf_health_tick(&h, T0);
	assert_false(gf_health_is_healthy(&h, 0));
	check(&h);
}

/* --- the fake NVML's events file, the collector, the agent ---------- */

static char fake[512];

/* The hgx-h100 fixture freshly loaded (no GPU lost by an earlier test),
 * with an empty events file of its own in path. */
static void use_events(char *path, size_t size)
{
	static int gen;
	char g[32];
	snprintf(g, sizeof(g), "health-%d", ++gen);
	snprintf(path, size, "/tmp/gf-health-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	setenv("GPUFLEET_NVML_LIBRARY", fake, 1);
	setenv("GPUFLEET_FAKE_NVML_FIXTURE",
	       "tests/fixtures/nvml/hgx-h100.nvml", 1);
	setenv("GPUFLEET_FAKE_NVML_GEN", g, 1);
	setenv("GPUFLEET_FAKE_NVML_EVENTS", path, 1);
	unsetenv("GPUFLEET_FAKE_NVML_COSTS");
}

static void append(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static bool page_has(const struct gf_collector *c, const char *line)
{
	struct gf_counters k;
	gf_counters_default(&k);
	struct gf_buf b;
	gf_buf_init(&b, 1 << 20);
	assert_int_equal(gf_expo_render(c, &k, 0, &b), 0);
	bool has = strstr(gf_buf_str(&b), line) != NULL;
	if (!has)
		print_message("page lacks: %s", line);
	gf_buf_release(&b);
	return has;
}

static void test_collector_events_file(void **state)
{
	(void)state;
	char ev[64];
	use_events(ev, sizeof(ev));
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 8, &e), 0);
	assert_int_equal(c.n, 8);
	c.xid_quiet_ms = 2000;
	int64_t t = 1000;
	gf_collector_sample(&c, t);
	assert_int_equal(c.health.n, 8);
	assert_int_equal(c.health.quiet_ms, 2000);
	/* Xid 79 on GPU 2: unhealthy; the others are not touched */
	append(ev, "# faults\nxid 2 79\n");
	gf_collector_sample(&c, t += 1000);
	assert_int_equal(gf_health_state(&c.health, 2), GF_HEALTH_RESET);
	for (int i = 0; i < 8; i++)
		assert_true(i == 2 || gf_health_is_healthy(&c.health, i));
	assert_true(c.g[2].last_xid == 79.0);
	assert_false(c.g[2].lost); /* it still answers: only unhealthy */
	assert_true(page_has(&c,
			     "gpufleet_gpu_healthy{gpu=\"2\",UUID=\"GPU-"
			     "5e1f0c2a-7d3b-4c8e-9a60-000000000002\"} 0\n"));
	assert_true(page_has(&c,
			     "gpufleet_gpu_healthy{gpu=\"1\",UUID=\"GPU-"
			     "5e1f0c2a-7d3b-4c8e-9a60-000000000001\"} 1\n"));
	assert_true(page_has(&c, "gpufleet_gpu_xid_total{gpu=\"2\",UUID=\"GPU-"
				 "5e1f0c2a-7d3b-4c8e-9a60-000000000002\","
				 "class=\"reset\"} 1\n"));
	struct gf_buf js;
	gf_buf_init(&js, 1 << 20);
	assert_int_equal(gf_expo_gpus_json(&c, t, &js), 0);
	/* GPU 2's object, up to GPU 3's */
	const char *g2 = strstr(gf_buf_str(&js), "\"index\": 2,");
	assert_non_null(g2);
	char obj[4096];
	snprintf(obj, sizeof(obj), "%.*s",
		 (int)(strstr(g2, "\"index\": 3,") - g2), g2);
	assert_non_null(strstr(obj, "\"healthy\": false,"));
	assert_non_null(strstr(obj, "\"health_reason\": \"xid 79: fell off "
				    "the bus (needs a GPU reset)\","));
	assert_non_null(strstr(obj, "\"xids\": 1,"));
	gf_buf_release(&js);
	/* a transient Xid: unhealthy for 2 s, then healthy */
	append(ev, "xid 4 8\n");
	gf_collector_sample(&c, t += 1000);
	int64_t xid_at = t;
	assert_int_equal(gf_health_state(&c.health, 4), GF_HEALTH_RECOVERING);
	gf_collector_sample(&c, xid_at + 1999);
	assert_false(gf_health_is_healthy(&c.health, 4));
	gf_collector_sample(&c, t = xid_at + 2000);
	assert_true(gf_health_is_healthy(&c.health, 4));
	/* an application Xid: counted, nothing else; a line still being
	 * written is read once whole */
	append(ev, "xid 5 31\nxid 6 ");
	gf_collector_sample(&c, t += 1000);
	assert_true(gf_health_is_healthy(&c.health, 5));
	assert_int_equal(gf_health_gpu(&c.health, 5)->by_class[GF_XID_APP], 1);
	assert_int_equal(gf_health_gpu(&c.health, 6)->xids, 0);
	append(ev, "13\nxid 99 1\nbogus\n"); /* the last two: skipped */
	gf_collector_sample(&c, t += 1000);
	assert_int_equal(gf_health_gpu(&c.health, 6)->by_class[GF_XID_APP], 1);
	/* lost: every call answers GPU_IS_LOST, with an Xid 79 */
	append(ev, "lost 3\n");
	gf_collector_sample(&c, t += 1000);
	int64_t lost_at = t;
	assert_true(c.g[3].lost);
	assert_int_equal(gf_health_state(&c.health, 3), GF_HEALTH_LOST);
	gf_collector_sample(&c, t += 1000);
	assert_int_equal(gf_health_gpu(&c.health, 3)->by_class[GF_XID_RESET],
			 1);
	assert_int_equal(c.g[3].last_good_ms, lost_at - 1000);
	assert_true(page_has(&c,
			     "gpufleet_gpu_up{gpu=\"3\",UUID=\"GPU-"
			     "5e1f0c2a-7d3b-4c8e-9a60-000000000003\"} 0\n"));
	gf_collector_sample(&c, t += 10000);
	assert_int_equal(gf_health_state(&c.health, 3), GF_HEALTH_LOST);
	/* back: sampled again, healthy after the quiet period */
	append(ev, "back 3\n");
	gf_collector_sample(&c, t += 1000);
	int64_t back_at = t;
	assert_false(c.g[3].lost);
	assert_int_equal(c.g[3].last_good_ms, back_at);
	assert_int_equal(gf_health_state(&c.health, 3), GF_HEALTH_RECOVERING);
	gf_collector_sample(&c, back_at + 1999);
	assert_false(gf_health_is_healthy(&c.health, 3));
	gf_collector_sample(&c, back_at + 2000);
	assert_true(gf_health_is_healthy(&c.health, 3));
	/* GPU 2 still waits for its reset */
	assert_int_equal(gf_health_state(&c.health, 2), GF_HEALTH_RESET);
	check(&c.health);
	gf_collector_close(&c);
	unlink(ev);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* A running agent: an Xid 79 appended while it samples leaves GPU 2
 * unhealthy in its snapshot, the others healthy. */
static void test_agent_snapshot(void **state)
{
	(void)state;
	char ev[64];
	use_events(ev, sizeof(ev));
	struct gf_counters k;
	gf_counters_default(&k);
	struct gf_agent_opts o = { .listen = "127.0.0.1:0",
				   .interval_ms = 20,
				   .xid_quiet_ms = 60000,
				   .counters = &k,
				   .topo = { .template_name = "hgx-h100" } };
	gf_diag_defaults(&o.diag);
	struct gf_agent *ag;
	struct gf_err e;
	assert_int_equal(gf_agent_start(&ag, &o, &e), 0);
	struct gf_gpu_health h[GF_HEALTH_MAX_GPUS];
	assert_int_equal(gf_agent_health(ag, h, GF_HEALTH_MAX_GPUS), 8);
	for (int i = 0; i < 8; i++) {
		assert_true(h[i].healthy);
		assert_int_equal(h[i].index, i);
		assert_string_equal(h[i].reason, "");
		assert_int_equal(h[i].xids, 0);
	}
	assert_string_equal(h[2].uuid,
			    "GPU-5e1f0c2a-7d3b-4c8e-9a60-000000000002");
	append(ev, "xid 2 79\n");
	bool seen = false;
	for (int waited = 0; waited < 5000 && !seen; waited += 10) {
		sleep_ms(10);
		gf_agent_health(ag, h, GF_HEALTH_MAX_GPUS);
		seen = !h[2].healthy;
	}
	assert_true(seen);
	assert_string_equal(h[2].reason,
			    "xid 79: fell off the bus (needs a GPU reset)");
	assert_int_equal(h[2].last_xid, 79);
	assert_int_equal(h[2].xids, 1);
	assert_true(h[2].since_ms > 0);
	for (int i = 0; i < 8; i++)
		assert_true(i == 2 || h[i].healthy);
	/* fewer slots than GPUs: only those written */
	struct gf_gpu_health two[3];
	memset(two, 0x5a, sizeof(two));
	assert_int_equal(gf_agent_health(ag, two, 2), 8);
	assert_int_equal(two[1].index, 1);
	assert_int_equal(two[2].index, 0x5a5a5a5a);
	assert_int_equal(gf_agent_health(ag, NULL, 0), 8);
	gf_agent_stop(ag);
	unlink(ev);
}

int main(int argc, char **argv)
{
	(void)argc;
	fake_nvml_path(argv[0], fake, sizeof(fake));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_reset_class_never_recovers_by_time),
		cmocka_unit_test(test_transient_quiet_period_exact),
		cmocka_unit_test(test_second_xid_restarts_quiet),
		cmocka_unit_test(test_application_xids_counted_only),
		cmocka_unit_test(test_lost_then_back),
		cmocka_unit_test(test_clock_steps_back),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_collector_events_file),
		cmocka_unit_test(test_agent_snapshot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
