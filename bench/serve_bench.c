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
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
				"<= 10000]\n");
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
	printf("BENCH serve.rss %.0f MiB\n", (double)ru.ru_maxrss / 1024.0);
	printf("BENCH peer.kube_scheduler.ci_min 680 pods/s\n");
	printf("BENCH peer.kube_scheduler.ci_max 810 pods/s\n");
	printf("# %d clients, %d accepted, %d refused; 10,000 nodes x 8 GPUs; "
	       "kube-scheduler's CI threshold is for 5,000 nodes\n",
	       clients, atomic_load(&ok), atomic_load(&bad));
	free(rtt);
	gf_service_stop(s);
	gf_serve_config_release(&cfg);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : 1;
}
