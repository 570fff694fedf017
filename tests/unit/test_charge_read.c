/*
 * test_charge_read.c - the chargeback readers of src/chargeback: records,
 * assets with prices and node prices, sacct, times, the store as a
 * source, and every bad input named (the engine: test_charge.c).
 */
#include "charge_helpers.h"
#include "chargeback/chargeback.h"
#include "store/store.h"
#include "util/mem.h"

/* --- the readers ------------------------------------------------------------
 */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char *tmpdir(void)
{
	static char dir[64];
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/test_charge.XXXXXX");
		assert_non_null(mkdtemp(dir));
	}
	return dir;
}

static char made[64][128]; /* files to remove at the end */
static int nmade;

static const char *tmp(const char *name, const char *text)
{
	char *p = made[nmade++ % 64];
	snprintf(p, 128, "%s/%s", tmpdir(), name);
	write_file(p, text);
	return p;
}

static int cleanup(void **state)
{
	(void)state;
	for (int i = 0; i < nmade && i < 64; i++)
		unlink(made[i]);
	rmdir(tmpdir());
	return 0;
}

#define REC_HEAD                                                               \
	"cluster,node,namespace,pod,container,start,end,gpus,cpu_req,cpu_use," \
	"ram_req_gib,ram_use_gib\n"

static void reader_fails(int (*fn)(const char *, struct gf_err *),
			 const char *path, const char *want)
{
	struct gf_err e;
	gf_err_clear(&e);
	assert_true(fn(path, &e) < 0);
	print_message("%s\n", e.msg);
	assert_non_null(strstr(e.msg, want));
}

static int read_records(const char *path, struct gf_err *e)
{
	struct gf_charge_input in;
	struct gf_cb_skips sk = { NULL, 0, 0 };
	gf_charge_input_init(&in);
	int rc = gf_cb_read_records(&in, path, false, &sk, e);
	gf_cb_skips_release(&sk);
	gf_charge_input_release(&in);
	return rc;
}

static int read_prices(const char *path, struct gf_err *e)
{
	struct gf_cb_prices p;
	gf_cb_prices_init(&p);
	int rc = gf_cb_read_prices(path, &p, e);
	gf_cb_prices_release(&p);
	return rc;
}

