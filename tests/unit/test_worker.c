/*
 * test_worker.c - the node agent's worker (src/worker/) with real
 * processes, no mocks: the environment and CPU affinity a job sees (on a
 * recording of this machine with one NVIDIA function added, as
 * bind_live.sh does, so the binding is real; on the built-in HGX node,
 * environment only, for NICs, shares and MIG); exit codes and signals;
 * max runtime; stop (SIGTERM to the group, SIGKILL after the grace, the
 * group and its children gone) with process groups and, where this
 * machine allows, cgroups; a job never started twice; logs; the worker
 * closed or killed -9 and a new one finding running jobs and the exit
 * codes of those that ended meanwhile; pid reuse, another boot, a
 * killed shim, unreadable and unfinished records.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gpufleet/bind.h>

#include "agent/worker.h"
#include "helpers.h"
#include "topo/source.h"
#include "util/mem.h"

struct fx {
	char dir[128], state[160], logs[160], out[160];
	char node[32]; /* unique per process: cgroup names hold it */
	struct gf_worker *w;
	struct gf_worker_event seen[64];
	int nseen;
	bool used[64];
};

static int setup(void **state)
{
	struct fx *f = gf_calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/gf-worker-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	snprintf(f->logs, sizeof(f->logs), "%s/logs", f->dir);
	snprintf(f->out, sizeof(f->out), "%s/out", f->dir);
	snprintf(f->node, sizeof(f->node), "t%d", (int)getpid());
	mkdir(f->out, 0700);
	*state = f;
	return 0;
}

