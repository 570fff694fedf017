/*
 * collect.h - the node agent's collector: one NVML sample of every GPU
 * (and MIG instance) per call, kept in a fixed ring of recent samples per
 * GPU (expo.h renders them).
 *
 * Faults: a metric NVML does not answer is left out of the page (as
 * dcgm-exporter skips blank values); a GPU whose every answer fails keeps
 * its last good values, and gpufleet_sample_age_seconds says how old they
 * are; a GPU that fell off the bus (GPU_IS_LOST) is marked lost
 * (gpufleet_gpu_up 0) while the others keep flowing, and asked once per
 * sample (its temperature) whether it answers again.
 *
 * Health (health.h): each sample feeds the health machine the Xid events
 * drained from NVML's event set (at the sample's time: NVML's events
 * carry none), the GPUs lost and those answering again, then ticks it.
 *
 * Slow counters: what costs a driver milliseconds per call (total energy,
 * PCIe throughput, which blocks 20 ms) or rarely changes (PCIe replays,
 * ECC totals, MIG mode) is read once per its period (enum gf_slow), not
 * every sample.  A ring sample holds what was read for it (valid bit m:
 * v[m] was read then); the GPU's `last` also carries each slow counter's
 * latest value, read at read_ms[m] (gf_collector_age_s).
 * Not thread-safe: one sampling thread owns it.
 */
#ifndef GF_TELEMETRY_COLLECT_H
#define GF_TELEMETRY_COLLECT_H

#include <stdint.h>

#include <gpufleet/err.h>

#include "telemetry/cgroup.h"
#include "telemetry/health.h"
#include "telemetry/metrics.h"
#include "topo/nvml.h"

#define GF_RING		600  /* samples kept per GPU unless told */
#define GF_RING_MAX	3600 /* at most (about 3 MiB per GPU) */
#define GF_TEL_MAX_MIG	7
#define GF_TEL_MAX_GPUS 64

struct gf_mig_sample {
	unsigned gi_id;
	char profile[24];
	double fb_used, fb_free; /* MiB */
	bool fb_ok;		 /* fb_used and fb_free hold values */
	uint32_t gpm_valid;	 /* bit i: gpm[i] holds a value */
	double gpm[4];		 /* GF_M_PROF_GR.. order of gf_gpm_metric */
};

/* Two GPM samples of a GPU or of one GPU instance, taken in turn. */
struct gf_gpm_pair {
	nvmlGpmSample_t s[2];
	int cur;      /* the one the next sample goes into */
	bool alloc;   /* s[] allocated */
	bool prev_ok; /* s[!cur] holds the previous sample */
};

#define GF_GI_ID_MAX 16	   /* GPU instance ids are below this */
#define GF_GI_NONE   (~0u) /* a process on no GPU instance we know */

struct gf_sample {
	int64_t t_ms;
	uint32_t valid; /* bit m: v[m] holds a value */
	double v[GF_M_COUNT];
	int nmig;
	struct gf_mig_sample mig[GF_TEL_MAX_MIG];
	int nproc;	/* compute processes on the GPU */
	bool nvlink_ok; /* NVLink data bytes since driver load, TX and RX */
	double nvlink_tx, nvlink_rx;
};

/*
 * What is read less often than every sample, with its default period
 * (docs/telemetry.md gives the why).  The cost is what one call took on
 * our H200 host (../shared/fixtures/h200/README.md).
 */
enum gf_slow {
	GF_SLOW_ENERGY,	  /* total energy, 4.1 ms of CPU: 30 s */
	GF_SLOW_PCIE,	  /* PCIe TX and RX throughput, 21 ms each: 10 s */
	GF_SLOW_REPLAY,	  /* PCIe replay counter, 0.18 ms: 30 s */
	GF_SLOW_ECC,	  /* ECC totals, four calls, not timed: 30 s */
	GF_SLOW_MIG_MODE, /* MIG mode, 0.21 ms: 10 s */
	GF_SLOW_COUNT
};

struct gf_tgpu {
	unsigned index;
	nvmlDevice_t dev;
	char uuid[96];
	char busid[32];
	char name[96];
	bool lost;
	int64_t last_good_ms;
	struct gf_sample last; /* the last good sample */
	struct gf_sample *ring;
	int cap, head, n; /* ring: cap samples, the newest before head */
	uint64_t errors;
	double last_xid;
	uint16_t devid; /* PCI device id: the MIG profile table */
	bool gpm;	/* NVML GPM supported */
	struct gf_gpm_pair gpm_gpu, gpm_gi[GF_GI_ID_MAX];
	/* GPU instances of the last sample (bit: id), and their profiles */
	uint32_t gi_seen;
	char gi_prof[GF_GI_ID_MAX][24];
	/* the compute processes of the last sample, their owners (looked
	 * up when a process first appears) and the GPU instance each runs
	 * on (GF_GI_NONE: the whole GPU, or NVML did not say) */
	int nprocs;
	unsigned pids[16];
	struct gf_owner owners[16];
	unsigned proc_gi[16];
	/* each GPU instance's MIG device UUID ("MIG-..."), read when the
	 * instance appears; valid while its bit is in gi_seen */
	char gi_uuid[GF_GI_ID_MAX][96];
	/* slow counters: when each is next due; MIG mode as last read */
	int64_t slow_next_ms[GF_SLOW_COUNT];
	bool mig_on;
	/* when each value of `last` was read (ms, as now_ms) */
	int64_t read_ms[GF_M_COUNT];
};

