/*
 * cluster_bench.c - the controller with its node agents (issue 11): how
 * many agents one controller holds at a 1 s heartbeat, and how long a
 * job takes from its submission to its assignment and to its process.
 *
 *   cluster_bench GPUFLEET_BIN [FAKE_NVML_LIB [REPO_ROOT]]
 *
 * Files: this one (the controller, parts 1 and 2, main), and
 * cluster_bench/: cluster_sim.c (the simulated agents and their client
 * threads), cluster_proc.c (clocks, child processes, the temp dir,
 * /proc), cluster_bench.h (what they share, the run's state R).
 *
 * The controller is `GPUFLEET_BIN serve --agents` in a child process
 * (SQLite in a temp dir, agents: heartbeat_s 1, notready_after_s 10: ten
 * heartbeats missed, tighter than the default 40; the default --tick),
 * so its CPU and memory are its own: read from /proc/PID.  The agents
 * are simulated in this process by two client threads, each driving
 * libcurl multi handles on one epoll (curl_multi_socket_action).
 * Each simulated agent does what `gpufleet agent --controller` does: PUT
 * /v1/nodes/NAME with an 8-GPU inventory (the hgx-h100 template's, as the
 * real agent sends it: GPUs with their own UUIDs, gpu_topo and the topo
 * --json document), then a heartbeat every second (its GPUs' health, the
 * replicas it was assigned as running, the generation it got), and a
 * long poll GET .../assignments?wait=30s&after=G always open.  Each agent
 * has its two keep-alive connections: its URLs name a host of its own
 * (sim-NNNNN, resolved to 127.0.0.1 with CURLOPT_RESOLVE), so libcurl's
 * connection cache never lends one agent's connection to another, and
 * the controller holds two per agent, as it does with real ones.  (Not
 * CURLOPT_CONNECT_TO: libcurl 7.88 files those connections under the
 * address connected to, one bucket searched linearly with a poll() per
 * candidate.)  Agents are grouped 64 to a multi handle (see struct grp).
 * Heartbeats are spread evenly over the second (agent k at k/N s), each
 * sent a second after the previous one as an agent does; one due while
 * the previous is unanswered is counted late and sent when the answer
 * comes.
 *
 * Part 1, for each size (GPUFLEET_BENCH_AGENTS, default "1000,5000"): a
 * fresh controller, the agents registered (at most 64 PUTs in flight per
 * thread), 2 s to settle, then a window (GPUFLEET_BENCH_WINDOW_S, default
 * 20 s) measured.  BENCH lines, N the size:
 *   cluster.agents.N.register_s       the first PUT until every agent's
 *                                     was answered
 *   cluster.agents.N.heartbeats_per_s heartbeats answered 200 in the
 *                                     window, per second (N at best)
 *   cluster.agents.N.heartbeat_p50_ms / _p99_ms
 *                                     a heartbeat's POST until its
 *                                     answer, client side (the curl
 *                                     transfer: send, the controller's
 *                                     turn, receive; this process's own
 *                                     scheduling delays included)
 *   cluster.agents.N.heartbeat_gap_max_ms
 *                                     the longest time between two
 *                                     answered heartbeats of one agent
 *                                     in the window (the margin to
 *                                     notready_after)
 *   cluster.agents.N.controller_cpu   the controller process's CPU over
 *                                     the window (utime + stime of
 *                                     /proc/PID/stat), in cores
 *   cluster.agents.N.controller_rss_mib  its VmRSS at the window's end
 *   cluster.agents.N.controller_rss_kib_per_agent
 *                                     that less its VmRSS before the
 *                                     first agent came, per agent
 *                                     registered
 *   cluster.agents.N.connections_per_agent  2, or 1 (below)
 *   cluster.agents.N.notready         nodes that went NotReady at any
 *                                     time (the controller's "not ready"
 *                                     log lines) or are not "ready" in
 *                                     GET /v1/nodes after the window
 * Comments beside them: errors, late heartbeats, acks not saying ready,
 * the clients' own CPU, how busy the machine was, the load average.
 *
 * Part 2, with the last size still connected (5,000 by default):
 *   cluster.submit_to_assigned.p50_ms / .p99_ms
 *       GPUFLEET_BENCH_JOBS (500) jobs of 1 GPU, one at a time: POST
 *       /v1/jobs sent until a simulated agent's long poll delivers the
 *       assignment (the controller's share of a job's start)
 *   cluster.submit_to_running.p50_ms / .p99_ms
 *       one real `gpufleet agent` (--template hgx-h100 --nvml on the fake
 *       NVML, or --no-nvml without it, and a line says so) joins the same
 *       controller with a label; GPUFLEET_BENCH_REAL_JOBS (100) jobs
 *       selecting it, one after another (each once the previous ended),
 *       each `date +%s%N > FILE`: the POST sent (CLOCK_REALTIME) until
 *       the time its process wrote
 *   peer.kubernetes.*  the peers' stated figures, for comparison (their
 *       sources are cited where they are printed)
 *
 * GPUFLEET_BENCH_AGENTS=10000 runs that size alone.  Fds: two sockets per
 * agent in each process; RLIMIT_NOFILE is raised (the soft limit to the
 * hard one, the hard one too where allowed).  Where two per agent do not
 * fit (10,000 agents under a hard limit of 20,000, as in this
 * container), each agent keeps one connection, as `gpufleet agent
 * --one-connection` does: no long poll; its assignments are read (a GET
 * answered at once) after its PUT and after a heartbeat whose answer
 * says a newer generation, so they arrive up to a heartbeat late
 * (submit_to_assigned shows it).  A line says which, and
 * GPUFLEET_BENCH_CONNS=1 or 2 forces either.
 * A size that fits neither is cut to the most agents that do.
 * GPUFLEET_BENCH_KEEP=1 keeps the temp dir (logs, the controller's
 * store) for a look afterwards.  Every child process gets SIGTERM (then
 * SIGKILL) and the temp dir is removed on every exit path, SIGINT and
 * SIGTERM included; the children also get SIGTERM if this process dies
 * (PR_SET_PDEATHSIG).
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "cluster_bench/cluster_bench.h"

struct run R;

/* ---- the controller ------------------------------------------------- */