/* A failed test may leave jobs running: kill them and their cgroups. */
static void kill_leftovers(struct fx *f)
{
	struct gf_worker_job run[16];
	int n = gf_worker_running(f->w, run, 16);
	for (int i = 0; i < n && i < 16; i++) {
		kill(-run[i].pid, SIGKILL);
		if (run[i].cgroup[0] == '\0')
			continue;
		char kill_file[GF_WORKER_PATH_MAX + 16];
		snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill",
			 run[i].cgroup);
		FILE *k = fopen(kill_file, "w");
		if (k) {
			fputs("1", k);
			fclose(k);
		}
		for (int t = 0; t < 100 && rmdir(run[i].cgroup) != 0; t++)
			nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[256];
	if (f->w)
		kill_leftovers(f);
	gf_worker_close(f->w);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	gf_free(f);
	return 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct gf_worker *open_w(struct fx *f, const struct gf_node *n,
				bool env_only, int64_t grace, bool cgroup)
{
	struct gf_worker_opts o = {
		.state_dir = f->state,
		.log_dir = f->logs,
		.node_name = f->node,
		.node = n,
		.env_only = env_only,
		.grace_ms = grace,
		.cgroup = cgroup,
	};
	struct gf_err e;
	gf_err_clear(&e);
	struct gf_worker *w = NULL;
	int rc = gf_worker_open(&o, &w, &e);
	if (rc != 0)
		print_message("open: %s\n", e.msg);
	assert_int_equal(rc, 0);
	char msg[256];
	assert_int_equal(gf_worker_check(w, msg, sizeof(msg)), 0);
	return w;
}

/* Poll until an event of that kind for job/replica comes (each event is
 * taken once); fails the test after ms. */
static struct gf_worker_event *wait_ev(struct fx *f, struct gf_worker *w,
				       enum gf_worker_event_kind kind,
				       const char *job, int replica, int ms)
{
	int64_t until = now_ms() + ms;
	for (;;) {
		for (int i = 0; i < f->nseen; i++) {
			struct gf_worker_event *ev = &f->seen[i];
			if (!f->used[i] && ev->kind == kind &&
			    ev->replica == replica &&
			    strcmp(ev->job, job) == 0) {
				f->used[i] = true;
				return ev;
			}
		}
		if (now_ms() > until)
			break;
		int room = 64 - f->nseen;
		assert_true(room > 0);
		f->nseen += gf_worker_poll(w, f->seen + f->nseen, room);
		char msg[256];
		assert_int_equal(gf_worker_check(w, msg, sizeof(msg)), 0);
		sleep_ms(20);
	}
	print_message("no %s event for %s.%d in %d ms\n",
		      kind == GF_WORKER_STARTED ? "STARTED" : "ENDED", job,
		      replica, ms);
	fail();
	return NULL;
}

static int start(struct gf_worker *w, const char *job, int replica,
		 const char *cmd, int64_t max_ms, struct gf_err *e)
{
	struct gf_assignment a = { .job = job,
				   .replica = replica,
				   .command = cmd,
				   .max_runtime_ms = max_ms };
	gf_err_clear(e);
	return gf_worker_start(w, &a, e);
}

static void start_ok(struct gf_worker *w, const char *job, int replica,
		     const char *cmd, int64_t max_ms)
{
	struct gf_err e;
	int rc = start(w, job, replica, cmd, max_ms, &e);
	if (rc != 0)
		print_message("start %s: %s\n", job, e.msg);
	assert_int_equal(rc, 0);
}

static bool wait_file(const char *path, int ms)
{
	for (int t = 0; t < ms; t += 10) {
		struct stat st;
		if (stat(path, &st) == 0 && st.st_size > 0)
			return true;
		sleep_ms(10);
	}
	return false;
}

/* Read a file whole; /proc and cgroup files too (their size is 0). */
static char *slurp(const char *path)
{
	FILE *in = fopen(path, "r");
	if (in == NULL)
		return gf_strdup("");
	char *buf = gf_malloc(1 << 20);
	size_t len = fread(buf, 1, (1 << 20) - 1, in);
	buf[len] = '\0';
	fclose(in);
	return buf;
}

/* Whether the file at path holds text within ms. */
/* A run's log: its start marker (naming who), one line of output, its
 * end marker (holding why), and nothing else. */
static void assert_log_lines(const char *path, const char *who, const char *out,
			     const char *why)
{
	char *log = slurp(path);
	print_message("%s:\n%s", path, log);
	char *l1 = log, *l2 = strchr(l1, '\n');
	assert_non_null(l2);
	*l2++ = '\0';
	char *l3 = strchr(l2, '\n');
	assert_non_null(l3);
	*l3++ = '\0';
	char *end = strchr(l3, '\n');
	assert_non_null(end);
	*end = '\0';
	assert_string_equal(end + 1, "");
	assert_int_equal(strncmp(l1, "==> gpufleet: ", 14), 0);
	assert_int_equal(strncmp(l1 + 14, who, strlen(who)), 0);
	assert_non_null(strstr(l1, " started 20"));
	assert_string_equal(l2, out);
	assert_int_equal(strncmp(l3, "==> gpufleet: ", 14), 0);
	assert_int_equal(strncmp(l3 + 14, who, strlen(who)), 0);
	assert_non_null(strstr(l3, " ended 20"));
	assert_non_null(strstr(l3, why));
	gf_free(log);
}

/* --- the log's markers and paths (pure) ------------------------------- */

static void test_log_markers(void **state)
{
	(void)state;
	char line[512], p[64];
	/* 2026-12-02T11:03:04Z */
	assert_int_equal(gf_worker_marker_start(line, sizeof(line), "j12", 0, 2,
						"gpu-01", 1796209384000LL),
			 0);
	assert_string_equal(line, "==> gpufleet: j12 replica 0 attempt 2 on "
				  "gpu-01 started 2026-12-02T11:03:04Z <==\n");
	struct gf_worker_event ev = { .kind = GF_WORKER_ENDED,
				      .job = "j12",
				      .attempt = 2,
				      .end = GF_WORKER_END_EXITED,
				      .exit_code = 3,
				      .end_ms = 1796209500000LL };
	assert_int_equal(gf_worker_marker_end(line, sizeof(line), &ev, "n1"),
			 0);
	assert_string_equal(line, "==> gpufleet: j12 replica 0 attempt 2 on n1 "
				  "ended 2026-12-02T11:05:00Z: exit code 3 "
				  "<==\n");
	ev.end = GF_WORKER_END_MAX_RUNTIME;
	ev.exit_code = -1;
	ev.signal = 9;
	assert_int_equal(gf_worker_marker_end(line, sizeof(line), &ev, "n1"),
			 0);
	assert_non_null(strstr(line, ": max runtime reached, signal 9 ("));
	ev.end = GF_WORKER_END_STOPPED;
	assert_int_equal(gf_worker_marker_end(line, sizeof(line), &ev, "n1"),
			 0);
	assert_non_null(
		strstr(line, ": cancelled (stopped by the controller)"));
	assert_int_equal(gf_worker_marker_end(line, 20, &ev, "n1"), GF_ETOOBIG);
	/* tokens */
	assert_int_equal(gf_worker_expand(p, sizeof(p), "/o/%j-%r-%a.%n%%",
					  "j7", 3, 12, "gpu-01"),
			 0);
	assert_string_equal(p, "/o/j7-3-12.gpu-01%");
	assert_int_equal(
		gf_worker_expand(p, sizeof(p), "/o/%x", "j7", 0, 1, "n"),
		GF_EINVAL);
	assert_int_equal(gf_worker_expand(p, 8, "/o/%j%j%j", "j7", 0, 1, "n"),
			 GF_ETOOBIG);
	assert_int_equal(gf_worker_expand(p, 6, "/o/%a", "j7", 0, 12345, "n"),
			 GF_ETOOBIG);
	assert_int_equal(gf_worker_log_path(p, sizeof(p), "/l", "j7", 1, 2), 0);
	assert_string_equal(p, "/l/j7.1.2.log");
}

static bool wait_text(const char *path, const char *text, int ms)
{
	int64_t until = now_ms() + ms;
	for (;;) {
		char *s = slurp(path);
		bool in = strstr(s, text) != NULL;
		gf_free(s);
		if (in || now_ms() > until)
			return in;
		sleep_ms(10);
	}
}

static int read_int(const char *path)
{
	char *s = slurp(path);
	int v = atoi(s);
	gf_free(s);
	return v;
}

/* The number after "key=" in the file at path (a record, a stamp); the
 * test fails when there is none. */
static int64_t read_key(const char *path, const char *key)
{
	char *s = slurp(path), want[64];
	snprintf(want, sizeof(want), "%s=", key);
	const char *p = strstr(s, want);
	if (p == NULL)
		print_message("%s: no '%s' in '%s'\n", path, want, s);
	assert_non_null(p);
	long long v = strtoll(p + strlen(want), NULL, 10);
	gf_free(s);
	return v;
}

/* A job's command part that stamps the wall clock, "at=MS", into path
 * (ms since the epoch, as the worker's start_ms and end_ms). */
static void stamp_cmd(char *out, size_t size, const char *path)
{
	snprintf(out, size, "echo at=$(date +%%s%%3N) > %s", path);
}

/* --- environment and binding ----------------------------------------- */

/* This machine's topology with one H100 added behind the first host
 * bridge (tests/integration/bind_live.sh does the same), as a node that
 * is this system: the binding reaches the real kernel. */
static struct gf_node *live_node(struct fx *f)
{
	char xml[256], gpu[256], cmd[512];
	snprintf(xml, sizeof(xml), "%s/host.xml", f->dir);
	snprintf(gpu, sizeof(gpu), "%s/gpu.xml", f->dir);
	snprintf(cmd, sizeof(cmd),
		 "lstopo-no-graphics --of xml >'%s' 2>/dev/null", xml);
	if (system(cmd) != 0) {
		print_message("lstopo-no-graphics absent: skipped\n");
		skip();
	}
	char *text = slurp(xml);
	const char *b = strstr(text, "bridge_type=\"0-1\"");
	const char *eol = b ? strchr(b, '\n') : NULL;
	if (eol == NULL) {
		gf_free(text);
		print_message("no PCI host bridge seen by hwloc: skipped\n");
		skip();
	}
	FILE *o = fopen(gpu, "w");
	assert_non_null(o);
	fwrite(text, 1, (size_t)(eol + 1 - text), o);
	fputs("<object type=\"PCIDev\" gp_index=\"99999\" "
	      "pci_busid=\"0000:00:1f.7\" pci_type=\"0302 [10de:2330] "
	      "[10de:16c1] a1\" pci_link_speed=\"0.000000\"/>\n",
	      o);
	fputs(eol + 1, o);
	fclose(o);
	gf_free(text);
	/* the added GPU is this machine's through the fake NVML (the
	 * recording is checked against the machine: this_system.h) */
	char fx[256], lib[512], exe[400];
	snprintf(fx, sizeof(fx), "%s/gpu.nvml", f->dir);
	FILE *nf = fopen(fx, "w");
	assert_non_null(nf);
	fputs("gpu 00000000:00:1f.7\nname NVIDIA H100 80GB HBM3\n", nf);
	fclose(nf);
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(len > 0);
	exe[len] = '\0';
	fake_nvml_path(exe, lib, sizeof(lib));
	setenv("GPUFLEET_NVML_LIBRARY", lib, 1);
	setenv("GPUFLEET_FAKE_NVML_FIXTURE", fx, 1);
	struct gf_node_source src = { .xml = gpu,
				      .this_system = true,
				      .nvml = 1 };
	struct gf_node *n = NULL;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_node_source_load(&src, &n, &e);
	if (rc != 0)
		print_message("load %s: %s\n", gpu, e.msg);
	assert_int_equal(rc, 0);
	assert_true(n->this_system);
	assert_int_equal(n->ngpus, 1);
	return n;
}

/* The lines of an `env` dump, sorted, against the expected set. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void assert_env(const char *path, const char **want, int nwant)
{
	char *text = slurp(path);
	const char *got[128];
	int ngot = 0;
	for (char *line = strtok(text, "\n"); line && ngot < 128;
	     line = strtok(NULL, "\n"))
		/* what a shell adds itself where /bin/sh is bash (dash adds
		 * only PWD, which is expected) */
		if (strncmp(line, "SHLVL=", 6) != 0 &&
		    strncmp(line, "_=", 2) != 0 &&
		    strncmp(line, "OLDPWD=", 7) != 0)
			got[ngot++] = line;
	const char *w2[128] = { NULL };
	memcpy(w2, want, sizeof(*want) * (size_t)nwant);
	qsort(got, (size_t)ngot, sizeof(*got), cmp_str);
	qsort(w2, (size_t)nwant, sizeof(*w2), cmp_str);
	bool same = ngot == nwant;
	for (int i = 0; same && i < ngot; i++)
		same = strcmp(got[i], w2[i]) == 0;
	if (!same) {
		for (int i = 0; i < ngot; i++)
			print_message("got:  %s\n", got[i]);
		for (int i = 0; i < nwant; i++)
			print_message("want: %s\n", w2[i]);
	}
	gf_free(text);
	assert_true(same);
}