/*
 * A gpufleet job on a device of this node, as the agent's assignments
 * say (dcgm-exporter's pod labels in Kubernetes, gpufleet's own here):
 * the GPU by its NVML index, and a MIG instance by its device UUID ("":
 * the whole GPU, or a share of it).  The page labels the device's series
 * with `job` and `team` (several jobs sharing it: comma-joined, in the
 * table's order).
 */
#define GF_TEL_MAX_JOBS 256
struct gf_dev_job {
	unsigned gpu;
	char mig_uuid[96];
	char job[24];  /* GF_JOB_ID_MAX */
	char team[48]; /* GF_TEAM_NAME_MAX */
};

struct gf_collector {
	const struct gf_nvml *nv;
	struct gf_tgpu g[GF_TEL_MAX_GPUS];
	int n;
	char driver[80];
	char hostname[64];
	nvmlEventSet_t events;
	uint64_t samples;
	double cpu_ms_last; /* CPU time the last sample took */
	/* each slow counter's period (ms; 0: every sample), set by
	 * gf_collector_open to the defaults of enum gf_slow; a caller may
	 * change them before sampling */
	int64_t slow_period_ms[GF_SLOW_COUNT];
	/* a transient Xid's quiet period (0: GF_HEALTH_QUIET_MS), which a
	 * caller may set before the first sample; `health` starts then,
	 * every GPU healthy, and holds GPU i of g[] as its GPU i */
	int64_t xid_quiet_ms;
	struct gf_health health;
	/* where each process's cgroup file is read, PROC_ROOT/PID/cgroup
	 * (NULL: /proc); a test points it at a tree of its own */
	const char *proc_root;
	/* the jobs on this node's devices (borrowed; the caller sets them
	 * before rendering; NULL/0: none) */
	const struct gf_dev_job *jobs;
	int njobs;
};

/*
 * Open NVML and find the GPUs, each with a ring of `ring` samples (0:
 * GF_RING; at most GF_RING_MAX).  GF_ENOTFOUND/GF_ENVML from the loader.
 */
int gf_collector_open(struct gf_collector *c, int ring,
		      struct gf_err *e) GF_MUST_CHECK;
/*
 * A collector of no GPU, without NVML (a CPU node: `agent --no-nvml`, or
 * no NVML found): samples count, pages hold gpufleet's node families and
 * no DCGM one.  gf_collector_close() releases it as the other.
 */
void gf_collector_open_cpu(struct gf_collector *c);
void gf_collector_close(struct gf_collector *c);

/* Sample every GPU now (now_ms: wall clock in ms). */
void gf_collector_sample(struct gf_collector *c, int64_t now_ms);

/*
 * The ring a window needs at an interval: samples covering window_s at
 * one per interval_ms, one more for the window's other end and one for
 * a sample that comes late.  Not capped:
 * more than GF_RING_MAX means the ring cannot hold the window.
 */
long gf_collector_ring_for(double window_s, long interval_ms);

/* The i-th most recent sample of GPU g (0 = newest), or NULL. */
const struct gf_sample *gf_collector_recent(const struct gf_tgpu *g, int i);

/*
 * How old GPU g's value of metric m is at now_ms, in seconds: the time
 * since it was read (slow counters are read once per their period, the
 * rest every sample).  -1 when g has no value of m.
 */
double gf_collector_age_s(const struct gf_tgpu *g, enum gf_metric m,
			  int64_t now_ms);

/* The pods whose processes run on one device: a GPU or a MIG instance. */
struct gf_dev_pods {
	char uuid[96]; /* "GPU-..." or "MIG-..." */
	int npods;
	char pods[8][40];
};

/*
 * The pods whose processes run on GPU g (as of its last sample), by the
 * device each process is on: a process on a MIG instance (NVML's
 * gpuInstanceId, on a GPU in MIG mode) under that instance's UUID, any
 * other under the GPU's (also one on an instance that was not listed,
 * or whose UUID NVML did not give).  Each device with a pod once, in
 * process order, into out[0..max), each of its pods once, at most 8:
 * how many devices.  Processes of no pod (a Slurm job, a bare process)
 * are left out.
 */
int gf_collector_pods(const struct gf_tgpu *g, struct gf_dev_pods *out,
		      int max) GF_MUST_CHECK;

/* A per-MIG metric's value on one instance; false when it has none. */
bool gf_mig_value(const struct gf_mig_sample *ms, enum gf_metric m, double *v);

#endif