static const char *bin;

static int start_controller(int n, char *log, size_t lsize)
{
	char cfg[PATH_MAX + 16], db[PATH_MAX + 16];
	snprintf(cfg, sizeof(cfg), "%s/serve-%d.yaml", tmpdir, n);
	snprintf(db, sizeof(db), "sqlite:%s/ctl-%d/state.db", tmpdir, n);
	snprintf(log, lsize, "%s/serve-%d.log", tmpdir, n);
	FILE *f = fopen(cfg, "we");
	if (!f)
		return -1;
	/* the real agent runs its jobs as this process's user, root where
	 * the bench runs as root: allowed only so (issue 21) */
	fprintf(f,
		"allow_root: true\nagents:\n  heartbeat_s: 1\n"
		"  notready_after_s: %d\n",
		NOTREADY_S);
	fclose(f);
	/* every simulated agent connects from 127.0.0.1: no per-client cap */
	const char *argv[] = { bin,
			       "serve",
			       "--agents",
			       "--listen",
			       "127.0.0.1:0",
			       "--db",
			       db,
			       "--config",
			       cfg,
			       "--max-conns-per-client",
			       "0",
			       NULL };
	serve_pid = spawn(argv, environ, log);
	for (int i = 0; i < 400 && !interrupted; i++) { /* 20 s */
		char *s = slurp(log, NULL);
		const char *p = s ? strstr(s, "listening on http://") : NULL;
		unsigned port = 0;
		if (p && sscanf(p, "listening on http://127.0.0.1:%u/",
				&port) == 1) {
			gf_free(s);
			R.port = port;
			snprintf(R.base, sizeof(R.base), "http://127.0.0.1:%u",
				 port);
			return 0;
		}
		gf_free(s);
		if (waitpid(serve_pid, NULL, WNOHANG) == serve_pid) {
			serve_pid = -1;
			break;
		}
		sleep_ms(50);
	}
	printf("# cluster: the controller did not start; its log:\n");
	print_tail(log);
	return -1;
}

/* /proc/PID/stat's utime + stime, in seconds. */
static struct gf_jv *get_json(struct gf_client *cl, const char *path)
{
	char url[256];
	snprintf(url, sizeof(url), "%s%s", R.base, path);
	struct gf_client_req q = { .url = url,
				   .timeout_ms = 60000,
				   .answer_max = ANSWER_MAX };
	struct gf_client_answer a;
	struct gf_err e;
	struct gf_jv *v = NULL;
	if (gf_client_request(cl, &q, &a, &e) != 0 || a.status != 200 ||
	    gf_jv_parse(gf_buf_str(&a.body), a.body.len, &v, &e) != 0)
		v = NULL;
	gf_client_answer_release(&a);
	return v;
}