static void plan_env(const struct gf_node *n, int gpu, char want[][1100],
		     int *nw)
{
	struct gf_bind_request r = { .gpus = { gpu }, .ngpus = 1 };
	struct gf_bind_plan *p = gf_malloc(sizeof(*p));
	struct gf_err e;
	assert_int_equal(gf_bind_plan(n, &r, p, &e), 0);
	for (int i = 0; i < p->nenv; i++)
		if (strncmp(p->env_name[i], "NCCL_", 5) == 0 ||
		    strncmp(p->env_name[i], "UCX_", 4) == 0)
			snprintf(want[(*nw)++], 1100, "%s=%s", p->env_name[i],
				 p->env_value[i]);
	gf_free(p);
}

static void test_env_and_affinity_live(void **state)
{
	struct fx *f = *state;
	struct gf_node *n = live_node(f);
	f->w = open_w(f, n, false, 0, false);
	static const char *uuid = "GPU-11111111-2222-3333-4444-555555555555";
	struct gf_worker_env extra[] = { { "HOME", "/tmp" },
					 { "FOO", "bar baz" } };
	char cmd[512];
	snprintf(cmd, sizeof(cmd),
		 "env > %s/env1; grep Cpus_allowed_list /proc/self/status "
		 "| cut -f2 > %s/cpus1; echo hello-out; echo hello-err >&2",
		 f->out, f->out);
	struct gf_assignment a = {
		.job = "j1",
		.replica = 1,
		.world_size = 2,
		.rank = 1,
		.local_rank = 0,
		.master_addr = "10.0.0.1",
		.master_port = 29500,
		.place = { .gpus = { 0 }, .ngpus = 1 },
		.gpu_uuids = { uuid },
		.cpu_milli = 1000,
		.command = cmd,
		.env = extra,
		.nenv = 2,
		.array_job = "j7", /* task 5 of array j7 (issue 21) */
		.array_task = 5,
	};
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_worker_start(f->w, &a, &e);
	if (rc)
		print_message("%s\n", e.msg);
	assert_int_equal(rc, 0);
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_ENDED, "j1", 1, 5000);
	assert_int_equal(ev->exit_code, 0);
	assert_int_equal(ev->end, GF_WORKER_END_EXITED);
	/* exactly: ours, the assignment's, the planner's NIC, sh's PWD */
	char want[24][1100];
	int nw = 0;
	const char *fixed[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
		"/sbin:/bin",
		"HOME=/tmp",
		"FOO=bar baz",
		"CUDA_VISIBLE_DEVICES=GPU-11111111-2222-3333-4444-"
		"555555555555",
		"GPUFLEET_JOB_ID=j1",
		"GPUFLEET_REPLICA=1",
		"WORLD_SIZE=2",
		"RANK=1",
		"LOCAL_RANK=0",
		"MASTER_ADDR=10.0.0.1",
		"MASTER_PORT=29500",
		"GPUFLEET_ARRAY_JOB_ID=j7",
		"GPUFLEET_ARRAY_TASK_ID=5",
		"SLURM_ARRAY_JOB_ID=7",
		"SLURM_ARRAY_TASK_ID=5",
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		snprintf(want[nw++], 1100, "%s", fixed[i]);
	/* its user's (the agent's own here: no user given): USER, LOGNAME,
	 * SHELL (HOME is the assignment's), and PWD its home (issue 21) */
	const struct passwd *pw = getpwuid(geteuid());
	assert_non_null(pw);
	snprintf(want[nw++], 1100, "USER=%s", pw->pw_name);
	snprintf(want[nw++], 1100, "LOGNAME=%s", pw->pw_name);
	if (pw->pw_shell && pw->pw_shell[0])
		snprintf(want[nw++], 1100, "SHELL=%s", pw->pw_shell);
	snprintf(want[nw++], 1100, "PWD=%s",
		 pw->pw_dir[0] == '/' ? pw->pw_dir : "/");
	snprintf(want[nw++], 1100, "GPUFLEET_NODE=%s", f->node);
	plan_env(n, 0, want, &nw);
	const char *wp[24] = { NULL };
	for (int i = 0; i < nw; i++)
		wp[i] = want[i];
	char path[256];
	snprintf(path, sizeof(path), "%s/env1", f->out);
	assert_env(path, wp, nw);
	/* the one CPU the planner picks for cpu_milli 1000 */
	struct gf_bind_request r = { .gpus = { 0 }, .ngpus = 1, .cpus = 1 };
	struct gf_bind_plan *p = gf_malloc(sizeof(*p));
	assert_int_equal(gf_bind_plan(n, &r, p, &e), 0);
	char expect[256];
	gf_bitmap_format_list(&p->cpus, expect, sizeof(expect));
	snprintf(path, sizeof(path), "%s/cpus1", f->out);
	char *got = slurp(path);
	got[strcspn(got, "\n")] = '\0';
	print_message("job bound to CPUs %s (plan %s)\n", got, expect);
	assert_string_equal(got, expect);
	gf_free(got);
	/* the log holds both streams */
	snprintf(path, sizeof(path), "%s/j1.1.0.log", f->logs);
	char *log = slurp(path);
	assert_non_null(strstr(log, "hello-out\n"));
	assert_non_null(strstr(log, "hello-err\n"));
	gf_free(log);
	/* no UUID anywhere: indexes in PCI bus order; every local CPU */
	snprintf(cmd, sizeof(cmd),
		 "env > %s/env2; grep Cpus_allowed_list /proc/self/status "
		 "| cut -f2 > %s/cpus2",
		 f->out, f->out);
	struct gf_assignment b = { .job = "j2",
				   .place = { .gpus = { 0 }, .ngpus = 1 },
				   .command = cmd };
	assert_int_equal(gf_worker_start(f->w, &b, &e), 0);
	wait_ev(f, f->w, GF_WORKER_ENDED, "j2", 0, 5000);
	snprintf(path, sizeof(path), "%s/env2", f->out);
	char *env2 = slurp(path);
	assert_non_null(strstr(env2, "CUDA_VISIBLE_DEVICES=0\n"));
	assert_non_null(strstr(env2, "CUDA_DEVICE_ORDER=PCI_BUS_ID\n"));
	assert_null(strstr(env2, "WORLD_SIZE"));
	gf_free(env2);
	r.cpus = 0;
	assert_int_equal(gf_bind_plan(n, &r, p, &e), 0);
	gf_bitmap_format_list(&p->cpus, expect, sizeof(expect));
	snprintf(path, sizeof(path), "%s/cpus2", f->out);
	got = slurp(path);
	got[strcspn(got, "\n")] = '\0';
	assert_string_equal(got, expect);
	gf_free(got);
	gf_free(p);
	gf_worker_close(f->w);
	f->w = NULL;
	gf_node_free(n);
}

/* A CPU node (the live machine, GPUs left out): a job without GPUs is
 * bound to ceil(cpu_milli / 1000) CPUs, those the fewest running jobs
 * hold; 0 CPUs asked: unbound. */
