/*
 * serve_bench.c - the controller under load: `gpufleet serve`'s service
 * in this process on a loopback port, 10,000 nodes of 8 GPUs, a SQLite
 * store in a temp dir (synchronous=FULL: every 201 is durable), client
 * threads on keep-alive connections submitting at once.
 *
 *   serve_bench [CLIENTS] [JOBS]
 * BENCH lines:
 *   serve.submit.durable_per_s     201s per second, all clients together
 *   serve.place.per_s              jobs placed per second through the
 *                                  service (submissions until the last one
 *                                  runs)
 *   serve.submit_to_placed.p50/p99 a client's POST until its 201 saying
 *                                  "running" (placed and committed), with
 *                                  room for all
 *   serve.rss                      the process's peak RSS (service and
 *                                  clients)
 *   peer.kube_scheduler.ci_*       kube-scheduler's own CI threshold, for
 *                                  comparison (pods/s at 5,000 nodes)
 * Targets (issue 10): >= 5,000 durable submissions/s, >= 10,000
 * placements/s, p99 < 50 ms, RSS < 1 GiB.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "controller/service.h"
#include "server/client.h"
#include "util/json.h"
#include "util/mem.h"

static char base[128];
static int per_client;
static atomic_int ok, bad, nrun;
static double *rtt; /* per submission answered "running": seconds */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *client(void *arg)
{
	int k = (int)(intptr_t)arg;
	/* a job needs a command (issue 21: an empty one is a 400) */
#define CMD ", \"command\": \"true\"}"
	static const char *const shapes[] = {
		"{\"gpus\": 1" CMD, "{\"gpu_milli\": 500" CMD,
		"{\"gpus\": 2" CMD, "{\"gpu_milli\": 250" CMD,
		"{\"gpus\": 1" CMD, "{\"gpus\": 4, \"class\": \"training\"" CMD,
		"{\"gpus\": 1" CMD, "{\"gpus\": 8, \"class\": \"training\"" CMD,
	};
#undef CMD
	struct gf_client *c = gf_client_new();
	char url[256];
	snprintf(url, sizeof(url), "%s/v1/jobs", base);
	for (int i = 0; i < per_client; i++) {
		const char *body = shapes[(k + i) % 8];
		struct gf_client_req q = { .method = GF_HTTP_POST,
					   .url = url,
					   .body = body,
					   .body_len = strlen(body) };
		struct gf_client_answer a;
		struct gf_err e;
		double t0 = now_s();
		if (gf_client_request(c, &q, &a, &e) == 0 && a.status == 201) {
			atomic_fetch_add(&ok, 1);
			/* placed when its 201 came: the whole round trip */
			if (strstr(gf_buf_str(&a.body), "\"running\""))
				rtt[atomic_fetch_add(&nrun, 1)] = now_s() - t0;
		} else {
			atomic_fetch_add(&bad, 1);
		}
		gf_client_answer_release(&a);
	}
	gf_client_free(c);
	return NULL;
}

/* One client, one submission after another: 201s per second. */
static double sequential(int n, int *nok)
{
	static const char body[] = "{\"gpus\": 1, \"command\": \"true\"}";
	struct gf_client *c = gf_client_new();
	char url[256];
	snprintf(url, sizeof(url), "%s/v1/jobs", base);
	double t0 = now_s();
	*nok = 0;
	for (int i = 0; i < n; i++) {
		struct gf_client_req q = { .method = GF_HTTP_POST,
					   .url = url,
					   .body = body,
					   .body_len = strlen(body) };
		struct gf_client_answer a;
		struct gf_err e;
		if (gf_client_request(c, &q, &a, &e) == 0 && a.status == 201)
			(*nok)++;
		gf_client_answer_release(&a);
	}
	double t = now_s() - t0;
	gf_client_free(c);
	return *nok / t;
}

extern char **environ;

/* The gpufleet binary: argv[3], else $GPUFLEET_BIN, else ../gpufleet
 * beside this program (build/bench/serve_bench -> build/gpufleet). */
static int find_cli(int argc, char **argv, char *out, size_t size)
{
	const char *env = getenv("GPUFLEET_BIN");
	if (argc > 3 || (env && *env)) {
		snprintf(out, size, "%s", argc > 3 ? argv[3] : env);
	} else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			return -1;
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (!slash)
			return -1;
		*slash = '\0';
		snprintf(out, size, "%s/../gpufleet", self);
	}
	return access(out, X_OK) == 0 ? 0 : -1;
}

/* ARGS in a loop, one process each, each started when the previous
 * exited: exits 0 per second. */
static double spawn_loop(char *const args[], int n, int *nok)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	double t0 = now_s();
	*nok = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid;
		int st;
		if (posix_spawn(&pid, args[0], &fa, NULL, args, environ) != 0)
			break;
		if (waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0)
			(*nok)++;
	}
	double t = now_s() - t0;
	posix_spawn_file_actions_destroy(&fa);
	return *nok / t;
}

/* `gpufleet submit --gpus 1 -- true` in a loop, as a user's shell loop;
 * then `gpufleet --version` the same way: the process start alone. */
static void cli_loop(char *bin, int n)
{
	char submit[] = "submit", server[] = "--server", gpus[] = "--gpus",
	     one[] = "1", dd[] = "--", tru[] = "true", version[] = "--version";
	char *const sub[] = { bin, submit, server, base, gpus,
			      one, dd,	   tru,	   NULL };
	char *const ver[] = { bin, version, NULL };
	int nok;
	double r = spawn_loop(sub, n, &nok);
	printf("BENCH serve.submit.cli_loop_per_s %.1f jobs/s\n", r);
	printf("# cli loop: %s submit, %d of %d exited 0\n", bin, nok, n);
	r = spawn_loop(ver, n, &nok);
	printf("# the same loop of `gpufleet --version` (the process start "
	       "alone): %.1f/s\n",
	       r);
}

