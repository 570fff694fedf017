/*
 * test_cli_options.c - the commands' option layer (src/cli/options.c):
 * rows stored as their kind says, numbers checked against their range
 * with one error naming the option, the value and the range, unknown
 * options said, and only the rows a command takes apart itself handed
 * back.  Linked with the CLI's objects (the Makefile's rule for it).
 */
#include <getopt.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "helpers.h"
#include "util/buf.h"
#include "util/json.h"

#define MAXARGS 12

/* argv from a space-separated line (no quoting), argv[0] "t". */
struct line {
	char buf[512];
	char *argv[MAXARGS + 1];
	int argc;
};

static void split(struct line *l, const char *s)
{
	snprintf(l->buf, sizeof(l->buf), "t %s", s);
	l->argc = 0;
	for (char *tok = strtok(l->buf, " "); tok && l->argc < MAXARGS;
	     tok = strtok(NULL, " "))
		l->argv[l->argc++] = tok;
	l->argv[l->argc] = NULL;
}

static int usages;

static void usage(FILE *f)
{
	(void)f;
	usages++;
}

/* What the command under test declares. */
struct cmd {
	const char *name, *files[2];
	int count, nfiles, given;
	long long big;
	unsigned conns;
	double tune, load;
	bool dry;
	long long time_s; /* --time: a bare number in minutes */
	int every_s;	  /* --every: in seconds */
	long tick_ms;	  /* --tick: in ms */
	double slo_s;	  /* --slo */
};

/* stderr captured while fn-free code runs: the text said, in out. */
static FILE *saved;

static void capture_begin(void)
{
	fflush(stderr);
	saved = stderr;
	stderr = tmpfile();
	assert_non_null(stderr);
}

static void capture_end(char *out, size_t size)
{
	fflush(stderr);
	rewind(stderr);
	size_t n = fread(out, 1, size - 1, stderr);
	out[n] = '\0';
	fclose(stderr);
	stderr = saved;
}

/* Run the layer over s: the codes handed back (up to 8, then 0) in
 * codes, their values in vals, the text said in err; a.rc. */
static int run(const char *s, struct cmd *c, int *codes, char (*vals)[32],
	       char *err, size_t errsize, struct gf_node_opts *node)
{
	struct line l;
	split(&l, s);
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("name", &c->name),
		GF_OPT_NUM("count", &c->count, 1, 64, "a GPU count"),
		GF_OPT_NUM("big", &c->big, 0, GF_CLI_NO_MAX, "a size"),
		GF_OPT_NUM("conns", &c->conns, 0, 1000, "a connection count"),
		GF_OPT_REAL("tune", &c->tune, 0, 100, "a factor"),
		GF_OPT_ABOVE("load", &c->load, 0, 10, "a load"),
		GF_OPT_FLAG("dry-run", &c->dry),
		GF_OPT_LIST("file", c->files, &c->nfiles),
		GF_OPT_ARG("gpus", 'g'),
		GF_OPT_CODE("all", 'a'),
		GF_OPT_DURATION("time", &c->time_s, 0, 366 * 86400,
				GF_DUR_BARE_MIN),
		GF_OPT_DURATION("every", &c->every_s, 1, 86400, GF_DUR_BARE_S),
		GF_OPT_DURATION_MS("tick", &c->tick_ms, 0.001, 60,
				   GF_DUR_BARE_MS),
		GF_OPT_DURATION("slo", &c->slo_s, 1e-6, 1e6, GF_DUR_BARE_S),
		GF_OPT_END,
	};
	struct gf_cli_args a = GF_CLI_ARGS("t", l.argc, l.argv, opts, usage);
	a.node = node;
	a.no_args = true;
	int n = 0, code;
	capture_begin();
	while ((code = gf_cli_next(&a)) != -1) {
		if (n < 8) {
			codes[n] = code;
			snprintf(vals[n], 32, "%s", optarg ? optarg : "");
			n++;
		}
		if (code == 'g' && strcmp(optarg, "bad") == 0)
			(void)gf_cli_bad_value(&a, "expected indexes like %s",
					       "0,1");
	}
	codes[n] = 0;
	capture_end(err, errsize);
	if (c->name && !strcmp(c->name, "given"))
		c->given = gf_cli_given(&a, "count"); /* for test_given */
	return a.rc;
}