/* Simulated nodes in GET /v1/nodes: how many, how many not ready. */
static void nodes_state(int *listed, int *not_ready)
{
	*listed = *not_ready = 0;
	struct gf_client *cl = gf_client_new();
	struct gf_jv *v = get_json(cl, "/v1/nodes");
	const struct gf_jv *nodes = v ? gf_jv_get(v, "nodes") : NULL;
	for (size_t i = 0; nodes && i < gf_jv_len(nodes); i++) {
		const struct gf_jv *x = gf_jv_at(nodes, i);
		const char *name = gf_jv_str(gf_jv_get(x, "name"));
		const char *st = gf_jv_str(gf_jv_get(x, "state"));
		if (!name || strncmp(name, "sim-", 4) != 0)
			continue;
		(*listed)++;
		if (!st || strcmp(st, "ready") != 0)
			(*not_ready)++;
	}
	if (!v)
		*listed = -1;
	gf_jv_free(v);
	gf_client_free(cl);
}

/* ---- part 1: N agents ----------------------------------------------- */

static struct cl cls[THREADS];
static bool clients_on;

static void clients_start(int n)
{
	R.n = n;
	atomic_store(&R.ws, 0);
	atomic_store(&R.we, 0);
	atomic_store(&R.stop, false);
	atomic_store(&R.registered, 0);
	atomic_store(&R.reg_done_ns, 0);
	R.t0 = mono_ns();
	for (int t = 0; t < THREADS; t++) {
		struct cl *c = &cls[t];
		memset(c, 0, sizeof(*c));
		c->t = t;
		c->ep = epoll_create1(EPOLL_CLOEXEC);
		c->na = (n - t + THREADS - 1) / THREADS;
		c->ng = (c->na + GROUP - 1) / GROUP;
		c->g = gf_calloc((size_t)c->ng + 1, sizeof(*c->g));
		for (int i = 0; i < c->ng; i++) {
			struct grp *g = &c->g[i];
			g->idx = i;
			g->ep = c->ep;
			g->timer_at = -1;
			g->m = curl_multi_init();
			curl_multi_setopt(g->m, CURLMOPT_SOCKETFUNCTION,
					  on_socket);
			curl_multi_setopt(g->m, CURLMOPT_SOCKETDATA, g);
			curl_multi_setopt(g->m, CURLMOPT_TIMERFUNCTION,
					  on_timer);
			curl_multi_setopt(g->m, CURLMOPT_TIMERDATA, g);
			curl_multi_setopt(g->m, CURLMOPT_MAXCONNECTS,
					  (long)(2 * GROUP + 4));
		}
		c->a = gf_calloc((size_t)c->na + 1, sizeof(*c->a));
		for (int i = 0; i < c->na; i++) {
			c->a[i] = agent_new(t + i * THREADS);
			c->a[i]->g = &c->g[i / GROUP];
		}
		c->hb_round = 1;
		atomic_init(&c->past_window, 0);
		pthread_create(&c->tid, NULL, client, c);
	}
	clients_on = true;
}

static void clients_stop(void)
{
	if (!clients_on)
		return;
	clients_on = false;
	atomic_store(&R.stop, true);
	for (int t = 0; t < THREADS; t++) {
		struct cl *c = &cls[t];
		pthread_join(c->tid, NULL);
		if (c->errs)
			printf("# client thread %d of %d agents: %" PRId64
			       " errors in all, the last: %s\n",
			       t, R.n, c->errs, c->last_err);
		for (int i = 0; i < c->na; i++)
			agent_free(c->a[i]);
		gf_free(c->a);
		for (int i = 0; i < c->ng; i++)
			curl_multi_cleanup(c->g[i].m);
		gf_free(c->g);
		close(c->ep);
		fifo_release(&c->reg_retry);
		fifo_release(&c->poll_retry);
		gf_free(c->lat);
	}
}

/* Wait until the clients' window counts are final. */
static void wait_window_done(void)
{
	for (int i = 0; i < 100; i++) {
		int done = 0;
		for (int t = 0; t < THREADS; t++)
			done += atomic_load(&cls[t].past_window);
		if (done == THREADS)
			return;
		sleep_ms(20);
	}
}

static void loadavg(char *out, size_t size)
{
	char *s = slurp("/proc/loadavg", NULL);
	double a = 0, b = 0, c = 0;
	if (s)
		sscanf(s, "%lf %lf %lf", &a, &b, &c);
	gf_free(s);
	snprintf(out, size, "%.2f %.2f %.2f", a, b, c);
}

/* Register n agents and measure a window; 0, or -1 when the controller
 * did not start (nothing more can run on it). */