/* The sequential figures, on the service the concurrent clients used. */
static void one_after_another(int argc, char **argv)
{
	const char *sv = getenv("GPUFLEET_BENCH_SEQ");
	const char *cv = getenv("GPUFLEET_BENCH_CLI");
	int nseq = sv ? atoi(sv) : 2000, ncli = cv ? atoi(cv) : 300, nok;
	if (nseq > 0) {
		double r = sequential(nseq, &nok);
		printf("BENCH serve.submit.sequential_per_s %.0f jobs/s\n", r);
		printf("# sequential: one keep-alive client, %d of %d "
		       "accepted\n",
		       nok, nseq);
	}
	char bin[PATH_MAX + 16];
	if (ncli <= 0)
		return;
	if (find_cli(argc, argv, bin, sizeof(bin)) != 0) {
		printf("# skip serve.submit.cli_loop_per_s: no gpufleet "
		       "binary (give it as the third argument or "
		       "GPUFLEET_BIN)\n");
		return;
	}
	cli_loop(bin, ncli);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Jobs pending now (-1 when the server does not answer). */
static int pending(void)
{
	char url[256];
	snprintf(url, sizeof(url), "%s/v1/queue", base);
	struct gf_client_req q = { .url = url, .timeout_ms = 60000 };
	struct gf_client_answer a;
	struct gf_err e;
	struct gf_jv *v = NULL;
	int64_t n = -1;
	if (gf_client_request(NULL, &q, &a, &e) == 0 &&
	    gf_jv_parse(gf_buf_str(&a.body), a.body.len, &v, &e) == 0)
		gf_jv_int(gf_jv_get(v, "pending"), &n);
	gf_jv_free(v);
	gf_client_answer_release(&a);
	return (int)n;
}

int main(int argc, char **argv)
{
	int clients = argc > 1 ? atoi(argv[1]) : 32;
	int jobs = argc > 2 ? atoi(argv[2]) : 9600;
	if (clients < 1 || clients > 60 || jobs < clients || jobs > 10000) {
		fprintf(stderr, "usage: serve_bench [CLIENTS 1-60] [JOBS "
				"<= 10000] [GPUFLEET_BIN]\n");
		return 2;
	}
	per_client = jobs / clients;
	rtt = calloc((size_t)jobs, sizeof(*rtt));
	/* on the disk the state directory would be on (./), not a tmpfs */
	char dir[] = "gf-serve-bench-XXXXXX", path[128], db[160];
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/serve.yaml", dir);
	snprintf(db, sizeof(db), "sqlite:%s/jobs.db", dir);
	FILE *f = fopen(path, "w");
	fprintf(f, "pools:\n  - {name: n, nodes: 10000, model: h100-80gb, "
		   "gpus: 8, cpu_milli: 192000, memory_mib: 2097152}\n");
	fclose(f);
	struct gf_serve_config cfg;
	gf_serve_config_defaults(&cfg);
	struct gf_err e;
	struct gf_service *s;
	struct gf_service_opts o = {
		.listen = "127.0.0.1:0", .db = db, .cfg = &cfg, .tick_ms = 50
	};
	if (gf_serve_config_read(path, &cfg, &e) != 0 ||
	    gf_service_start(&s, &o, &e) != 0) {
		fprintf(stderr, "serve_bench: %s\n", e.msg);
		return 1;
	}
	snprintf(base, sizeof(base), "%s", gf_service_url(s));
	base[strlen(base) - 1] = '\0';
	pthread_t tid[60];
	double t0 = now_s();
	for (int i = 0; i < clients; i++)
		pthread_create(&tid[i], NULL, client, (void *)(intptr_t)i);
	for (int i = 0; i < clients; i++)
		pthread_join(tid[i], NULL);
	double t1 = now_s();
	while (pending() > 0)
		usleep(20000);
	double t2 = now_s();
	int n = atomic_load(&nrun);
	qsort(rtt, (size_t)n, sizeof(*rtt), cmp);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("BENCH serve.submit.durable_per_s %.0f jobs/s\n",
	       atomic_load(&ok) / (t1 - t0));
	printf("BENCH serve.place.per_s %.0f jobs/s\n",
	       atomic_load(&ok) / (t2 - t0));
	if (n) {
		printf("BENCH serve.submit_to_placed.p50 %.2f ms\n",
		       rtt[n / 2] * 1e3);
		printf("BENCH serve.submit_to_placed.p99 %.2f ms\n",
		       rtt[(n * 99) / 100] * 1e3);
	}
	one_after_another(argc, argv);
	printf("BENCH serve.rss %.0f MiB\n", (double)ru.ru_maxrss / 1024.0);
	printf("BENCH peer.kube_scheduler.ci_min 680 pods/s\n");
	printf("BENCH peer.kube_scheduler.ci_max 810 pods/s\n");
	printf("# %d clients, %d accepted, %d refused; 10,000 nodes x 8 GPUs; "
	       "kube-scheduler's CI threshold is for 5,000 nodes\n",
	       clients, atomic_load(&ok), atomic_load(&bad));
	char la[64] = "";
	FILE *lf = fopen("/proc/loadavg", "r");
	if (lf && fgets(la, sizeof(la), lf))
		printf("# load average %s", la);
	if (lf)
		fclose(lf);
	free(rtt);
	gf_service_stop(s);
	gf_serve_config_release(&cfg);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : 1;
}