static void test_readers_bad_input(void **state)
{
	(void)state;
	reader_fails(read_records,
		     tmp("r1.csv", REC_HEAD "c,n,a,p,x,2024-05-01T05:00:00Z,"
					    "2024-05-01T04:00:00Z,1,1,1,1,1\n"),
		     "r1.csv':2: field 'end': before 'start'");
	reader_fails(read_records,
		     tmp("r2.csv", REC_HEAD "c,n,a,p,x,0,3600,lots,1,1,1,1\n"),
		     "r2.csv':2: field 'gpus': expected a number, got 'lots'");
	reader_fails(
		read_records,
		tmp("r3.csv", REC_HEAD "c,n,a,p,x,yesterday,3600,1,1,1,1,1\n"),
		"r3.csv':2: field 'start': expected an RFC3339 time");
	reader_fails(read_records,
		     tmp("r4.csv", "cluster,node,namespace,pod,start,end\n"),
		     "r4.csv':1: column 'container' is missing");
	reader_fails(read_records,
		     tmp("r5.csv", "cluster,node,namespace,pod,container,start,"
				   "end,gpus,cpu_req,cpu_use,ram_req_gib,"
				   "ram_use_gib,gpuz\n"),
		     "r5.csv':1: unknown column 'gpuz'");
	reader_fails(read_records,
		     tmp("r6.csv", REC_HEAD ",n,a,p,x,0,3600,1,1,1,1,1\n"),
		     "r6.csv':2: field 'cluster': must not be empty");
	/* a row cut after two fields: the times are "" (F3, issue 20) */
	reader_fails(read_records, tmp("r7.csv", REC_HEAD "c,n\n"),
		     "r7.csv':2: field 'start': expected an RFC3339 time");
	reader_fails(read_records, tmp("r8.csv", REC_HEAD "c,n,a,p,x\n"),
		     "r8.csv':2: field 'start': expected an RFC3339 time");
	reader_fails(read_records,
		     tmp("r9.csv", REC_HEAD "c,n,a,p,x,2024-05-01T0\n"),
		     "r9.csv':2: field 'start': expected an RFC3339 time");
	reader_fails(read_prices, tmp("p1.yaml", "gpu:\n  H100: [2.5\n"),
		     "p1.yaml':3: malformed YAML");
	reader_fails(read_prices, tmp("p2.yaml", "gpu:\n  H100: cheap\n"),
		     "p2.yaml':2: 'H100': expected a price >= 0, got 'cheap'");
	reader_fails(read_prices, tmp("p3.yaml", "gpus:\n  H100: 2\n"),
		     "p3.yaml':1: unknown key 'gpus'");
	reader_fails(read_prices, tmp("p4.yaml", "mig_rule: sm\n"),
		     "p4.yaml':1: 'mig_rule': expected compute or memory");
	reader_fails(read_prices, tmp("p5.yaml", "- 1\n- 2\n"),
		     "expected a mapping of prices");

	/* lenient: the bad rows are skipped and listed, the rest read */
	struct gf_charge_input in;
	struct gf_cb_skips sk = { NULL, 0, 0 };
	struct gf_err e;
	gf_charge_input_init(&in);
	assert_int_equal(
		gf_cb_read_records(&in,
				   tmp("r7.csv", REC_HEAD
				       "c,n,a,p,x,0,3600,1,1,1,1,1\n"
				       "c,n,a,p,x,0,3600,x,1,1,1,1\n"
				       "c,n,a,p,x,7200,3600,1,1,1,1,1\n"
				       "c,n,b,p,x,0,3600,1,,,,\n"),
				   true, &sk, &e),
		0);
	assert_int_equal(in.nrec, 2);
	assert_int_equal(sk.total, 2);
	assert_int_equal(sk.v[0].line, 3);
	assert_int_equal(sk.v[1].line, 4);
	assert_true(isnan(in.rec[1].cpu_req));
	gf_cb_skips_release(&sk);
	gf_charge_input_release(&in);
}

static void test_prices_and_node_split(void **state)
{
	(void)state;
	struct gf_cb_prices p;
	struct gf_err e;
	gf_cb_prices_init(&p);
	assert_int_equal(
		gf_cb_read_prices(tmp("p.yaml", "currency: EUR\n"
						"gpu:\n  H100: 2.5\n  l40s: 1\n"
						"cpu_core: 0.04\n"
						"ram_gib: 0.005\n"
						"nodes:\n  n9: 35\n"
						"mig_rule: memory\n"),
				  &p, &e),
		0);
	assert_string_equal(p.currency, "EUR");
	near(gf_cb_gpu_price(&p, "h100"), 2.5);
	near(gf_cb_gpu_price(&p, "L40S"), 1);
	assert_true(isnan(gf_cb_gpu_price(&p, "A100")));
	assert_int_equal(p.mig_rule, GF_CHARGE_MIG_MEMORY);
	struct gf_charge_input in;
	gf_charge_input_init(&in);
	/* n9 has only a node price: 35 split over 1 GPU (base 2.5), 10
	 * cores (0.4) and 100 GiB (0.5): base 3.4, factor 35/3.4 */
	assert_int_equal(
		gf_cb_read_assets(
			&in,
			tmp("a.csv",
			    "cluster,node,start,end,gpus,cpu_cores,ram_gib,"
			    "gpu_price_hr,cpu_core_price_hr,ram_gib_price_hr,"
			    "gpu_model\n"
			    "c,n1,0,3600,8,64,512,,,,H100\n"
			    "c,n9,0,3600,1,10,100,,,,H100\n"
			    "c,n2,0,3600,8,64,512,3,,,B300\n"),
			&p, &e),
		0);
	near(in.asset[0].gpu_price_hr, 2.5);
	near(in.asset[0].cpu_price_hr, 0.04);
	near(in.asset[1].gpu_price_hr, 2.5 * 35 / 3.4);
	near(in.asset[1].cpu_price_hr * 10 + in.asset[1].ram_price_hr * 100 +
		     in.asset[1].gpu_price_hr,
	     35);
	near(in.asset[2].gpu_price_hr, 3); /* the file's own price wins */
	gf_charge_input_release(&in);

	/* a model without a price: the core names the asset row */
	gf_charge_input_init(&in);
	assert_int_equal(
		gf_cb_read_assets(&in,
				  tmp("a2.csv",
				      "cluster,node,start,end,gpus,"
				      "cpu_cores,ram_gib,gpu_price_hr,"
				      "cpu_core_price_hr,"
				      "ram_gib_price_hr,gpu_model\n"
				      "c,n1,0,3600,8,64,512,,,,B300\n"),
				  &p, &e),
		0);
	struct gf_charge_opts o;
	struct gf_charge_result res;
	gf_charge_opts_init(&o, 0, 3600000);
	assert_int_equal(gf_charge_run(&in, &o, &res, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "a2.csv':2: node 'n1': no GPU price "
				      "for model 'B300'"));
	gf_charge_input_release(&in);
	gf_cb_prices_release(&p);
}