static int agents_run(int n, int window_s, char *log, size_t lsize)
{
	if (start_controller(n, log, lsize) != 0)
		return -1;
	long rss0 = proc_status_kb(serve_pid, "VmRSS:"); /* no agent yet */
	clients_start(n);
	int64_t t0 = mono_ns();
	int64_t deadline = t0 + (60 + (int64_t)n / 40) * 1000000000LL;
	while (!interrupted && atomic_load(&R.registered) < n &&
	       mono_ns() < deadline) {
		if (waitpid(serve_pid, NULL, WNOHANG) == serve_pid) {
			serve_pid = -1;
			printf("# cluster: the controller exited during "
			       "registration; its log:\n");
			print_tail(log);
			return -1;
		}
		sleep_ms(20);
	}
	int reg = atomic_load(&R.registered);
	int64_t done = atomic_load(&R.reg_done_ns);
	if (reg == n)
		printf("BENCH cluster.agents.%d.register_s %.2f s\n", n,
		       (double)(done - t0) / 1e9);
	else
		printf("# cluster.agents.%d: only %d of %d agents registered "
		       "in %.0f s\n",
		       n, reg, n, (double)(mono_ns() - t0) / 1e9);
	for (int s = 0; s < SETTLE_S * 10 && !interrupted; s++)
		sleep_ms(100);
	unsigned long long b0, a0, b1, a1;
	machine_jiffies(&b0, &a0);
	double cpu0 = proc_cpu_s(serve_pid), self0 = self_cpu_s();
	int64_t ws = mono_ns();
	atomic_store(&R.ws, ws);
	for (int s = 0; s < window_s * 10 && !interrupted; s++)
		sleep_ms(100);
	int64_t we = mono_ns();
	atomic_store(&R.we, we);
	double cpu1 = proc_cpu_s(serve_pid), self1 = self_cpu_s();
	machine_jiffies(&b1, &a1);
	long rss = proc_status_kb(serve_pid, "VmRSS:");
	long hwm = proc_status_kb(serve_pid, "VmHWM:");
	int fds = proc_fds(serve_pid);
	wait_window_done();
	if (interrupted)
		return -1; /* a window cut short: no figures */
	double secs = (double)(we - ws) / 1e9;
	int64_t ok = 0, err = 0, late = 0, nr = 0, gap = 0;
	size_t nlat = 0;
	for (int t = 0; t < THREADS; t++) {
		ok += cls[t].w_ok;
		err += cls[t].w_err;
		late += cls[t].w_late;
		nr += cls[t].w_notready;
		gap = cls[t].w_gap_max > gap ? cls[t].w_gap_max : gap;
		nlat += cls[t].nlat;
	}
	double *lat = gf_calloc(nlat + 1, sizeof(*lat));
	for (int t = 0, k = 0; t < THREADS; t++)
		for (size_t i = 0; i < cls[t].nlat; i++)
			lat[k++] = cls[t].lat[i];
	int status;
	if (waitpid(serve_pid, &status, WNOHANG) == serve_pid) {
		serve_pid = -1;
		printf("# cluster.agents.%d: the controller exited (%s %d) "
		       "before the window's end; its log:\n",
		       n, WIFSIGNALED(status) ? "signal" : "status",
		       WIFSIGNALED(status) ? WTERMSIG(status)
					   : WEXITSTATUS(status));
		print_tail(log);
	}
	int listed, not_ready;
	nodes_state(&listed, &not_ready);
	int events = count_lines(log, "not ready:");
	printf("BENCH cluster.agents.%d.heartbeats_per_s %.0f 1/s\n", n,
	       (double)ok / secs);
	printf("BENCH cluster.agents.%d.heartbeat_p50_ms %.2f ms\n", n,
	       quantile(lat, nlat, 0.50));
	printf("BENCH cluster.agents.%d.heartbeat_p99_ms %.2f ms\n", n,
	       quantile(lat, nlat, 0.99));
	printf("BENCH cluster.agents.%d.heartbeat_gap_max_ms %.0f ms\n", n,
	       (double)gap / 1e6);
	printf("BENCH cluster.agents.%d.controller_cpu %.3f cores\n", n,
	       (cpu1 - cpu0) / secs);
	printf("BENCH cluster.agents.%d.controller_rss_mib %.0f MiB\n", n,
	       (double)rss / 1024.0);
	printf("BENCH cluster.agents.%d.controller_rss_kib_per_agent %.1f "
	       "KiB\n",
	       n, (double)(rss - rss0) / (reg > 0 ? reg : 1));
	printf("BENCH cluster.agents.%d.notready %d nodes\n", n,
	       not_ready > events ? not_ready : events);
	char la[64];
	loadavg(la, sizeof(la));
	printf("# %d agents over %.1f s: %" PRId64
	       " heartbeats answered, %" PRId64 " errors, %" PRId64
	       " late (the previous one unanswered), %" PRId64
	       " acks not \"ready\"; GET /v1/nodes: %d simulated nodes, %d "
	       "not ready; %d \"not ready\" lines in the controller's log; "
	       "its RSS %.0f MiB before the first agent, peak %.0f MiB, "
	       "%d open fds; the clients used %.2f cores; the "
	       "machine was %.0f%% busy (%ld CPUs); load %s\n",
	       n, secs, ok, err, late, nr, listed, not_ready, events,
	       (double)rss0 / 1024.0, (double)hwm / 1024.0, fds,
	       (self1 - self0) / secs,
	       a1 > a0 ? 100.0 * (double)(b1 - b0) / (double)(a1 - a0) : 0,
	       sysconf(_SC_NPROCESSORS_ONLN), la);
	gf_free(lat);
	return 0;
}

