/*
 * store_bench.c - durable job writes per second through the store, the
 * controller's group commit: a batch of N jobs per gf_store_write, each
 * batch one durable transaction.
 *
 * BENCH lines:
 *   store.sqlite.jobs_per_s.batch<N>     N = 1, 16, 128: jobs written per
 *       second (SQLite, WAL, synchronous=FULL: one fsync per batch) in a
 *       fresh database in $TMPDIR (default /tmp)
 *   store.sqlite.load.jobs_per_s         gf_store_load_jobs of them all
 *   store.postgres.jobs_per_s.batch<N>   the same on a PostgreSQL 15 this
 *       bench starts (tests/tools/pg.sh, the server's defaults: fsync on,
 *       synchronous_commit on), when its binaries are there
 *   store.postgres.load.jobs_per_s
 * Each figure runs for about a second.  Target (issue 10): 5,000 durable
 * submissions per second on SQLite.
 *
 *   build/bench/store_bench [REPO_ROOT]     (REPO_ROOT finds pg.sh)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gpufleet/err.h>
#include <gpufleet/job.h>

#include "store/store.h"
#include "util/clock.h"
#include "util/mem.h"

#define MAX_BATCH 128
#define RUN_MS	  1000.0

/* A submission as the API would store it: pending, a short command. */
static void fill(struct gf_job *j, uint64_t seq)
{
	memset(j, 0, sizeof(*j));
	j->seq = seq;
	snprintf(j->id, sizeof(j->id), "j%llu", (unsigned long long)seq);
	snprintf(j->spec.name, sizeof(j->spec.name), "train-%llu",
		 (unsigned long long)seq);
	snprintf(j->spec.team, sizeof(j->spec.team), "team-%llu",
		 (unsigned long long)(seq % 8));
	snprintf(j->spec.class_name, sizeof(j->spec.class_name), "batch");
	j->spec.replicas = 1;
	j->spec.gpus = 1 + (int)(seq % 8);
	j->spec.cpu_milli = 8000;
	j->spec.memory_mib = 65536;
	j->spec.max_runtime_s = 3600;
	j->state = GF_JOB_PENDING;
	j->submitted_ms = 1700000000000LL + (int64_t)seq;
	j->block = -1;
}

struct counter {
	long n;
};

static int count(struct gf_job *j, void *arg)
{
	((struct counter *)arg)->n++;
	gf_job_release(j);
	gf_free(j);
	return 0;
}

/* Jobs per second at one batch size; seq continues across calls. */
static double run_batch(struct gf_store *s, int batch, uint64_t *seq)
{
	static struct gf_job jobs[MAX_BATCH];
	const struct gf_job *ptrs[MAX_BATCH];
	static char cmd[] = "python3 train.py --epochs 10 --lr 3e-4";
	struct gf_err e;
	long n = 0;
	for (int i = 0; i < batch; i++)
		ptrs[i] = &jobs[i];
	double t0 = gf_clock_ms(), t;
	do {
		for (int i = 0; i < batch; i++) {
			fill(&jobs[i], ++*seq);
			jobs[i].spec.command = cmd;
		}
		if (gf_store_write(s, ptrs, batch, &e) != 0) {
			fprintf(stderr, "store_bench: %s\n", e.msg);
			exit(1);
		}
		n += batch;
		t = gf_clock_ms() - t0;
	} while (t < RUN_MS);
	return (double)n * 1000.0 / t;
}

static void bench(const char *engine, const char *url)
{
	static const int batches[] = { 1, 16, 128 };
	struct gf_store *s;
	struct gf_err e;
	bool leading;
	uint64_t seq = 0;
	if (gf_store_open(url, &s, &e) != 0 ||
	    gf_store_lead(s, &leading, &e) != 0 || !leading) {
		fprintf(stderr, "store_bench: %s\n",
			e.msg[0] ? e.msg : "cannot lead");
		exit(1);
	}
	for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++)
		printf("BENCH store.%s.jobs_per_s.batch%d %.0f jobs/s\n",
		       engine, batches[i], run_batch(s, batches[i], &seq));
	struct counter c = { 0 };
	double t0 = gf_clock_ms();
	if (gf_store_load_jobs(s, count, &c, &e) != 0) {
		fprintf(stderr, "store_bench: %s\n", e.msg);
		exit(1);
	}
	printf("BENCH store.%s.load.jobs_per_s %.0f jobs/s (%ld jobs)\n",
	       engine, (double)c.n * 1000.0 / (gf_clock_ms() - t0), c.n);
	fflush(stdout);
	gf_store_close(s);
}

static void bench_pg(const char *root)
{
	char cmd[1200], url[256] = "";
	snprintf(cmd, sizeof(cmd), "sh '%s/tests/tools/pg.sh' start", root);
	unsetenv("PG_OPTS"); /* the server's own durability */
	FILE *p = popen(cmd, "r");
	if (!p || !fgets(url, sizeof(url), p))
		url[0] = '\0';
	int st = p ? pclose(p) : -1;
	url[strcspn(url, "\n")] = '\0';
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
		printf("# store.postgres: skipped (no PostgreSQL server "
		       "binaries)\n");
		return;
	}
	if (st != 0 || !url[0]) {
		printf("# store.postgres: skipped (tests/tools/pg.sh start "
		       "failed)\n");
		return;
	}
	bench("postgres", url);
	snprintf(cmd, sizeof(cmd), "sh '%s/tests/tools/pg.sh' stop '%s'", root,
		 url);
	if (system(cmd) != 0)
		fprintf(stderr, "store_bench: could not stop %s\n", url);
}

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : ".";
	const char *t = getenv("TMPDIR");
	char dir[512], url[600], cmd[700];
	snprintf(dir, sizeof(dir), "%s/gf-store-bench-XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror("store_bench: mkdtemp");
		return 1;
	}
	snprintf(url, sizeof(url), "sqlite:%s/state/jobs.db", dir);
	bench("sqlite", url);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "store_bench: could not remove %s\n", dir);
	bench_pg(root);
	return 0;
}