static void test_sacct(void **state)
{
	(void)state;
	struct gf_charge_input in;
	struct gf_cb_skips sk = { NULL, 0, 0 };
	struct gf_err e;
	gf_charge_input_init(&in);
	/* the jobs of the reference's sacct run, with times and nodes */
	const char *path =
		tmp("sacct.txt",
		    "JobID|Account|Partition|User|NodeList|Start|End|AllocTRES|"
		    "State\n"
		    "8|teama|gpu|alice|gpu01|2024-05-01T10:00:00|"
		    "2024-05-01T10:00:05|billing=5,cpu=1,gres/gpu:h100=2,"
		    "gres/gpu=2,mem=1G,node=1|COMPLETED\n"
		    "10|teamb|gpu|bob|gpu[01-02]|2024-05-01T10:00:00|"
		    "2024-05-01T10:00:10|billing=9,cpu=2,gres/gpu:h100=4,"
		    "gres/gpu=4,mem=2048M,node=2|COMPLETED\n"
		    "11|teamb|gpu|bob|None assigned|Unknown|Unknown|"
		    "billing=1,cpu=1|PENDING\n");
	assert_int_equal(gf_cb_read_sacct(&in, path, 0, false, &sk, &e), 0);
	assert_int_equal(in.nrec, 3); /* job 10 on two nodes, 11 not run */
	near(in.rec[0].gpus, 2);
	near(in.rec[0].ram_req, 1);
	assert_int_equal(in.rec[0].end_ms - in.rec[0].start_ms, 5000);
	assert_string_equal(gf_charge_str(&in, in.rec[0].ns), "teama");
	near(in.rec[1].gpus, 2);
	near(in.rec[2].gpus, 2);
	near(in.rec[2].ram_req, 1);
	assert_string_equal(gf_charge_str(&in, in.rec[2].node), "gpu02");
	assert_string_equal(
		gf_charge_str(&in, in.extra[in.rec[1].extra].gpu_model),
		"h100");
	assert_true(isnan(in.rec[0].cpu_use)); /* Slurm bills allocation */
	gf_charge_input_release(&in);
	gf_charge_input_init(&in);
	reader_fails(read_records, tmp("empty.csv", ""), "empty file");
	assert_true(gf_cb_read_sacct(&in,
				     tmp("s2.txt", "JobID|Account|Start|End\n"),
				     0, false, &sk, &e) < 0);
	assert_non_null(strstr(e.msg, "field 'NodeList' is missing"));
	gf_charge_input_release(&in);
}