/* ---- part 2: submissions -------------------------------------------- */

static int submit_errors; /* printed: the first few */

/* POST body to /v1/jobs; the job's id into id (201), else -1. */
static int submit(struct gf_client *cl, const char *body, char *id, size_t size)
{
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/jobs", R.base);
	struct gf_client_req q = { .method = GF_HTTP_POST,
				   .url = url,
				   .body = body,
				   .body_len = strlen(body),
				   .timeout_ms = 30000 };
	struct gf_client_answer a;
	struct gf_err e;
	struct gf_jv *v = NULL;
	int rc = -1;
	if (gf_client_request(cl, &q, &a, &e) == 0 && a.status == 201 &&
	    gf_jv_parse(gf_buf_str(&a.body), a.body.len, &v, &e) == 0 &&
	    gf_jv_str(gf_jv_get(v, "id"))) {
		snprintf(id, size, "%s", gf_jv_str(gf_jv_get(v, "id")));
		rc = 0;
	} else if (submit_errors++ < 3) {
		printf("# cluster: POST /v1/jobs: %s\n",
		       a.status ? gf_buf_str(&a.body) : e.msg);
	}
	gf_jv_free(v);
	gf_client_answer_release(&a);
	return rc;
}

static void submit_to_assigned(int m)
{
	struct gf_client *cl = gf_client_new();
	double *lat = gf_calloc((size_t)m + 1, sizeof(*lat));
	int n = 0, failed = 0;
	for (int i = 0; i < m && !interrupted; i++) {
		char body[160], id[GF_JOB_ID_MAX];
		snprintf(body, sizeof(body),
			 "{\"name\": \"bench-%d\", \"gpus\": 1, \"command\": "
			 "\"true\"}",
			 i);
		R.sent[i] = mono_ns();
		if (submit(cl, body, id, sizeof(id)) != 0) {
			failed++;
			continue;
		}
		int64_t deadline = R.sent[i] + 10 * 1000000000LL;
		while (!atomic_load(&R.assigned[i]) && mono_ns() < deadline)
			usleep(100);
		int64_t at = atomic_load(&R.assigned[i]);
		if (at)
			lat[n++] = (double)(at - R.sent[i]) / 1e6;
		else
			failed++;
	}
	gf_client_free(cl);
	if (n > 0) {
		printf("BENCH cluster.submit_to_assigned.p50_ms %.2f ms\n",
		       quantile(lat, (size_t)n, 0.50));
		printf("BENCH cluster.submit_to_assigned.p99_ms %.2f ms\n",
		       quantile(lat, (size_t)n, 0.99));
	}
	printf("# submit-to-assigned: %d jobs of 1 GPU one at a time, %d "
	       "assigned, %d failed; %d agents connected\n",
	       m, n, failed, R.n);
	gf_free(lat);
}

/* The real agent's node, ready in GET /v1/nodes/NAME within secs. */
static bool node_ready(const char *name, int secs)
{
	struct gf_client *cl = gf_client_new();
	char path[96];
	snprintf(path, sizeof(path), "/v1/nodes/%s", name);
	bool ready = false;
	for (int i = 0; i < secs * 10 && !ready && !interrupted; i++) {
		struct gf_jv *v = get_json(cl, path);
		const char *st = v ? gf_jv_str(gf_jv_get(v, "state")) : NULL;
		ready = st && !strcmp(st, "ready");
		gf_jv_free(v);
		if (!ready)
			sleep_ms(100);
	}
	gf_client_free(cl);
	return ready;
}