static void test_cpu_node_binding(void **state)
{
	struct fx *f = *state;
	struct gf_node_source src = { .cpu_only = true };
	struct gf_node *n = NULL;
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_node_source_load(&src, &n, &e), 0);
	assert_int_equal(n->ngpus, 0);
	assert_true(n->this_system);
	int ncpu = gf_bitmap_count(&n->cpus);
	if (ncpu < 2) {
		print_message("one CPU: nothing to tell apart\n");
		gf_node_free(n);
		skip();
	}
	f->w = open_w(f, n, false, 0, false);
	char cmd[768], path[256];
	/* j1 holds one CPU while j2 starts: j2 gets another */
	snprintf(cmd, sizeof(cmd),
		 "grep Cpus_allowed_list /proc/self/status | cut -f2 > "
		 "%s/c1.tmp; mv %s/c1.tmp %s/c1; sleep 30",
		 f->out, f->out, f->out);
	struct gf_assignment a = { .job = "j1",
				   .cpu_milli = 1000,
				   .command = cmd };
	assert_int_equal(gf_worker_start(f->w, &a, &e), 0);
	snprintf(path, sizeof(path), "%s/c1", f->out);
	for (int i = 0; i < 500 && access(path, R_OK) != 0; i++)
		sleep_ms(10);
	char *c1 = slurp(path);
	c1[strcspn(c1, "\n")] = '\0';
	struct gf_bitmap b1;
	assert_int_equal(gf_bitmap_parse_list(&b1, c1), 0);
	assert_int_equal(gf_bitmap_count(&b1), 1);
	snprintf(cmd, sizeof(cmd),
		 "grep Cpus_allowed_list /proc/self/status | cut -f2 > %s/c2",
		 f->out);
	struct gf_assignment b = { .job = "j2",
				   .cpu_milli = 500,
				   .command = cmd };
	assert_int_equal(gf_worker_start(f->w, &b, &e), 0);
	wait_ev(f, f->w, GF_WORKER_ENDED, "j2", 0, 5000);
	snprintf(path, sizeof(path), "%s/c2", f->out);
	char *c2 = slurp(path);
	c2[strcspn(c2, "\n")] = '\0';
	struct gf_bitmap b2;
	assert_int_equal(gf_bitmap_parse_list(&b2, c2), 0);
	assert_int_equal(gf_bitmap_count(&b2), 1);
	print_message("j1 on CPU %s, j2 on CPU %s\n", c1, c2);
	assert_false(gf_bitmap_intersects(&b1, &b2));
	/* no CPU asked: every CPU of the node */
	snprintf(cmd, sizeof(cmd),
		 "grep Cpus_allowed_list /proc/self/status | cut -f2 > %s/c3",
		 f->out);
	struct gf_assignment c = { .job = "j3", .command = cmd };
	assert_int_equal(gf_worker_start(f->w, &c, &e), 0);
	wait_ev(f, f->w, GF_WORKER_ENDED, "j3", 0, 5000);
	snprintf(path, sizeof(path), "%s/c3", f->out);
	char *c3 = slurp(path);
	c3[strcspn(c3, "\n")] = '\0';
	struct gf_bitmap b3;
	assert_int_equal(gf_bitmap_parse_list(&b3, c3), 0);
	assert_true(gf_bitmap_is_subset(&n->cpus, &b3));
	assert_int_equal(gf_worker_stop(f->w, "j1", 0, 0, &e), 0);
	wait_ev(f, f->w, GF_WORKER_ENDED, "j1", 0, 5000);
	gf_free(c1);
	gf_free(c2);
	gf_free(c3);
	gf_worker_close(f->w);
	f->w = NULL;
	gf_node_free(n);
}

static struct gf_node *template_node(const char *name)
{
	struct gf_node_source src = { .template_name = name };
	struct gf_node *n = NULL;
	struct gf_err e;
	assert_int_equal(gf_node_source_load(&src, &n, &e), 0);
	return n;
}

/* A recorded HGX node (environment only: it is not this machine): the
 * nearest NIC's variables, a share and a MIG instance, GPU-seconds. */
static void test_env_template(void **state)
{
	struct fx *f = *state;
	struct gf_node *n = template_node("hgx-h100");
	struct gf_worker_opts o = { .state_dir = f->state,
				    .log_dir = f->logs,
				    .node_name = f->node,
				    .node = n };
	struct gf_worker *w = NULL;
	struct gf_err e;
	assert_int_equal(gf_worker_open(&o, &w, &e), GF_ENOTTHIS);
	assert_null(w);
	f->w = open_w(f, n, true, 0, false);
	/* each job stamps the time it ran: its start_ms before it, its
	 * end_ms after */
	char cmd[1024], stamp[512], at_share[256], at_whole[256];
	snprintf(at_share, sizeof(at_share), "%s/share.at", f->out);
	snprintf(at_whole, sizeof(at_whole), "%s/whole.at", f->out);
	stamp_cmd(stamp, sizeof(stamp), at_share);
	snprintf(cmd, sizeof(cmd), "env > %s/share; %s; sleep 0.3", f->out,
		 stamp);
	struct gf_assignment a = {
		.job = "share",
		.kind = GF_WORKER_GPU_SHARE,
		.place = { .gpus = { 3 }, .ngpus = 1, .gpu_milli = 250 },
		.gpu_uuids = { "GPU-aaaa" },
		.command = cmd
	};
	assert_int_equal(gf_worker_start(f->w, &a, &e), 0);
	snprintf(cmd, sizeof(cmd), "env > %s/mig", f->out);
	struct gf_assignment m = {
		.job = "mig",
		.kind = GF_WORKER_GPU_MIG,
		.place = { .gpus = { 5 }, .ngpus = 1, .gpu_milli = 143 },
		.mig_uuid = "MIG-0a1b2c3d-0000-1111-2222-"
			    "333344445555",
		.command = cmd
	};
	assert_int_equal(gf_worker_start(f->w, &m, &e), 0);
	char whole[600];
	stamp_cmd(stamp, sizeof(stamp), at_whole);
	snprintf(whole, sizeof(whole), "%s; sleep 0.2", stamp);
	struct gf_assignment wh = { .job = "whole",
				    .place = { .gpus = { 0, 1 }, .ngpus = 2 },
				    .command = whole };
	assert_int_equal(gf_worker_start(f->w, &wh, &e), 0);
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_ENDED, "share", 0, 5000);
	int64_t at = read_key(at_share, "at");
	assert_true(ev->start_ms <= at && at <= ev->end_ms);
	double secs = (double)(ev->end_ms - ev->start_ms) / 1000.0;
	assert_true(ev->gpu_seconds - 0.25 * secs < 1e-9 &&
		    0.25 * secs - ev->gpu_seconds < 1e-9);
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "whole", 0, 5000);
	at = read_key(at_whole, "at");
	assert_true(ev->start_ms <= at && at <= ev->end_ms);
	secs = (double)(ev->end_ms - ev->start_ms) / 1000.0;
	assert_true(ev->gpu_seconds - 2 * secs < 1e-9 &&
		    2 * secs - ev->gpu_seconds < 1e-9);
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "mig", 0, 5000);
	assert_true(ev->gpu_seconds >= 0);
	char path[256], want[8][1100];
	int nw = 0;
	plan_env(n, 3, want, &nw);
	assert_true(nw >= 2); /* NCCL_IB_HCA and UCX_NET_DEVICES */
	snprintf(path, sizeof(path), "%s/share", f->out);
	char *env = slurp(path);
	assert_non_null(strstr(env, "CUDA_VISIBLE_DEVICES=GPU-aaaa\n"));
	assert_null(strstr(env, "CUDA_DEVICE_ORDER"));
	for (int i = 0; i < nw; i++) {
		char line[1110];
		snprintf(line, sizeof(line), "%.1100s\n", want[i]);
		assert_non_null(strstr(env, line));
	}
	assert_non_null(strstr(env, "NCCL_IB_HCA==mlx5_"));
	gf_free(env);
	snprintf(path, sizeof(path), "%s/mig", f->out);
	env = slurp(path);
	assert_non_null(strstr(env, "CUDA_VISIBLE_DEVICES=MIG-0a1b2c3d-0000-"
				    "1111-2222-333344445555\n"));
	gf_free(env);
	gf_worker_close(f->w);
	f->w = NULL;
	gf_node_free(n);
}