/* Integers: in range stored; out of range or not a number said with
 * the option, the value and the range, exit status 2. */
static void test_integer(void **state)
{
	(void)state;
	struct cmd c = { .count = 0 };
	int codes[9];
	char vals[9][32], err[512];
	assert_int_equal(run("--count 5 --big 1099511627776 --conns 0", &c,
			     codes, vals, err, sizeof(err), NULL),
			 -1);
	assert_int_equal(c.count, 5);
	assert_true(c.big == 1099511627776LL);
	assert_int_equal(c.conns, 0);
	assert_string_equal(err, "");
	assert_int_equal(codes[0], 0);

	assert_int_equal(
		run("--count 65", &c, codes, vals, err, sizeof(err), NULL),
		GF_EXIT_USAGE);
	assert_string_equal(err, "gpufleet t: cannot parse '--count 65': "
				 "expected a GPU count from 1 to 64\n");
	assert_int_equal(c.count, 5); /* left as it was */
	assert_int_equal(
		run("--count 0", &c, codes, vals, err, sizeof(err), NULL),
		GF_EXIT_USAGE);
	assert_string_equal(err, "gpufleet t: cannot parse '--count 0': "
				 "expected a GPU count from 1 to 64\n");
	const char *bad[] = { "x", "5x", "", "99999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[64], want[160];
		snprintf(line, sizeof(line), "--count=%s", bad[i]);
		assert_int_equal(
			run(line, &c, codes, vals, err, sizeof(err), NULL),
			GF_EXIT_USAGE);
		snprintf(want, sizeof(want),
			 "gpufleet t: cannot parse '--count %s': expected a "
			 "GPU count from 1 to 64\n",
			 bad[i]);
		assert_string_equal(err, want);
	}
	/* no upper bound: said as such */
	assert_int_equal(
		run("--big -1", &c, codes, vals, err, sizeof(err), NULL),
		GF_EXIT_USAGE);
	assert_string_equal(err, "gpufleet t: cannot parse '--big -1': "
				 "expected a size, 0 or more\n");
	/* the first bad value ends the options: what follows is not read */
	c.dry = false;
	assert_int_equal(run("--count 99 --dry-run", &c, codes, vals, err,
			     sizeof(err), NULL),
			 GF_EXIT_USAGE);
	assert_false(c.dry);
}

/* Doubles: the range inclusive, "nan" and "" refused; an "above" row
 * refuses its lower bound. */
static void test_double(void **state)
{
	(void)state;
	struct cmd c = { .tune = 0 };
	int codes[9];
	char vals[9][32], err[512];
	assert_int_equal(run("--tune 1.5 --load 10", &c, codes, vals, err,
			     sizeof(err), NULL),
			 -1);
	assert_true(c.tune == 1.5);
	assert_true(c.load == 10);
	assert_int_equal(
		run("--tune 100", &c, codes, vals, err, sizeof(err), NULL), -1);
	assert_true(c.tune == 100);
	assert_int_equal(
		run("--tune nan", &c, codes, vals, err, sizeof(err), NULL),
		GF_EXIT_USAGE);
	assert_string_equal(err, "gpufleet t: cannot parse '--tune nan': "
				 "expected a factor from 0 to 100\n");
	assert_int_equal(
		run("--tune 100.5", &c, codes, vals, err, sizeof(err), NULL),
		GF_EXIT_USAGE);
	assert_string_equal(err, "gpufleet t: cannot parse '--tune 100.5': "
				 "expected a factor from 0 to 100\n");
	assert_int_equal(
		run("--load 0", &c, codes, vals, err, sizeof(err), NULL),
		GF_EXIT_USAGE);
	assert_string_equal(err, "gpufleet t: cannot parse '--load 0': "
				 "expected a load above 0 and at most 10\n");
}

