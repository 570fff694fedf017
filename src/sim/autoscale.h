/*
 * autoscale.h - `gpufleet simulate autoscale`: an LLM inference service
 * replayed against a fleet of replicas under an autoscaling policy, the
 * decisions taken by the same code as the live autoscaler (core/scale).
 * docs/autoscaling.md states the service model and why its defaults.
 *
 * The service, per replica (struct gf_svc_model):
 *   - max_batch slots; a request holds one from its admission to its
 *     last token;
 *   - prefill one prompt at a time at prefill_tps tokens/s (compute
 *     bound: the replica's prompts queue for it); the first token comes
 *     at the end of the prefill;
 *   - then decode at decode_tps tokens/s per request, independent of the
 *     batch up to max_batch (memory bound);
 *   - a new replica serves nothing for warmup_s, and holds its GPUs
 *     (gpus each) from its start to its removal.
 * Requests wait in one FIFO queue (the queue depth) and go to the ready
 * replica with the fewest requests in flight.  A removed replica takes
 * no new request and gives its GPUs back when its last one is done.
 *
 * The policies: HPA on GPU utilisation (DCGM's duty cycle: the share of
 * time a replica had a request in flight, summed, AverageValue target
 * util_target %), HPA on the queue depth per replica (legacy: no
 * behavior; default: behavior {}), the warm-up-aware recommender on the
 * same metric and target, a fixed fleet sized with hindsight for the
 * busiest minute of the trace it serves (a reference, not a policy
 * anyone could run), HPA on occupancy (requests in flight over
 * max_batch, averaged over the sync, as vLLM's num_requests_running
 * over max_num_seqs reads; target occ_target %), and a static fleet
 * sized for the busiest minute of the previous window (o->prev: no
 * hindsight).  The queue depth is the requests waiting plus those in
 * service ("outstanding", the default) or those waiting only.
 *
 * No look-ahead: the autoscaled policies start at the size the previous
 * window's busiest minute asks for (o->prev), or at min_replicas (a
 * cold start) when there is none; start_replicas overrides both.
 */
#ifndef GF_SIM_AUTOSCALE_H
#define GF_SIM_AUTOSCALE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/err.h>

#include "trace/as_trace.h"

struct gf_svc_model {
	double prefill_tps; /* prompt tokens per second, one at a time */
	double decode_tps;  /* output tokens per second per request */
	int32_t max_batch;  /* requests in flight per replica */
	double warmup_s;    /* start to ready */
	int32_t gpus;	    /* GPUs per replica */
};

/* Llama-3.1-8B-Instruct, BF16, vLLM, one A100 40GB (docs say why). */
void gf_svc_model_default(struct gf_svc_model *m);

enum gf_as_policy {
	GF_ASP_UTIL = 0,     /* HPA on GPU utilisation */
	GF_ASP_QUEUE_LEGACY, /* HPA on queue depth, no behavior */
	GF_ASP_QUEUE,	     /* HPA on queue depth, behavior {} */
	GF_ASP_WARM,	     /* warm-up-aware, same metric and target */
	GF_ASP_FIXED,	     /* fixed fleet sized for the peak, hindsight */
	GF_ASP_OCC,	     /* HPA on occupancy (in flight / max batch) */
	GF_ASP_STATIC,	     /* fixed fleet sized from the previous window */
	GF_ASP_COUNT,
};

/* "util", "queue-legacy", "queue", "warm", "fixed", "occupancy",
 * "static"; static strings. */
const char *gf_as_policy_name(enum gf_as_policy p);
/* By name; -1 when unknown. */
int gf_as_policy_parse(const char *s) GF_MUST_CHECK;

enum gf_as_qmetric {
	GF_AS_Q_OUTSTANDING = 0, /* waiting + in service */
	GF_AS_Q_WAITING = 1,	 /* waiting only */
};

struct gf_as_sim_opts {
	struct gf_svc_model m;
	enum gf_as_qmetric qmetric;
	double queue_target;	/* per replica; 0: 0.75 max_batch (or 2) */
	double util_target;	/* percent, 70 */
	double occ_target;	/* occupancy percent, 75 */
	int32_t min_replicas;	/* 1 */
	int32_t max_replicas;	/* 0: max(32, 4 x static, 4 x start) */
	int32_t start_replicas; /* 0: the static size, or min (no prev) */
	int32_t fixed_replicas; /* 0: sized for the busiest minute */
	/* The window before the trace (its own times), or NULL: sizes the
	 * static fleet and the start; never the trace itself. */
	const struct gf_as_trace *prev;
	double slo_s;	      /* TTFT objective, 1 s */
	double sync_s;	      /* HPA sync period, 15 s */
	double tick_s;	      /* time series step, 1 s */
	double rate_window_s; /* arrival rate window (warm), 60 s */
	double occupancy;     /* sizing and warm target, 0.75 */
	double drain_s;	      /* warm: backlog drained within, 60 s */
	bool series;	      /* keep the per-tick series */
};

void gf_as_sim_opts_default(struct gf_as_sim_opts *o);

/* One tick of the time series. */
struct gf_as_point {
	float waiting, running; /* requests */
	float ready, warming;	/* replicas */
	float desired;		/* the policy's count */
	float arrivals;		/* in the tick */
	float ttft_max;		/* of the requests that arrived in it */
};

struct gf_as_result {
	enum gf_as_policy policy;
	size_t requests;
	double p50, p95, p99, mean; /* TTFT, s */
	double over_slo;	    /* share of requests over slo_s */
	double gpu_hours;
	int scale_events; /* syncs that changed the count */
	int peak_replicas;
	double end_s;		   /* the last request's completion */
	int32_t start, fixed, max; /* the counts used */
	int32_t prev_sized;	   /* static's size; 0 without o->prev */
	double queue_target;
	double wall_s;		    /* set by the caller, if it times the run */
	struct gf_as_point *series; /* opts.series; caller frees */
	size_t nseries;
};

/*
 * Run one policy over a trace.  Pure apart from memory: deterministic.
 * 0, or GF_EINVAL (bad options, e says which) / GF_ETOOBIG.  Release
 * r->series with gf_as_result_release().
 */
int gf_as_simulate(const struct gf_as_trace *t, enum gf_as_policy p,
		   const struct gf_as_sim_opts *o, struct gf_as_result *r,
		   struct gf_err *e) GF_MUST_CHECK;
void gf_as_result_release(struct gf_as_result *r);

/* The counts a run would use: start (from o->prev or min_replicas),
 * fixed (the trace's own busiest minute: hindsight), max, and prev_sized
 * (static's: o->prev's busiest minute, 0 without it).  Only `fixed`
 * reads t. */
void gf_as_sim_sizes(const struct gf_as_trace *t,
		     const struct gf_as_sim_opts *o, int32_t *start,
		     int32_t *fixed, int32_t *max, int32_t *prev_sized);
/* Replicas for the busiest minute of t at o->occupancy (min_replicas
 * at least; the mean slot time of t's own requests). */
int32_t gf_as_busiest_size(const struct gf_as_trace *t,
			   const struct gf_as_sim_opts *o);

#endif