/* The job's state, "" unknown. */
static void job_state(struct gf_client *cl, const char *id, char *out,
		      size_t size)
{
	char path[96];
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	struct gf_jv *v = get_json(cl, path);
	const char *st = v ? gf_jv_str(gf_jv_get(v, "state")) : NULL;
	snprintf(out, size, "%s", st ? st : "");
	gf_jv_free(v);
}

static void submit_to_running(const char *fake_nvml, const char *root, int m)
{
	char state[560], log[560], runs[560];
	snprintf(state, sizeof(state), "%s/agent", tmpdir);
	snprintf(log, sizeof(log), "%s/agent.log", tmpdir);
	snprintf(runs, sizeof(runs), "%s/runs", tmpdir);
	mkdir(runs, 0700);
	char fixture[PATH_MAX + 64];
	snprintf(fixture, sizeof(fixture), "%s/%s", root, FIXTURE);
	bool fake = fake_nvml && access(fake_nvml, R_OK) == 0 &&
		    access(fixture, R_OK) == 0;
	if (!fake)
		printf("# submit-to-running: the fake NVML (%s) or its "
		       "fixture (%s) is absent (make tests-build builds "
		       "it): the agent runs --no-nvml (no UUIDs; starting "
		       "a job does not call NVML)\n",
		       fake_nvml ? fake_nvml : "not given", fixture);
	/* the environment: ours, and the fake NVML's */
	int ne = 0;
	while (environ[ne])
		ne++;
	char **envp = gf_calloc((size_t)ne + 3, sizeof(*envp));
	char lib[PATH_MAX + 32], fx[PATH_MAX + 96];
	snprintf(lib, sizeof(lib), "GPUFLEET_NVML_LIBRARY=%s",
		 fake ? fake_nvml : "");
	snprintf(fx, sizeof(fx), "GPUFLEET_FAKE_NVML_FIXTURE=%s", fixture);
	int k = 0;
	for (int i = 0; i < ne; i++)
		if (strncmp(environ[i], "GPUFLEET_NVML_LIBRARY=", 22) &&
		    strncmp(environ[i], "GPUFLEET_FAKE_NVML_FIXTURE=", 27))
			envp[k++] = environ[i];
	if (fake) {
		envp[k++] = lib;
		envp[k++] = fx;
	}
	const char *argv[] = { bin,
			       "agent",
			       "--listen",
			       "127.0.0.1:0",
			       "--template",
			       TEMPLATE,
			       fake ? "--nvml" : "--no-nvml",
			       "--controller",
			       R.base,
			       "--name",
			       "real-0",
			       "--label",
			       "bench=real",
			       "--state-dir",
			       state,
			       "--kill-grace",
			       "1s",
			       NULL };
	agent_pid = spawn(argv, envp, log);
	gf_free(envp);
	if (!node_ready("real-0", 30)) {
		printf("# submit-to-running: the real agent did not become "
		       "ready in 30 s; its log:\n");
		print_tail(log);
		return;
	}
	struct gf_client *cl = gf_client_new();
	double *lat = gf_calloc((size_t)m + 1, sizeof(*lat));
	int n = 0, failed = 0;
	for (int i = 0; i < m && !interrupted; i++) {
		char file[600], body[2048];
		char id[GF_JOB_ID_MAX], st[32];
		snprintf(file, sizeof(file), "%s/%d", runs, i);
		snprintf(body, sizeof(body),
			 "{\"name\": \"real-%d\", \"gpus\": 1, "
			 "\"node_selector\": {\"bench\": \"real\"}, "
			 "\"command\": \"date +%%s%%N > %s.tmp && mv %s.tmp "
			 "%s\"}",
			 i, file, file, file);
		int64_t sent = wall_ns();
		if (submit(cl, body, id, sizeof(id)) != 0) {
			failed++;
			continue;
		}
		int64_t deadline = mono_ns() + 10 * 1000000000LL;
		char *s = NULL;
		while (!interrupted && mono_ns() < deadline &&
		       !(s = slurp(file, NULL)))
			usleep(500);
		long long started = 0;
		if (s && sscanf(s, "%lld", &started) == 1 && started > 0)
			lat[n++] = (double)(started - sent) / 1e6;
		else
			failed++;
		gf_free(s);
		/* one after another: the next once this one ended */
		for (int w = 0; w < 200 && !interrupted; w++) {
			job_state(cl, id, st, sizeof(st));
			if (strcmp(st, "running") && strcmp(st, "pending"))
				break;
			sleep_ms(5);
		}
	}
	gf_client_free(cl);
	if (n > 0) {
		printf("BENCH cluster.submit_to_running.p50_ms %.2f ms\n",
		       quantile(lat, (size_t)n, 0.50));
		printf("BENCH cluster.submit_to_running.p99_ms %.2f ms\n",
		       quantile(lat, (size_t)n, 0.99));
	}
	/* kubernetes/community, sig-scalability/slos/pod_startup_latency.md:
	 * startup latency of stateless schedulable pods, image pulls
	 * excluded, pod creation until all containers are reported started
	 * and observed via watch: 99th percentile per cluster-day <= 5 s
	 * (an SLO, a bound; not a measured typical value) */
	printf("BENCH peer.kubernetes.pod_startup_slo_p99_ms 5000 ms\n");
	printf("# submit-to-running: %d jobs on one real agent (%s), one "
	       "after another, %d ran, %d failed; the POST sent until the "
	       "job's process ran (its date +%%s%%N); %d simulated agents "
	       "connected as well\n",
	       m, fake ? "fake NVML" : "--no-nvml", n, failed, R.n);
	gf_free(lat);
	stop_child(&agent_pid, 20);
}