/* Durations (issue 21): every form of util/duration.h, a bare number in
 * the row's unit, stored in the target's unit; a bad one said with why,
 * one out of range with the range. */
static void test_duration(void **state)
{
	(void)state;
	struct cmd c = { .time_s = -1 };
	int codes[9];
	char vals[9][32], err[512];
	static const struct {
		const char *arg;
		long long secs;
	} good[] = {
		{ "30", 1800 },		 { "1:00:00", 3600 },
		{ "90s", 90 },		 { "2h", 7200 },
		{ "1d", 86400 },	 { "1:30", 90 },
		{ "2-12", 216000 },	 { "1-2:3", 93780 },
		{ "1-2:3:4", 93784 },	 { "0", 0 },
		{ "1.5h", 5400 },	 { "5m", 300 },
		{ "100:00:00", 360000 },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char line[64];
		snprintf(line, sizeof(line), "--time %s", good[i].arg);
		int rc = run(line, &c, codes, vals, err, sizeof(err), NULL);
		if (rc != -1 || c.time_s != good[i].secs)
			print_message("%s: rc %d, %lld s, '%s'\n", line, rc,
				      c.time_s, err);
		assert_int_equal(rc, -1);
		assert_true(c.time_s == good[i].secs);
	}
	/* the same forms everywhere; a bare number in the row's unit */
	assert_int_equal(run("--every 90 --tick 250 --slo 250ms", &c, codes,
			     vals, err, sizeof(err), NULL),
			 -1);
	assert_int_equal(c.every_s, 90);
	assert_int_equal(c.tick_ms, 250);
	assert_true(c.slo_s == 0.25);
	assert_int_equal(run("--every 1:30 --tick 1s --slo 0.000002", &c, codes,
			     vals, err, sizeof(err), NULL),
			 -1);
	assert_int_equal(c.every_s, 90);
	assert_int_equal(c.tick_ms, 1000);
	static const struct {
		const char *line, *err;
	} bad[] = {
		{ "--time 1:75", "cannot parse '--time 1:75': seconds above "
				 "59" },
		{ "--time 1:60:00", "minutes above 59" },
		{ "--time 1-24", "hours above 23 after 'D-'" },
		{ "--time 5x", "unknown unit (ms, s, m, h or d)" },
		{ "--time -5", "cannot parse '--time -5': negative" },
		{ "--time 1:2:3:4", "expected a duration (M, M:S, H:M:S, D-H, "
				    "D-H:M, D-H:M:S, or with a unit: 90s, "
				    "2h, 1d)" },
		{ "--time 1::2", "expected a duration (" },
		{ "--time nan", "expected a duration (" },
		{ "--time 1e3", "unknown unit (ms, s, m, h or d)" },
		{ "--time=", "cannot parse '--time ': empty" },
		{ "--time 400d", "expected a duration from 0s to 366d" },
		{ "--every 0", "cannot parse '--every 0': expected a "
			       "duration from 1s to 1d" },
		{ "--every 1.5", "not a whole number of seconds" },
		{ "--tick 1.5ms", "not a whole number of milliseconds" },
		{ "--tick 2m", "expected a duration from 1ms to 1m" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = run(bad[i].line, &c, codes, vals, err, sizeof(err),
			     NULL);
		if (rc != GF_EXIT_USAGE || !strstr(err, bad[i].err))
			print_message("%s: rc %d '%s'\n", bad[i].line, rc, err);
		assert_int_equal(rc, GF_EXIT_USAGE);
		assert_non_null(strstr(err, bad[i].err));
	}
}

/* Strings, flags and lists stored; a list past its room said. */
static void test_string_flag_list(void **state)
{
	(void)state;
	struct cmd c = { .name = NULL };
	int codes[9];
	char vals[9][32], err[512];
	assert_int_equal(run("--name n1 --dry-run --file a --file b", &c, codes,
			     vals, err, sizeof(err), NULL),
			 -1);
	assert_string_equal(c.name, "n1");
	assert_true(c.dry);
	assert_int_equal(c.nfiles, 2);
	assert_string_equal(c.files[0], "a");
	assert_string_equal(c.files[1], "b");
	assert_int_equal(codes[0], 0); /* nothing handed back */

	struct cmd d = { .name = NULL };
	assert_int_equal(run("--file a --file b --file c", &d, codes, vals, err,
			     sizeof(err), NULL),
			 GF_EXIT_USAGE);
	assert_string_equal(err, "gpufleet t: more than 2 '--file' "
				 "options\n");
}

/* An unknown option, a missing value: said, exit status 2; -h: usage,
 * exit status 0. */
static void test_unknown(void **state)
{
	(void)state;
	struct cmd c = { .name = NULL };
	int codes[9];
	char vals[9][32], err[512];
	assert_int_equal(
		run("--bogus", &c, codes, vals, err, sizeof(err), NULL),
		GF_EXIT_USAGE);
	assert_string_equal(err, "gpufleet t: option '--bogus' is unknown or "
				 "needs a value (see 'gpufleet t -h')\n");
	assert_int_equal(
		run("--count", &c, codes, vals, err, sizeof(err), NULL),
		GF_EXIT_USAGE);
	assert_string_equal(err, "gpufleet t: option '--count' is unknown or "
				 "needs a value (see 'gpufleet t -h')\n");
	/* the node options are rows only when the command asks for them */
	assert_int_equal(
		run("--template x", &c, codes, vals, err, sizeof(err), NULL),
		GF_EXIT_USAGE);
	usages = 0;
	assert_int_equal(
		run("-h --bogus", &c, codes, vals, err, sizeof(err), NULL),
		GF_EXIT_OK);
	assert_int_equal(usages, 1);
	assert_int_equal(run("--help", &c, codes, vals, err, sizeof(err), NULL),
			 GF_EXIT_OK);
	assert_int_equal(usages, 2);
	/* an argument after the options, with no_args set */
	assert_int_equal(
		run("--count 3 extra", &c, codes, vals, err, sizeof(err), NULL),
		GF_EXIT_USAGE);
	assert_string_equal(err, "gpufleet t: unexpected argument 'extra' "
				 "(see 'gpufleet t -h')\n");
}

/* The rows a command takes apart itself come back, in order, with their
 * values; gf_cli_bad_value says one as the layer says numbers. */
static void test_codes(void **state)
{
	(void)state;
	struct cmd c = { .name = NULL };
	int codes[9];
	char vals[9][32], err[512];
	assert_int_equal(run("--gpus 0,1 --count 2 --all --gpus=3", &c, codes,
			     vals, err, sizeof(err), NULL),
			 -1);
	assert_int_equal(codes[0], 'g');
	assert_string_equal(vals[0], "0,1");
	assert_int_equal(codes[1], 'a');
	assert_int_equal(codes[2], 'g');
	assert_string_equal(vals[2], "3");
	assert_int_equal(codes[3], 0);
	assert_int_equal(c.count, 2); /* stored, not handed back */

	assert_int_equal(run("--gpus bad --all", &c, codes, vals, err,
			     sizeof(err), NULL),
			 GF_EXIT_USAGE);
	assert_int_equal(codes[0], 'g');
	assert_int_equal(codes[1], 0); /* ended at the bad value */
	assert_string_equal(err, "gpufleet t: cannot parse '--gpus bad': "
				 "expected indexes like 0,1\n");
}

/* The shared groups: the node options into gf_node_opts; which options
 * were given. */
static void test_groups(void **state)
{
	(void)state;
	struct cmd c = { .name = NULL };
	int codes[9];
	char vals[9][32], err[512];
	struct gf_node_opts no = { .cmd = "t", .src.nvml = -1 };
	assert_int_equal(run("--template hgx-h100 --no-nvml --name given", &c,
			     codes, vals, err, sizeof(err), &no),
			 -1);
	assert_string_equal(no.src.template_name, "hgx-h100");
	assert_int_equal(no.src.nvml, 0);
	assert_int_equal(c.given, 0); /* --count not given */
	assert_int_equal(run("--nvml --count 3 --name given", &c, codes, vals,
			     err, sizeof(err), &no),
			 -1);
	assert_int_equal(no.src.nvml, 1);
	assert_int_equal(c.given, 1); /* --count given */
}

/* The command words of submit and run (cmd_run.c): several words are
 * quoted for /bin/sh where they need it; one word is a command line. */
static void test_shell_words(void **state)
{
	(void)state;
	const char *argv[] = { "sh", "-c", "echo hi; exit 3", "it's", "" };
	struct gf_buf b;
	gf_buf_init(&b, 4096);
	for (int i = 0; i < 5; i++)
		gf_cli_shell_word(&b, argv[i], true);
	assert_string_equal(gf_buf_str(&b),
			    "sh -c 'echo hi; exit 3' 'it'\\''s' ''");
	gf_buf_reset(&b);
	gf_cli_shell_word(&b, "make -j8 && ./a.out", false);
	assert_string_equal(gf_buf_str(&b), "make -j8 && ./a.out");
	gf_buf_reset(&b);
	gf_cli_shell_word(&b, "python", true);
	gf_cli_shell_word(&b, "train.py", true);
	gf_cli_shell_word(&b, "--lr=0.1,a:b@c%d+e", true);
	assert_string_equal(gf_buf_str(&b),
			    "python train.py --lr=0.1,a:b@c%d+e");
	gf_buf_release(&b);
}

/* submit's body: without --name, the name is the command's first word
 * (one argument may be a whole shell line), cut to 63 bytes, never
 * inside a UTF-8 character; "job" when the first argument is blank. */
static const char *submit_name(const char *c0, const char *c1, char *out,
			       size_t size)
{
	char w[6][256];
	const char *words[6] = { "submit", "--server", "http://127.0.0.1:9",
				 "--",	   c0,	       c1 };
	int argc = c1 ? 6 : 5;
	char *argv[7] = { NULL };
	for (int i = 0; i < argc; i++) {
		snprintf(w[i], sizeof(w[i]), "%s", words[i]);
		argv[i] = w[i];
	}
	struct gf_remote r = { 0 };
	struct gf_buf b;
	gf_buf_init(&b, 1u << 16);
	/* -1: the body made, go on */
	assert_int_equal(gf_cli_submit_body("submit", argc, argv, NULL, &r, &b),
			 -1);
	struct gf_jv *v = NULL;
	struct gf_err e;
	assert_int_equal(gf_jv_parse(gf_buf_str(&b), b.len, &v, &e), 0);
	snprintf(out, size, "%s", gf_jv_str(gf_jv_get(v, "name")));
	gf_jv_free(v);
	gf_buf_release(&b);
	return out;
}

static void test_submit_default_name(void **state)
{
	(void)state;
	char n[128], longw[200];
	assert_string_equal(
		submit_name("python train.py --lr 3e-4 --epochs 90 "
			    "--data /datasets/imagenet --out /ckpt/run-17",
			    NULL, n, sizeof(n)),
		"python");
	assert_string_equal(submit_name("  sleep 60", NULL, n, sizeof(n)),
			    "sleep");
	assert_string_equal(submit_name(" ", "sleep", n, sizeof(n)), "job");
	memset(longw, 'x', 70); /* one word of 70 bytes: 63 kept */
	longw[70] = '\0';
	assert_int_equal(strlen(submit_name(longw, NULL, n, sizeof(n))), 63);
	/* 62 bytes then a 2-byte character: cut before it */
	memset(longw, 'y', 62);
	memcpy(longw + 62, "\xc3\xa9z", 4);
	assert_int_equal(strlen(submit_name(longw, NULL, n, sizeof(n))), 62);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_integer),
		cmocka_unit_test(test_double),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_string_flag_list),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_codes),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_shell_words),
		cmocka_unit_test(test_submit_default_name),
	};
	return cmocka_run_group_tests_name("cli_options", tests, NULL, NULL);
}