static void test_times(void **state)
{
	(void)state;
	int64_t ms, s, t;
	struct gf_err e;
	assert_int_equal(gf_cb_parse_time("2024-05-01T00:00:00Z", &ms), 0);
	assert_int_equal(ms, T0);
	assert_int_equal(gf_cb_parse_time("2024-05-01T02:00:00+02:00", &ms), 0);
	assert_int_equal(ms, T0);
	assert_int_equal(gf_cb_parse_time("1714521600.5", &ms), 0);
	assert_int_equal(ms, T0 + 500);
	assert_int_equal(gf_cb_parse_time("2024-05-01T00:00:00", &ms), -1);
	assert_int_equal(gf_cb_parse_time("2024-13-01T00:00:00Z", &ms), -1);
	/* cut short: on the heap, so that ASan sees a read past the end */
	static const char *const cut[] = {
		"",
		"2024-",
		"2024-05-0",
		"2024-05-01T00:00",
		"2024-05-01T00:00:00+",
		"2024-05-01T00:00:00+02",
		"2024-05-01T00:00:00+02:0",
		"2024-05-01T00:00:00-0",
	};
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		char *c = gf_strdup(cut[i]);
		assert_int_equal(gf_cb_parse_time(c, &ms), -1);
		gf_free(c);
	}
	char *w = gf_strdup("2024-05-01T00:00:00Z,2024-05");
	assert_int_equal(gf_cb_parse_window(w, 0, &s, &t, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "cannot parse '--window"));
	gf_free(w);
	w = gf_strdup("2024-05-01T00:00:00Z,");
	assert_int_equal(gf_cb_parse_window(w, 0, &s, &t, &e), GF_EINVAL);
	gf_free(w);
	char buf[40];
	gf_charge_time_str(T0 + 3 * H + 61000, buf, sizeof(buf));
	assert_string_equal(buf, "2024-05-01T03:01:01Z");
	gf_charge_time_str(951782400000LL, buf, sizeof(buf)); /* leap day */
	assert_string_equal(buf, "2000-02-29T00:00:00Z");
	assert_int_equal(gf_cb_parse_window("7d", T0 + 30000, &s, &t, &e), 0);
	assert_int_equal(t, T0);
	assert_int_equal(t - s, 7 * DAY);
	/* the duration forms of every flag (util/duration.h, issue 21) */
	assert_int_equal(gf_cb_parse_window("1-0", T0, &s, &t, &e), 0);
	assert_int_equal(t - s, DAY);
	assert_int_equal(gf_cb_parse_window("90m", T0, &s, &t, &e), 0);
	assert_int_equal(t - s, 90 * 60000);
	assert_int_equal(gf_cb_parse_window("7", T0, &s, &t, &e), GF_EINVAL);
	assert_int_equal(gf_cb_parse_window("0d", T0, &s, &t, &e), GF_EINVAL);
	assert_int_equal(gf_cb_parse_window("10,5", 0, &s, &t, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "the end is not after the start"));
	near(gf_charge_round(1.234565), 1.23457);
	near(gf_charge_round(-1.234565), -1.23457);
}

/* A job of the store's kind: whole GPUs, a share, or a MIG instance. */
static struct gf_job *store_job(uint64_t seq, const char *team, int gpus,
				int milli, const char *mig)
{
	struct gf_job *j = gf_calloc(1, sizeof(*j));
	j->seq = seq;
	snprintf(j->id, sizeof(j->id), "j%llu", (unsigned long long)seq);
	snprintf(j->spec.name, sizeof(j->spec.name), "job-%llu",
		 (unsigned long long)seq);
	snprintf(j->spec.team, sizeof(j->spec.team), "%s", team);
	snprintf(j->spec.class_name, sizeof(j->spec.class_name), "batch");
	j->spec.replicas = 1;
	j->spec.gpus = gpus;
	j->spec.gpu_milli = milli;
	if (mig) {
		snprintf(j->spec.mig_profile, sizeof(j->spec.mig_profile), "%s",
			 mig);
		snprintf(j->spec.gpu_model, sizeof(j->spec.gpu_model), "H100");
	}
	j->spec.cpu_milli = 2000;
	j->spec.memory_mib = 8192;
	j->state = GF_JOB_PENDING;
	j->submitted_ms = T0 - 1000;
	j->block = -1;
	snprintf(j->reason, sizeof(j->reason), "requeued");
	return j;
}

/* The controller's store as a source: each run a record, GPU-seconds
 * the run's length times the job's GPUs, everything priced once. */
