/*
 * agent.h - the node agent as a service: a sampler thread (collect.h)
 * renders the documents once per sample (expo.h, diagnose.h) and
 * publishes each complete one; the HTTP server (server/server.h) serves
 * the last copies on the routes of gf_agent_routes().  `gpufleet agent`
 * is options and output around this.  Each GPU's health (health.h) is
 * served in /metrics and /v1/gpus, and handed to other threads of the
 * process by gf_agent_health() (the controller link's heartbeats).
 */
#ifndef GF_TELEMETRY_AGENT_H
#define GF_TELEMETRY_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>

#include "server/router.h"
#include "telemetry/collect.h"
#include "telemetry/diagnose.h"
#include "telemetry/health.h"
#include "telemetry/metrics.h"
#include "topo/source.h"

#define GF_AGENT_DOC_MAX (8u << 20) /* a document past this is not served */

struct gf_agent_opts {
	const char *listen; /* "IPv4:PORT" (server.h) */
	long interval_ms;   /* sampling period */
	int ring;	    /* samples kept per GPU (collect.h) */
	struct gf_diag_opts diag;
	long xid_quiet_ms; /* a transient Xid's quiet period (0: 300 s,
			      GF_HEALTH_QUIET_MS) */
	const struct gf_counters *counters; /* the metrics exported */
	struct gf_node_source topo;	    /* /v1/topology's node */
	size_t doc_max;			    /* 0: GF_AGENT_DOC_MAX */
	/* a CPU node: cpu_node opens no NVML; cpu_fallback becomes one when
	 * NVML cannot be opened (not found, init failed) instead of failing;
	 * either way the collector has no GPU and topo is cpu_only */
	bool cpu_node, cpu_fallback;
	/* HTTP connections (server.h): in all, and from one address;
	 * 0: the server's defaults */
	unsigned max_connections, max_per_client;
};

struct gf_agent;

/*
 * Open NVML, build the topology document, take a first sample (so no
 * document is ever empty), then serve and start sampling.  Returns 0
 * with *out set, or the collector's error (GF_ENOTFOUND/GF_ENVML) or
 * the server's (bind: -errno; GF_ENOTSUP) with e saying which.  Block
 * SIGTERM/SIGINT before calling if the caller waits for them.
 */
int gf_agent_start(struct gf_agent **out, const struct gf_agent_opts *o,
		   struct gf_err *e) GF_MUST_CHECK;

/* "http://127.0.0.1:41234/" (borrowed), and the GPUs sampled. */
const char *gf_agent_url(const struct gf_agent *a);
int gf_agent_gpus(const struct gf_agent *a);
/* Why the agent runs as a CPU node ("--no-nvml", or NVML's error), or
 * NULL when it samples GPUs through NVML (borrowed). */
const char *gf_agent_cpu_node(const struct gf_agent *a);

/* Stop sampling, stop the server (requests in flight finish), close
 * NVML, free. */
void gf_agent_stop(struct gf_agent *a);

/* One GPU's health, as the agent's sampler last saw it (health.h). */
struct gf_gpu_health {
	unsigned index; /* NVML index */
	char uuid[96];	/* "GPU-..." */
	bool healthy;	/* may take new work */
	/* why, one line, as gf_health_reason() ("" when nothing happened) */
	char reason[GF_HEALTH_REASON_MAX];
	int64_t since_ms;  /* healthy, or not, since (wall clock ms) */
	unsigned last_xid; /* 0: none yet */
	uint64_t xids;	   /* Xid events since the agent started */
	/* the pods whose processes run on it, per device: the GPU and
	 * each of its MIG instances with one (gf_collector_pods) */
	int ndevs;
	struct gf_dev_pods devs[GF_TEL_MAX_MIG + 1];
};

/*
 * Copy each GPU's health, as of the last sample, into out[], in the
 * order of NVML's indexes.  Returns how many GPUs the agent samples, of
 * which it wrote the first max (all when there are fewer; none when max
 * <= 0).  Thread-safe: any thread of the process may call it between
 * gf_agent_start() and gf_agent_stop() (it takes the agent's health
 * lock, held only to copy, never with another lock).
 */
int gf_agent_health(struct gf_agent *a, struct gf_gpu_health *out, int max);

/* Run fn(arg) while the sampler makes no NVML call (NVML calls are
 * serialised: topo/nvml.h); its result.  Any thread, between start and
 * stop; fn must not call back into the agent. */
int gf_agent_nvml(struct gf_agent *a, int (*fn)(void *arg),
		  void *arg) GF_MUST_CHECK;

/*
 * Serve the jobs' logs of log_dir (worker.h: one file per run) on GET
 * /v1/logs/JOB/REPLICA/ATTEMPT, to requests bearing token (the node's,
 * which its controller also holds), or to any request when token is
 * NULL (a cluster without tokens).  Before this call that route answers
 * 404.  0, or GF_ETOOBIG (a path or token too long: nothing served).
 */
#define GF_AGENT_LOG_CHUNK (1u << 20) /* bytes of a log per request */
int gf_agent_serve_logs(struct gf_agent *a, const char *log_dir,
			const char *token) GF_MUST_CHECK;

/*
 * The gpufleet jobs on this node's devices now (the link's assignments,
 * collect.h): from the next sample on, /metrics labels their series with
 * `job` and `team`.  v[0..n) is copied (past GF_TEL_MAX_JOBS dropped).
 * Thread-safe: any thread between start and stop (the agent's jobs lock,
 * held only to copy, never with another).
 */
void gf_agent_set_jobs(struct gf_agent *a, const struct gf_dev_job *v, int n);

/* The routes served, for `agent -h` (help lines wrapped for it). */
int gf_agent_routes(const struct gf_route **out);

#endif