/* ---- main ----------------------------------------------------------- */

/* Fds this process needs for n agents: two sockets each, a socket pair
 * per curl multi handle (libcurl's wakeup), and room for its own files
 * and clients.  The controller (which inherits the limit) needs two per
 * agent and a few dozen more, fewer than this. */
static rlim_t fds_for(int n, int conns)
{
	int multis = n / GROUP + THREADS;
	return (rlim_t)(conns * (int64_t)n + 2 * multis + FD_RESERVE);
}

/* RLIMIT_NOFILE raised for n agents (soft to hard, and hard too where
 * allowed); the soft limit now. */
static rlim_t raise_nofile(int n)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rlim_t want = fds_for(n, 2);
	if (rl.rlim_cur >= want)
		return rl.rlim_cur;
	if (rl.rlim_max < want) {
		struct rlimit up = { want, want };
		if (setrlimit(RLIMIT_NOFILE, &up) == 0) {
			printf("# RLIMIT_NOFILE raised to %lu (the hard limit "
			       "was %lu)\n",
			       (unsigned long)want, (unsigned long)rl.rlim_max);
			return want;
		}
		printf("# RLIMIT_NOFILE: the hard limit %lu is below the %lu "
		       "that %d agents need at two sockets per agent, here "
		       "and in the controller, and cannot be raised (%s; "
		       "ulimit -Hn, or CAP_SYS_RESOURCE)\n",
		       (unsigned long)rl.rlim_max, (unsigned long)want, n,
		       gf_strerror(-errno));
	}
	rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	return rl.rlim_cur;
}