static void test_bad_assignments(void **state)
{
	struct fx *f = *state;
	struct gf_node *n = template_node("hgx-h100");
	f->w = open_w(f, n, true, 0, false);
	struct gf_err e;
	static char big[GF_WORKER_CMD_MAX + 1];
	memset(big, 'x', sizeof(big) - 1);
	static const char *const bad_ids[] = { "../x", "", ".x", "a/b", "a b" };
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++)
		assert_int_equal(start(f->w, bad_ids[i], 0, "true", 0, &e),
				 GF_EINVAL);
	assert_int_equal(start(f->w, "j", -1, "true", 0, &e), GF_EINVAL);
	assert_int_equal(start(f->w, "j", 0, big, 0, &e), GF_ETOOBIG);
	assert_non_null(strstr(e.msg, "job 'j' replica 0"));
	assert_int_equal(start(f->w, "j", 0, "", 0, &e), GF_EINVAL);
	struct gf_worker_env env[GF_WORKER_ENV_MAX + 1];
	for (int i = 0; i <= GF_WORKER_ENV_MAX; i++)
		env[i] = (struct gf_worker_env){ "A", "b" };
	struct gf_assignment a = { .job = "j", .command = "true", .env = env };
	a.nenv = GF_WORKER_ENV_MAX + 1;
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_ETOOBIG);
	a.nenv = 2; /* A twice */
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "'A' given twice"));
	env[0] = (struct gf_worker_env){ "RANK", "0" };
	a.nenv = 1;
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "'RANK' is set by the worker"));
	env[0] = (struct gf_worker_env){ "1A", "0" };
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_EINVAL);
	a.nenv = 0;
	a.world_size = 2; /* no master */
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_EINVAL);
	a.master_addr = "m";
	a.master_port = 1234;
	a.rank = 2;
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_EINVAL);
	a.world_size = 0;
	a.place.gpus[0] = 8; /* the node has GPU0..7 */
	a.place.ngpus = 1;
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "no GPU 8"));
	/* more GPUs than a placement holds */
	a.place.ngpus = GF_CNODE_MAX_GPUS + 1;
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_ETOOBIG);
	assert_non_null(strstr(e.msg, "17 GPUs"));
	a.place.gpus[0] = 0;
	a.place.gpus[1] = 0;
	a.place.ngpus = 2;
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_EINVAL);
	a.kind = GF_WORKER_GPU_SHARE;
	a.place.gpus[1] = 1;
	a.place.gpu_milli = 500;
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_EINVAL);
	a.kind = GF_WORKER_GPU_MIG;
	a.place.ngpus = 1;
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "MIG"));
	a.kind = GF_WORKER_GPU_WHOLE;
	/* a user this node does not know; root where it is refused */
	a.user = "gf-no-such-user-21";
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_ENOTFOUND);
	assert_non_null(strstr(e.msg,
			       "user 'gf-no-such-user-21' is unknown on this "
			       "node"));
	a.user = NULL;
	if (geteuid() == 0) {
		a.refuse_root = true;
		assert_int_equal(gf_worker_start(f->w, &a, &e), -EPERM);
		assert_non_null(strstr(e.msg, "allow_root: true"));
		a.user = "root";
		assert_int_equal(gf_worker_start(f->w, &a, &e), -EPERM);
		a.user = NULL;
		a.refuse_root = false;
	}
	a.workdir = "relative";
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_EINVAL);
	a.workdir = "/nonexistent-dir-gf";
	assert_int_equal(gf_worker_start(f->w, &a, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "entering its workdir"));
	/* nothing ran, nothing left behind */
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s/jobs')\"", f->state);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(gf_worker_running(f->w, NULL, 0), 0);
	gf_worker_close(f->w);
	f->w = NULL;
	gf_node_free(n);
}

/* A job of a user runs as that user: its uid, gid and groups, HOME USER
 * LOGNAME from its passwd entry, its workdir (issue 21).  Root only (it
 * switches users), with the "nobody" account. */
static void test_run_as_user(void **state)
{
	struct fx *f = *state;
	const struct passwd *pw = getpwnam("nobody");
	if (geteuid() != 0 || pw == NULL) {
		print_message("skip: not root, or no 'nobody' account\n");
		skip();
	}
	f->w = open_w(f, NULL, false, 0, false);
	struct gf_assignment a = {
		.job = "asuser",
		.command = "id -un; id -u; echo \"H=$HOME U=$USER "
			   "L=$LOGNAME\"; pwd",
		.user = "nobody",
		.workdir = "/tmp",
		.refuse_root = true, /* nobody is not root: runs */
	};
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_worker_start(f->w, &a, &e);
	if (rc)
		print_message("%s\n", e.msg);
	assert_int_equal(rc, 0);
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_ENDED, "asuser", 0, 5000);
	assert_int_equal(ev->exit_code, 0);
	char path[512], want[512];
	snprintf(path, sizeof(path), "%s/asuser.0.0.log", f->logs);
	char *log = slurp(path);
	snprintf(want, sizeof(want),
		 "nobody\n%u\nH=%s U=nobody L=nobody\n/tmp\n",
		 (unsigned)pw->pw_uid, pw->pw_dir);
	if (!strstr(log, want))
		print_message("log: %s\nwant: %s\n", log, want);
	assert_non_null(strstr(log, want));
	gf_free(log);
	gf_worker_close(f->w);
	f->w = NULL;
}

/* --- exits, stops, max runtime ---------------------------------------- */

static void test_exit_codes(void **state)
{
	struct fx *f = *state;
	f->w = open_w(f, NULL, false, 0, false);
	start_ok(f->w, "ok", 0, "exit 0", 0);
	start_ok(f->w, "three", 0, "exit 3", 0);
	start_ok(f->w, "sig", 0, "kill -USR1 $$", 0);
	start_ok(f->w, "nocmd", 0, "/nonexistent/cmd", 0);
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_STARTED, "ok", 0, 100);
	assert_true(ev->pid > 0);
	assert_true(ev->start_ms > 0);
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "ok", 0, 5000);
	assert_int_equal(ev->exit_code, 0);
	assert_int_equal(ev->signal, 0);
	assert_true(ev->end_ms >= ev->start_ms);
	assert_int_equal(ev->gpu_seconds, 0);
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "three", 0, 5000);
	assert_int_equal(ev->exit_code, 3);
	assert_int_equal(ev->end, GF_WORKER_END_EXITED);
	assert_string_equal(ev->note, "exited with 3");
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "sig", 0, 5000);
	assert_int_equal(ev->exit_code, -1);
	assert_int_equal(ev->signal, SIGUSR1);
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "nocmd", 0, 5000);
	assert_int_equal(ev->exit_code, 127);
	assert_int_equal(gf_worker_running(f->w, NULL, 0), 0);
}

/* A job runs on until its max runtime, then is stopped (SIGTERM) and ends
 * as such.  The worker's clock is moved to the limit (gf_worker_poll_at),
 * not waited for: a ms short, it runs on; at the limit, it is stopped. */
static void test_max_runtime(void **state)
{
	struct fx *f = *state;
	f->w = open_w(f, NULL, false, 5000, false);
	start_ok(f->w, "long", 0, "sleep 600", 60000);
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_STARTED, "long", 0, 100);
	int64_t t0 = ev->start_ms;
	struct gf_worker_event x[4];
	struct gf_worker_job run[2];
	assert_int_equal(gf_worker_poll_at(f->w, t0 + 59999, x, 4), 0);
	assert_int_equal(gf_worker_running(f->w, run, 2), 1);
	assert_false(run[0].stopping);
	assert_int_equal(gf_worker_poll_at(f->w, t0 + 60000, x, 4), 0);
	assert_int_equal(gf_worker_running(f->w, run, 2), 1);
	assert_true(run[0].stopping);
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "long", 0, 30000);
	assert_int_equal(ev->end, GF_WORKER_END_MAX_RUNTIME);
	assert_int_equal(ev->signal, SIGTERM);
	assert_non_null(strstr(ev->note, "max runtime of 60000 ms"));
}