static void test_store_source(void **state)
{
	(void)state;
	char url[128], db[96];
	snprintf(db, sizeof(db), "%s/state/jobs.db", tmpdir());
	snprintf(url, sizeof(url), "sqlite:%s", db);
	struct gf_store *s;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_store_open(url, &s, &e))
		fail_msg("open: %s", e.msg);
	bool leading = false;
	assert_int_equal(gf_store_lead(s, &leading, &e), 0);
	assert_true(leading);
	struct gf_job *j[4] = { store_job(1, "vision", 2, 0, NULL),
				store_job(2, "nlp", 0, 250, NULL),
				store_job(3, "nlp", 0, 0, "3g.40gb"),
				store_job(4, "speech", 4, 0, NULL) };
	/* job 4 runs now on n1, 4 GPUs, started 9 minutes before now (its
	 * run is not kept yet: the store has no run of it) */
	const int64_t now = T0 + 9 * H;
	j[3]->state = GF_JOB_RUNNING;
	j[3]->attempts = 1;
	j[3]->started_ms = now - 9 * 60000;
	j[3]->reason[0] = '\0';
	j[3]->block = 0;
	j[3]->place = gf_calloc(1, sizeof(*j[3]->place));
	snprintf(j[3]->place[0].node_name, sizeof(j[3]->place[0].node_name),
		 "n1");
	j[3]->place[0].node = -1;
	j[3]->place[0].ngpus = 4;
	for (int g = 0; g < 4; g++)
		j[3]->place[0].gpus[g] = g;
	j[3]->place[0].gpu_milli = 1000;
	j[3]->place[0].mig_start = -1;
	/* a node that joined: 8 H100, 64 cores, 512 GiB */
	static const char inv[] =
		"{\"cpu_milli\": 64000, \"memory_mib\": 524288, "
		"\"gpu_model\": \"H100\", \"gpus\": [{}, {}, {}, {}, {}, {}, "
		"{}, {}]}";
	if (gf_store_put_node(s, "n1", inv, strlen(inv), T0, &e))
		fail_msg("put node: %s", e.msg);
	struct gf_job_run r[4];
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 4; i++) {
		r[i].seq = (uint64_t)(i < 3 ? i + 1 : 1);
		r[i].attempt = i < 3 ? 1 : 2;
		r[i].started_ms = T0 + i * H;
		r[i].ended_ms = T0 + i * H + 1800000 + 1234;
		snprintf(r[i].node, sizeof(r[i].node), "n1");
		snprintf(r[i].reason, sizeof(r[i].reason), "exited");
	}
	const struct gf_job *jobs[4] = { j[0], j[1], j[2], j[3] };
	struct gf_store_batch batch = { jobs, 4, r, 4 };
	if (gf_store_commit(s, &batch, &e))
		fail_msg("commit: %s", e.msg);
	gf_store_close(s);
	for (int i = 0; i < 4; i++) {
		gf_job_release(j[i]);
		gf_free(j[i]);
	}

	struct gf_charge_input in;
	gf_charge_input_init(&in);
	asset(&in, "gpufleet", "n1", T0, T0 + 10 * H, 8, 64, 512, 7, 0.04,
	      0.005, "H100");
	if (gf_cb_read_db(&in, url, "gpufleet", now, &e))
		fail_msg("read db: %s", e.msg);
	assert_int_equal(in.nrec, 5); /* 4 runs kept, 1 replica running */
	struct gf_charge_opts o;
	struct gf_charge_result res;
	gf_charge_opts_init(&o, T0, T0 + 10 * H);
	o.now_ms = now;
	agg(&in, &o, "team");
	run_ok(&in, &o, &res);
	double len_h = (1800000 + 1234) / 3600000.0;
	/* vision: two runs of job 1 (attempts 1 and 2), 2 GPUs each */
	near(row(&res, "vision")->gpu_hours, 2 * 2 * len_h);
	/* nlp: a 250-milli share and 3g.40gb (3/7 by compute slices) */
	near(row(&res, "nlp")->gpu_hours, (0.25 + 3.0 / 7) * len_h);
	/* speech: running, 4 GPUs for the 9 minutes up to now */
	assert_non_null(row(&res, "speech"));
	near(row(&res, "speech")->gpu_hours, 4 * 9 / 60.0);
	near(res.steps[0].rows_cost, res.steps[0].asset_cost);
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
	/* a window that ends before now: charged up to the window's end */
	gf_charge_input_init(&in);
	asset(&in, "gpufleet", "n1", T0, T0 + 10 * H, 8, 64, 512, 7, 0.04,
	      0.005, "H100");
	if (gf_cb_read_db(&in, url, "gpufleet", now, &e))
		fail_msg("read db: %s", e.msg);
	gf_charge_opts_init(&o, T0, now - 5 * 60000);
	o.now_ms = now;
	agg(&in, &o, "team");
	run_ok(&in, &o, &res);
	near(row(&res, "speech")->gpu_hours, 4 * 4 / 60.0);
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
	/* the assets from the store's node, priced by a prices: block */
	char yaml[128];
	snprintf(yaml, sizeof(yaml), "%s/serve.yaml", tmpdir());
	FILE *f = fopen(yaml, "w");
	assert_non_null(f);
	fputs("agents:\n  heartbeat_s: 1\nprices:\n  h100: 7\n"
	      "  cpu_core: 0.04\n  ram_gib: 0.005\n  currency: EUR\n",
	      f);
	fclose(f);
	struct gf_cb_prices p;
	gf_cb_prices_init(&p);
	bool found = false;
	assert_int_equal(gf_cb_read_prices_block(yaml, &p, &found, &e), 0);
	assert_true(found);
	assert_string_equal(p.currency, "EUR");
	near(gf_cb_gpu_price(&p, "H100"), 7);
	gf_charge_input_init(&in);
	if (gf_cb_db_assets(&in, url, "gpufleet", &p, T0, T0 + 10 * H, &e))
		fail_msg("assets: %s", e.msg);
	assert_int_equal(in.nasset, 1);
	near(in.asset[0].gpus, 8);
	near(in.asset[0].cpu_cores, 64);
	near(in.asset[0].ram_gib, 512);
	near(in.asset[0].gpu_price_hr, 7);
	gf_charge_input_release(&in);
	gf_cb_prices_release(&p);
	/* a bad price: the file, its line and the key */
	f = fopen(yaml, "w");
	assert_non_null(f);
	fputs("prices:\n  h100: 7\n  l40s: cheap\n", f);
	fclose(f);
	gf_cb_prices_init(&p);
	assert_int_not_equal(gf_cb_read_prices_block(yaml, &p, &found, &e), 0);
	assert_non_null(strstr(e.msg, "serve.yaml"));
	assert_non_null(strstr(e.msg, ":3"));
	assert_non_null(strstr(e.msg, "l40s"));
	gf_cb_prices_release(&p);
	/* no block: found false */
	f = fopen(yaml, "w");
	assert_non_null(f);
	fputs("agents:\n  heartbeat_s: 1\n", f);
	fclose(f);
	gf_cb_prices_init(&p);
	assert_int_equal(gf_cb_read_prices_block(yaml, &p, &found, &e), 0);
	assert_false(found);
	gf_cb_prices_release(&p);
	unlink(yaml);
	/* aggregated by team, the key says team (not namespace) */
	gf_charge_input_init(&in);
	struct gf_charge_key k;
	char kn[64];
	assert_int_equal(gf_charge_key_parse(&in, "team", &k, &e), 0);
	gf_charge_key_name(&in, &k, kn, sizeof(kn));
	assert_string_equal(kn, "team");
	assert_int_equal(gf_charge_key_parse(&in, "namespace", &k, &e), 0);
	gf_charge_key_name(&in, &k, kn, sizeof(kn));
	assert_string_equal(kn, "namespace");
	gf_charge_input_release(&in);
	char path[128];
	static const char *const files[] = { "jobs.db", "jobs.db-wal",
					     "jobs.db-shm", "jobs.db.lock" };
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/state/%s", tmpdir(), files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/state", tmpdir());
	rmdir(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readers_bad_input),
		cmocka_unit_test(test_prices_and_node_split),
		cmocka_unit_test(test_sacct),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_store_source),
	};
	return cmocka_run_group_tests(tests, NULL, cleanup);
}
