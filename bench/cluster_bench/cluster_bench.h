/*
 * cluster_bench.h - what the files of cluster_bench share (cluster_bench.c
 * says what the bench measures): the simulated agents and their client
 * threads (cluster_sim.c), the child processes, the temp dir and the /proc
 * readers (cluster_proc.c), and the run's state R (defined in cluster_bench.c,
 * read and written by the client threads: its atomics).
 */
#ifndef GF_BENCH_CLUSTER_H
#define GF_BENCH_CLUSTER_H

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gpufleet/bitmap.h>
#include <gpufleet/err.h>
#include <gpufleet/gpu_topo.h>
#include <gpufleet/node.h>
#include <gpufleet/template.h>

#include "nodeproto/nodeproto.h"
#include "server/client.h"
#include "topo/render.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/mem.h"

#define THREADS	       2  /* client threads */
#define REG_WINDOW     64 /* registrations in flight per thread */
#define GROUP	       64 /* agents per curl multi handle */
#define FD_RESERVE     96 /* fds this process keeps for itself */
#define RETRY_NS       1000000000LL
#define HB_NS	       1000000000LL /* the heartbeat period */
#define SETTLE_S       2
#define NOTREADY_S     10
#define ANSWER_MAX     (64u << 20)
#define MAX_AGENTS     100000
#define TEMPLATE       "hgx-h100"
#define FIXTURE	       "tests/fixtures/nvml/hgx-h100.nvml"
#define DEFAULT_SIZES  "1000,5000"
#define DEFAULT_WINDOW 20

extern char **environ;

/* ---- cluster_proc.c: time, children, the temp dir, /proc
 * ------------------------ */

extern volatile sig_atomic_t interrupted; /* SIGINT/SIGTERM seen */
extern char tmpdir[512];
extern pid_t serve_pid, agent_pid;

int64_t mono_ns(void);
int64_t wall_ns(void);
void sleep_ms(long ms);
void on_signal(int sig);
double quantile(double *v, size_t n, double q);
pid_t spawn(const char *const args[], char *const envp[], const char *log);
void stop_child(pid_t *pid, int secs);
void cleanup(void);
char *slurp(const char *path, size_t *len);
void print_tail(const char *path);
int count_lines(const char *path, const char *needle);
double proc_cpu_s(pid_t pid);
long proc_status_kb(pid_t pid, const char *field);
int proc_fds(pid_t pid);
void machine_jiffies(unsigned long long *busy, unsigned long long *all);
double self_cpu_s(void);

/* ---- cluster_sim.c: the simulated agents
 * ----------------------------------------- */

enum agent_state { A_NEW, A_REGISTERING, A_READY };

struct grp;

struct agent {
	int id;
	struct grp *g; /* its multi handle */
	enum agent_state st;
	char name[24];
	CURL *hb;   /* PUT, then heartbeats */
	CURL *poll; /* the long poll */
	struct curl_slist *to;
	struct gf_buf body; /* the PUT or heartbeat in flight */
	struct gf_buf hb_ans, poll_ans;
	bool hb_busy, poll_busy;
	bool hb_owed; /* due while the last one was unanswered */
	int64_t hb_sent, last_ok, reg_at;
	uint64_t gen; /* the assignments received (and "applied") */
	int nrun;
	struct gf_np_ref *run; /* the replicas assigned: "running" */
};

/* A FIFO of agents to retry at a time; the delay is constant, so it stays
 * in time order. */
struct fifo {
	struct agent **a;
	int64_t *at;
	int head, n, cap;
};

/* A multi handle for GROUP agents: libcurl 7.88 walks every connection
 * of a multi's cache when a handle is removed (to close connect-only
 * ones), and its connection and DNS caches are hash tables of fixed
 * size (97 and 71 chains), so one multi for thousands of agents costs
 * O(agents) per request; many small ones keep it O(1). */
struct grp {
	CURLM *m;
	int ep; /* its thread's epoll */
	int idx;
	int64_t timer_at; /* curl's timeout, ns; -1 none */
	bool touched;	  /* acted on: read its finished transfers */
};

struct cl {
	int t;
	pthread_t tid;
	struct grp *g;
	int ng;
	int ep;
	struct agent **a; /* this thread's agents, in phase order */
	int na;
	int reg_next, reg_busy;
	struct fifo reg_retry, poll_retry;
	int hb_i;
	int64_t hb_round;
	/* counted in the window */
	int64_t w_ok, w_err, w_late, w_notready;
	int64_t w_gap_max;
	double *lat;
	size_t nlat, lcap;
	atomic_int past_window;
	/* counted all along */
	int64_t errs;
	char last_err[200];
};

struct run {
	int n;
	int conns;     /* keep-alive connections per agent: 2, or 1 (see top) */
	char base[64]; /* http://127.0.0.1:PORT */
	unsigned port;
	int64_t t0;	     /* the phase origin of heartbeats */
	atomic_llong ws, we; /* the window, mono ns; 0 unset */
	atomic_bool stop;
	atomic_int registered;
	atomic_llong reg_done_ns; /* when the last registration came */
	struct curl_slist *hdrs;
	/* part 2: jobs named bench-I, when sent and when assigned */
	int njobs;
	int64_t *sent;
	atomic_llong *assigned;
};

extern struct run R;

int load_template(void);
/* The template's topology freed (at the end). */
void template_free(void);
void fifo_release(struct fifo *f);
struct agent *agent_new(int id);
void agent_free(struct agent *a);
int on_socket(CURL *h, curl_socket_t fd, int what, void *arg, void *sockp);
int on_timer(CURLM *m, long ms, void *arg);
void *client(void *arg);

#endif