/* A job that traps TERM and spawns a child; both gone after a stop, and
 * its process group too; with a cgroup the cgroup is removed. */
static void stop_trap(struct fx *f, bool cgroup)
{
	f->w = open_w(f, NULL, false, 5000, cgroup);
	print_message("isolation: %s\n", gf_worker_isolation(f->w));
	char cmd[512], child[256];
	snprintf(child, sizeof(child), "%s/child", f->out);
	snprintf(cmd, sizeof(cmd),
		 "trap 'echo got-term; exit 7' TERM; sleep 30 & echo $! > %s; "
		 "wait",
		 child);
	start_ok(f->w, "trap", 0, cmd, 0);
	struct gf_worker_event *st =
		wait_ev(f, f->w, GF_WORKER_STARTED, "trap", 0, 100);
	int pgid = st->pid;
	assert_true(wait_file(child, 5000));
	int kid = read_int(child);
	assert_true(kid > 1);
	assert_int_equal(getpgid(kid), pgid);
	struct gf_worker_job run[4];
	assert_int_equal(gf_worker_running(f->w, run, 4), 1);
	bool in_cgroup = run[0].isolation == GF_WORKER_ISO_CGROUP;
	char cg[GF_WORKER_PATH_MAX];
	snprintf(cg, sizeof(cg), "%s", run[0].cgroup);
	if (in_cgroup) {
		char procs[GF_WORKER_PATH_MAX + 16], want[32];
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
		char *p = slurp(procs);
		snprintf(want, sizeof(want), "%d\n", kid);
		if (strstr(p, want) == NULL)
			print_message("%s: '%s', child %d\n", procs, p, kid);
		assert_non_null(strstr(p, want));
		gf_free(p);
	}
	/* where the worker says it has cgroups, the job got one */
	assert_true(in_cgroup ==
		    (strncmp(gf_worker_isolation(f->w), "cgroup v2", 9) == 0));
	struct gf_err e;
	assert_int_equal(gf_worker_stop(f->w, "trap", 0, 0, &e), 0);
	assert_int_equal(gf_worker_stop(f->w, "trap", 0, 0, &e), 0); /* no-op */
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_ENDED, "trap", 0, 5000);
	/* ended by its TERM trap (exit 7), not by the KILL after the grace */
	assert_int_equal(ev->end, GF_WORKER_END_STOPPED);
	assert_int_equal(ev->signal, 0);
	assert_int_equal(ev->exit_code, 7);
	assert_int_equal(kill(kid, 0), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(kill(-pgid, 0), -1);
	assert_int_equal(errno, ESRCH);
	char path[256];
	snprintf(path, sizeof(path), "%s/trap.0.0.log", f->logs);
	char *log = slurp(path);
	assert_non_null(strstr(log, "got-term"));
	gf_free(log);
	assert_int_equal(gf_worker_stop(f->w, "trap", 0, 0, &e), GF_ECONFLICT);
	assert_int_equal(gf_worker_stop(f->w, "none", 0, 0, &e), GF_ENOTFOUND);
	if (in_cgroup) {
		struct stat sb;
		for (int i = 0; i < 100 && stat(cg, &sb) == 0; i++) {
			struct gf_worker_event x[4];
			gf_worker_poll(f->w, x, 4);
			sleep_ms(20);
		}
		assert_int_equal(stat(cg, &sb), -1);
	}
}

static void test_stop_trap_pgroup(void **state)
{
	stop_trap(*state, false);
}

static void test_stop_trap_cgroup(void **state)
{
	stop_trap(*state, true);
}

/* TERM ignored by the job's child, and only noted by the job: SIGKILL
 * after the grace.  The job's log shows it got TERM first and lived on
 * (its trap ran), and it ended by SIGKILL: TERM, then the grace, then
 * KILL, read from what happened rather than from a clock: the grace is a
 * minute, the worker's clock is moved past it (gf_worker_poll_at) once
 * the job's log shows the TERM. */
static void stop_kill(struct fx *f, bool cgroup)
{
	f->w = open_w(f, NULL, false, 60000, cgroup);
	char cmd[512], child[256];
	snprintf(child, sizeof(child), "%s/child", f->out);
	snprintf(cmd, sizeof(cmd),
		 "trap '' TERM; sleep 30 & echo $! > %s; "
		 "trap 'echo got-term' TERM; while :; do wait; done",
		 child);
	start_ok(f->w, "deaf", 0, cmd, 0);
	struct gf_worker_event *st =
		wait_ev(f, f->w, GF_WORKER_STARTED, "deaf", 0, 100);
	int pgid = st->pid;
	assert_true(wait_file(child, 5000));
	int kid = read_int(child);
	struct gf_err e;
	assert_int_equal(gf_worker_stop(f->w, "deaf", 0, 0, &e), 0);
	struct gf_worker_job run[2];
	assert_int_equal(gf_worker_running(f->w, run, 2), 1);
	assert_true(run[0].stopping);
	char path[256];
	snprintf(path, sizeof(path), "%s/deaf.0.0.log", f->logs);
	assert_true(wait_text(path, "got-term", 30000)); /* TERM came first */
	struct gf_worker_event x[4];
	assert_int_equal(gf_worker_poll_at(f->w, now_ms() + 60000, x, 4), 0);
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_ENDED, "deaf", 0, 30000);
	assert_int_equal(ev->end, GF_WORKER_END_STOPPED);
	assert_int_equal(ev->signal, SIGKILL);
	assert_int_equal(ev->exit_code, -1);
	assert_int_equal(kill(kid, 0), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(kill(-pgid, 0), -1);
	assert_int_equal(errno, ESRCH);
}

static void test_stop_kill_pgroup(void **state)
{
	stop_kill(*state, false);
}

static void test_stop_kill_cgroup(void **state)
{
	stop_kill(*state, true);
}

static void test_twice_refused(void **state)
{
	struct fx *f = *state;
	f->w = open_w(f, NULL, false, 1000, false);
	struct gf_err e;
	start_ok(f->w, "dup", 0, "sleep 30", 0);
	assert_int_equal(start(f->w, "dup", 0, "sleep 30", 0, &e),
			 GF_ECONFLICT);
	assert_non_null(strstr(e.msg, "job 'dup' replica 0 attempt 0: already "
				      "running here"));
	start_ok(f->w, "dup", 1, "sleep 30", 0); /* another replica */
	assert_int_equal(gf_worker_running(f->w, NULL, 0), 2);
	assert_int_equal(gf_worker_forget(f->w, "dup", 0, 0, &e), GF_ECONFLICT);
	assert_int_equal(gf_worker_stop(f->w, "dup", 0, 0, &e), 0);
	wait_ev(f, f->w, GF_WORKER_ENDED, "dup", 0, 5000);
	/* ended, not yet acknowledged: still refused */
	assert_int_equal(start(f->w, "dup", 0, "true", 0, &e), GF_ECONFLICT);
	assert_non_null(strstr(e.msg, "not yet forgotten"));
	assert_int_equal(gf_worker_forget(f->w, "dup", 0, 0, &e), 0);
	assert_int_equal(gf_worker_forget(f->w, "dup", 0, 0, &e), GF_ENOTFOUND);
	start_ok(f->w, "dup", 0, "exit 5", 0);
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_ENDED, "dup", 0, 5000);
	assert_int_equal(ev->exit_code, 5);
	assert_int_equal(gf_worker_stop(f->w, "dup", 1, 0, &e), 0);
	wait_ev(f, f->w, GF_WORKER_ENDED, "dup", 1, 5000);
}