static int env_int(const char *name, int def, int lo, int hi)
{
	const char *v = getenv(name);
	char *end;
	long x = v && *v ? strtol(v, &end, 10) : def;
	if (v && *v && (*end || x < lo || x > hi)) {
		printf("# %s=%s: expected %d to %d; using %d\n", name, v, lo,
		       hi, def);
		return def;
	}
	return (int)x;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: cluster_bench GPUFLEET_BIN "
				"[FAKE_NVML_LIB [REPO_ROOT]]\n");
		return 2;
	}
	bin = argv[1];
	const char *fake_nvml = argc > 2 ? argv[2] : NULL;
	const char *root = argc > 3 ? argv[3] : ".";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access(bin, X_OK) != 0) {
		printf("# skipped cluster benchmarks: %s absent (make builds "
		       "it)\n",
		       bin);
		return 0;
	}
	int sizes[8], nsizes = 0;
	const char *sz = getenv("GPUFLEET_BENCH_AGENTS");
	char list[128];
	snprintf(list, sizeof(list), "%s", sz && *sz ? sz : DEFAULT_SIZES);
	char *save = NULL;
	for (char *t = strtok_r(list, ",", &save); t && nsizes < 8;
	     t = strtok_r(NULL, ",", &save)) {
		long x = strtol(t, NULL, 10);
		if (x < 1 || x > MAX_AGENTS) {
			fprintf(stderr,
				"cluster_bench: GPUFLEET_BENCH_AGENTS: '%s': "
				"expected 1 to %d\n",
				t, MAX_AGENTS);
			return 2;
		}
		sizes[nsizes++] = (int)x;
	}
	int window = env_int("GPUFLEET_BENCH_WINDOW_S", DEFAULT_WINDOW, 2, 600);
	int jobs = env_int("GPUFLEET_BENCH_JOBS", 500, 0, 100000);
	int real = env_int("GPUFLEET_BENCH_REAL_JOBS", 100, 0, 10000);
	int conns = env_int("GPUFLEET_BENCH_CONNS", 0, 0, 2); /* 0: auto */
	int most = 0;
	for (int i = 0; i < nsizes; i++)
		most = sizes[i] > most ? sizes[i] : most;
	rlim_t nofile = raise_nofile(most);

	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	const char *tmp = getenv("TMPDIR");
	tmp = tmp && *tmp && strlen(tmp) < 400 ? tmp : "/tmp";
	snprintf(tmpdir, sizeof(tmpdir), "%s/gf-cluster-bench-XXXXXX", tmp);
	if (!mkdtemp(tmpdir)) {
		printf("# cluster: cannot create %s: %s\n", tmpdir,
		       gf_strerror(-errno));
		return 1;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	R.hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	R.hdrs = curl_slist_append(R.hdrs, "Expect:");
	/* before the client threads start, which read them */
	R.njobs = jobs;
	R.sent = gf_calloc((size_t)jobs + 1, sizeof(*R.sent));
	R.assigned = gf_calloc((size_t)jobs + 1, sizeof(*R.assigned));
	int rc = load_template();
	printf("# cluster: `gpufleet serve --agents` in its own process "
	       "(heartbeat_s 1, notready_after_s %d, default tick; CPU and "
	       "RSS from /proc), simulated agents in this one (%d threads, "
	       "libcurl multi on epoll); RLIMIT_NOFILE %lu here and in the "
	       "controller\n",
	       NOTREADY_S, THREADS, (unsigned long)nofile);
	for (int i = 0; rc == 0 && i < nsizes && !interrupted; i++) {
		char log[PATH_MAX + 32];
		/* two connections per agent where they fit in both
		 * processes (the controller needs a few dozen more fds
		 * for itself), else one */
		R.conns = conns ? conns
			  : fds_for(sizes[i], 2) <= nofile &&
					  2 * (rlim_t)sizes[i] + 100 <= nofile
				  ? 2
				  : 1;
		if (fds_for(sizes[i], R.conns) > nofile) {
			int fit = sizes[i];
			while (fit > 1 && fds_for(fit, R.conns) > nofile)
				fit--;
			printf("# cluster.agents.%d: cannot be held here: it "
			       "needs %lu fds in this process and over %d in "
			       "the controller, RLIMIT_NOFILE is %lu; measured "
			       "with %d agents, the most that fit\n",
			       sizes[i],
			       (unsigned long)fds_for(sizes[i], R.conns),
			       R.conns * sizes[i], (unsigned long)nofile, fit);
			sizes[i] = fit;
		}
		printf("# cluster.agents.%d: %d keep-alive connection%s per "
		       "agent%s\n",
		       sizes[i], R.conns, R.conns == 2 ? "s" : "",
		       R.conns == 2
			       ? " (heartbeats on one, the long poll on the "
				 "other)"
			       : " (agent --one-connection: no long poll, "
				 "the assignments read when a heartbeat's "
				 "answer says a newer generation; two at this "
				 "size need more fds than RLIMIT_NOFILE "
				 "allows)");
		printf("BENCH cluster.agents.%d.connections_per_agent %d "
		       "connections\n",
		       sizes[i], R.conns);
		rc = agents_run(sizes[i], window, log, sizeof(log));
		bool last = i == nsizes - 1;
		if (rc == 0 && last && jobs > 0 && !interrupted)
			submit_to_assigned(jobs);
		if (rc == 0 && last && real > 0 && !interrupted)
			submit_to_running(fake_nvml, root, real);
		if (rc == 0 && last && (jobs > 0 || real > 0) && !interrupted)
			printf("# cluster.agents.%d: %d \"not ready\" lines in "
			       "the controller's log after the submissions\n",
			       sizes[i], count_lines(log, "not ready:"));
		clients_stop();
		stop_child(&serve_pid, 30);
		rc = 0; /* a size that failed said why; try the next */
	}
	/* kubernetes/website, content/en/docs/setup/best-practices/
	 * cluster-large.md: "Kubernetes supports clusters with up to 5,000
	 * nodes" (a stated limit, on control planes of more than 2 cores) */
	printf("BENCH peer.kubernetes.max_nodes 5000 nodes\n");
	if (interrupted)
		printf("# cluster: interrupted\n");
	cleanup();
	curl_slist_free_all(R.hdrs);
	gf_free(R.sent);
	gf_free(R.assigned);
	template_free();
	curl_global_cleanup();
	return interrupted ? 1 : 0;
}