/* Attempts: a replica runs once whatever the attempt; a stop for one
 * attempt never touches another; an ended attempt not yet forgotten
 * does not block the next; the log gathers them all. */
static void test_attempts(void **state)
{
	struct fx *f = *state;
	f->w = open_w(f, NULL, false, 1000, false);
	struct gf_err e;
	struct gf_assignment a = { .job = "att",
				   .attempt = 1,
				   .command = "echo one; sleep 30" };
	assert_int_equal(gf_worker_start(f->w, &a, &e), 0);
	a.attempt = 2;
	a.command = "echo two";
	assert_int_equal(gf_worker_start(f->w, &a, &e), GF_ECONFLICT);
	assert_non_null(strstr(e.msg, "already running here (attempt 1"));
	assert_int_equal(gf_worker_stop(f->w, "att", 0, 2, &e), GF_ENOTFOUND);
	struct gf_worker_job run[2];
	assert_int_equal(gf_worker_running(f->w, run, 2), 1);
	assert_int_equal(run[0].attempt, 1);
	char path[256];
	snprintf(path, sizeof(path), "%s/att.0.1.log", f->logs);
	assert_true(wait_text(path, "one\n", 5000)); /* out: stop it now */
	assert_int_equal(gf_worker_stop(f->w, "att", 0, 1, &e), 0);
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_ENDED, "att", 0, 5000);
	assert_int_equal(ev->attempt, 1);
	assert_int_equal(gf_worker_start(f->w, &a, &e), 0); /* attempt 2 */
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "att", 0, 5000);
	assert_int_equal(ev->attempt, 2);
	assert_int_equal(ev->exit_code, 0);
	assert_int_equal(gf_worker_forget(f->w, "att", 0, 1, &e), 0);
	assert_int_equal(gf_worker_forget(f->w, "att", 0, 2, &e), 0);
	/* a file per attempt, each between its markers (worker_log.c) */
	assert_log_lines(path, "att replica 0 attempt 1 on ", "one",
			 "cancelled (stopped by the controller), signal 15");
	snprintf(path, sizeof(path), "%s/att.0.2.log", f->logs);
	assert_log_lines(path, "att replica 0 attempt 2 on ", "two",
			 ": exit code 0 <==");
}

/* --- the worker dies -------------------------------------------------- */

static void state_file(const struct fx *f, const char *key, const char *name,
		       char *out, size_t size)
{
	snprintf(out, size, "%s/jobs/%s/%s", f->state, key, name);
}

static void test_recover_after_close(void **state)
{
	struct fx *f = *state;
	f->w = open_w(f, NULL, false, 1000, false);
	start_ok(f->w, "fin", 0, "sleep 0.3; exit 4", 0);
	start_ok(f->w, "runs", 2, "sleep 30", 0);
	gf_worker_close(f->w); /* no stop: the jobs are their shims' */
	f->w = NULL;
	char path[512];
	state_file(f, "fin.0.0", "exit", path, sizeof(path));
	assert_true(wait_file(path, 5000));
	f->w = open_w(f, NULL, false, 1000, false);
	struct gf_worker *other = NULL;
	struct gf_worker_opts o = { .state_dir = f->state,
				    .log_dir = f->logs,
				    .node_name = f->node };
	struct gf_err e;
	assert_int_equal(gf_worker_open(&o, &other, &e), GF_ECONFLICT);
	assert_null(other);
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_ENDED, "fin", 0, 100);
	assert_true(ev->recovered);
	assert_int_equal(ev->exit_code, 4);
	/* its times are its records' (its start, its shim's exit), not the
	 * time the new worker found it */
	state_file(f, "fin.0.0", "run", path, sizeof(path));
	assert_int_equal(ev->start_ms, read_key(path, "start_ms"));
	state_file(f, "fin.0.0", "exit", path, sizeof(path));
	assert_int_equal(ev->end_ms, read_key(path, "end_ms"));
	assert_true(ev->start_ms <= ev->end_ms);
	ev = wait_ev(f, f->w, GF_WORKER_STARTED, "runs", 2, 100);
	assert_true(ev->recovered);
	struct gf_worker_job run[2];
	assert_int_equal(gf_worker_running(f->w, run, 2), 1);
	assert_string_equal(run[0].job, "runs");
	assert_true(run[0].recovered && run[0].supervised);
	assert_int_equal(start(f->w, "runs", 2, "true", 0, &e), GF_ECONFLICT);
	assert_int_equal(gf_worker_stop(f->w, "runs", 2, 0, &e), 0);
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "runs", 2, 5000);
	assert_int_equal(ev->end, GF_WORKER_END_STOPPED);
	assert_int_equal(ev->signal, SIGTERM);
	assert_int_equal(gf_worker_forget(f->w, "fin", 0, 0, &e), 0);
	assert_int_equal(gf_worker_forget(f->w, "runs", 2, 0, &e), 0);
	/* forgotten: a new worker finds nothing */
	gf_worker_close(f->w);
	f->w = open_w(f, NULL, false, 1000, false);
	struct gf_worker_event x[4];
	assert_int_equal(gf_worker_poll(f->w, x, 4), 0);
}

/* The agent killed -9 while one job runs, one is ending and one was
 * asked to stop: the next worker finds all three as they are. */
static void test_recover_after_kill9(void **state)
{
	struct fx *f = *state;
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t agent = fork();
	assert_true(agent >= 0);
	if (agent == 0) {
		close(pfd[0]);
		struct gf_worker *w = open_w(f, NULL, false, 60000, false);
		start_ok(w, "k9", 0, "sleep 30", 0);
		start_ok(w, "k9b", 0, "sleep 0.3; exit 5", 0);
		char cmd[300], ready[256];
		snprintf(ready, sizeof(ready), "%s/k9c.ready", f->out);
		snprintf(cmd, sizeof(cmd),
			 "trap '' TERM; echo 1 > %s; sleep 30", ready);
		start_ok(w, "k9c", 0, cmd, 0);
		if (!wait_file(ready, 5000)) /* TERM ignored from now on */
			_exit(1);
		struct gf_err e;
		if (gf_worker_stop(w, "k9c", 0, 0, &e) != 0)
			_exit(1);
		if (write(pfd[1], "k", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	char b;
	assert_int_equal(read(pfd[0], &b, 1), 1);
	close(pfd[0]);
	kill(agent, SIGKILL);
	int st;
	assert_int_equal(waitpid(agent, &st, 0), agent);
	assert_true(WIFSIGNALED(st));
	char path[512];
	state_file(f, "k9b.0.0", "exit", path, sizeof(path));
	assert_true(wait_file(path, 5000));
	/* a grace of 300 ms now: the stop recorded before the crash is
	 * carried out from its recorded time */
	f->w = open_w(f, NULL, false, 300, false);
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_STARTED, "k9", 0, 100);
	assert_true(ev->recovered);
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "k9b", 0, 100);
	assert_true(ev->recovered);
	assert_int_equal(ev->exit_code, 5);
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "k9c", 0, 5000);
	assert_int_equal(ev->end, GF_WORKER_END_STOPPED);
	assert_int_equal(ev->signal, SIGKILL);
	struct gf_err e;
	assert_int_equal(gf_worker_stop(f->w, "k9", 0, 0, &e), 0);
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "k9", 0, 5000);
	assert_int_equal(ev->signal, SIGTERM);
}

/* A record is only believed with the right start time and boot. */
static void write_record(const struct fx *f, const char *key, int pid,
			 unsigned long long start, const char *boot)
{
	char dir[512], path[600];
	snprintf(dir, sizeof(dir), "%s/jobs/%s", f->state, key);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/run", dir);
	FILE *o = fopen(path, "w");
	assert_non_null(o);
	char job[64];
	snprintf(job, sizeof(job), "%s", key);
	*strrchr(job, '.') = '\0'; /* the attempt */
	*strrchr(job, '.') = '\0'; /* the replica */
	fprintf(o,
		"version=1\njob=%s\nreplica=0\nattempt=0\nshim_pid=%d\n"
		"shim_start=%llu\n"
		"pid=%d\npid_start=%llu\nboot_id=%s\nstart_ms=%lld\n"
		"max_runtime_ms=0\ngpu_milli=1000\nisolation=pgroup\ncgroup=\n"
		"log=/dev/null\n",
		job, pid, start, pid, start, boot, (long long)now_ms() - 1000);
	fclose(o);
}

static unsigned long long my_start(void)
{
	char buf[1024];
	FILE *s = fopen("/proc/self/stat", "r");
	assert_non_null(s);
	assert_non_null(fgets(buf, sizeof(buf), s));
	fclose(s);
	char *p = strrchr(buf, ')') + 2;
	for (int i = 3; i < 22; i++)
		p = strchr(p, ' ') + 1;
	return strtoull(p, NULL, 10);
}

static void test_pid_reuse_and_bad_records(void **state)
{
	struct fx *f = *state;
	char boot[64], path[512];
	FILE *b = fopen("/proc/sys/kernel/random/boot_id", "r");
	assert_non_null(b);
	assert_non_null(fgets(boot, sizeof(boot), b));
	fclose(b);
	boot[strcspn(boot, "\n")] = '\0';
	/* make the directories */
	f->w = open_w(f, NULL, false, 1000, false);
	gf_worker_close(f->w);
	f->w = NULL;
	/* our own pid, alive, but with another start time: a reused pid */
	write_record(f, "reused.0.0", (int)getpid(), my_start() + 7, boot);
	/* our own pid and start time, but another boot */
	write_record(f, "reboot.0.0", (int)getpid(), my_start(),
		     "00000000-0000-0000-0000-000000000000");
	/* garbage */
	snprintf(path, sizeof(path), "%s/jobs/junk.0.0", f->state);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/jobs/junk.0.0/run", f->state);
	FILE *o = fopen(path, "w");
	fputs("version=1\njob=junk\nreplica=zero\nattempt=0\n", o);
	fclose(o);
	/* a start whose worker died before the "go": its process left the
	 * "nogo" mark and ran nothing */
	write_record(f, "nogo.0.0", (int)getpid(), my_start() + 7, boot);
	snprintf(path, sizeof(path), "%s/jobs/nogo.0.0/nogo", f->state);
	FILE *ng = fopen(path, "w");
	assert_non_null(ng);
	fclose(ng);
	/* a start that never finished: a directory without a record */
	snprintf(path, sizeof(path), "%s/jobs/half.0.0", f->state);
	mkdir(path, 0700);
	f->w = open_w(f, NULL, false, 1000, false);
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_ENDED, "reused", 0, 100);
	assert_int_equal(ev->end, GF_WORKER_END_LOST);
	assert_int_equal(ev->exit_code, -1);
	ev = wait_ev(f, f->w, GF_WORKER_ENDED, "reboot", 0, 100);
	assert_int_equal(ev->end, GF_WORKER_END_LOST);
	assert_non_null(strstr(ev->note, "rebooted"));
	assert_int_equal(gf_worker_running(f->w, NULL, 0), 0);
	struct gf_err e;
	assert_int_equal(gf_worker_stop(f->w, "reused", 0, 0, &e),
			 GF_ECONFLICT);
	snprintf(path, sizeof(path), "%s/jobs/.bad.junk.0.0/run", f->state);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/jobs/half.0.0", f->state);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/jobs/nogo.0.0", f->state);
	assert_int_equal(access(path, F_OK), -1);
	for (int i = 0; i < f->nseen; i++)
		assert_string_not_equal(f->seen[i].job, "nogo");
	/* we are still alive, and a start of the junk key works again */
	start_ok(f->w, "junk", 0, "true", 0);
	wait_ev(f, f->w, GF_WORKER_ENDED, "junk", 0, 5000);
}

/* The shim killed: the job runs on, watched by pid; its end is LOST. */
static void test_shim_killed(void **state)
{
	struct fx *f = *state;
	f->w = open_w(f, NULL, false, 1000, false);
	start_ok(f->w, "orphan", 0, "sleep 30", 0);
	char path[512];
	state_file(f, "orphan.0.0", "run", path, sizeof(path));
	char *rec = slurp(path);
	char *sp = strstr(rec, "shim_pid=");
	assert_non_null(sp);
	int shim = atoi(sp + 9);
	gf_free(rec);
	assert_int_equal(kill(shim, SIGKILL), 0);
	struct gf_worker_job run[2];
	struct gf_worker_event x[8];
	bool unsupervised = false;
	for (int i = 0; i < 100 && !unsupervised; i++) {
		int n = gf_worker_poll(f->w, x, 8);
		for (int k = 0; k < n; k++)
			assert_int_equal(x[k].kind, GF_WORKER_STARTED);
		assert_int_equal(gf_worker_running(f->w, run, 2), 1);
		unsupervised = !run[0].supervised;
		sleep_ms(20);
	}
	assert_true(unsupervised);
	struct gf_err e;
	assert_int_equal(gf_worker_stop(f->w, "orphan", 0, 0, &e), 0);
	struct gf_worker_event *ev =
		wait_ev(f, f->w, GF_WORKER_ENDED, "orphan", 0, 5000);
	assert_int_equal(ev->end, GF_WORKER_END_LOST);
	assert_non_null(strstr(ev->note, "shim was killed"));
}

/* The end's names, as events and the API write them. */
static void test_end_names(void **state)
{
	(void)state;
	assert_string_equal(gf_worker_end_name(GF_WORKER_END_EXITED), "exited");
	assert_string_equal(gf_worker_end_name(GF_WORKER_END_STOPPED),
			    "stopped");
	assert_string_equal(gf_worker_end_name(GF_WORKER_END_MAX_RUNTIME),
			    "max-runtime");
	assert_string_equal(gf_worker_end_name(GF_WORKER_END_FENCED), "fenced");
	assert_string_equal(gf_worker_end_name(GF_WORKER_END_LOST), "lost");
	assert_string_equal(gf_worker_end_name(GF_WORKER_END_NONE), "");
	assert_string_equal(gf_worker_end_name((enum gf_worker_end)99), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_end_names),
		cmocka_unit_test_setup_teardown(test_env_and_affinity_live,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_node_binding, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_env_template, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_assignments, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_run_as_user, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_exit_codes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_max_runtime, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_trap_pgroup, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_trap_cgroup, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_kill_pgroup, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_kill_cgroup, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_twice_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_attempts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_after_close, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_recover_after_kill9, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pid_reuse_and_bad_records,
						setup, teardown),
		cmocka_unit_test(test_log_markers),
		cmocka_unit_test_setup_teardown(test_shim_killed, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
