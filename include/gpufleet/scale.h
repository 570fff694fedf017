/*
 * scale.h - autoscaling decisions: Kubernetes' HorizontalPodAutoscaler
 * controller, exactly; KEDA's activation and cooldown around it; and a
 * warm-up-aware mode on top (docs/autoscaling.md).
 *
 * The HPA part follows kubernetes/kubernetes
 * pkg/controller/podautoscaler (horizontal.go, replica_calculator.go)
 * for one External metric, as the reference
 * (autoscale-chargeback-engines.md section A1) states it:
 *   - AverageValue target: ratio = usage / (target * statusReplicas);
 *     within tolerance ((1 - down) <= ratio <= (1 + up)) the proposal is
 *     statusReplicas, else ceil(usage / target);
 *   - Value target: ratio = usage / target; with specReplicas != 0,
 *     specReplicas within tolerance, else ceil(ratio * readyReplicas);
 *     with specReplicas == 0, ceil(ratio);
 *   - specReplicas 0 with minReplicas != 0: scaling disabled; above max
 *     or below min: straight to max or min (no stabilization, no policy);
 *   - no behavior: the legacy path (max of the recommendations not
 *     older than the downscale window, a sample at the cutoff counts;
 *     then [min, min(max, max(2 * current, 4))]);
 *   - behavior: both stabilization windows (strictly newer than the
 *     cutoff), then the scale-up and scale-down policies with their
 *     periods and selectPolicy, events stored only on a rescale, in
 *     slots reused once older than the longest policy period;
 *   - the first sync records the current count as a recommendation;
 *   - a metric that cannot be read changes nothing (and stores
 *     nothing): a source that is down never scales anything down.
 * Times are milliseconds on any monotonic origin; metric values are
 * milli-units (Kubernetes' Quantity.MilliValue(), which rounds up).
 *
 * Everything here is pure: no I/O, no clock; the caller passes the time
 * in.  One gf_hpa (or gf_keda) is one autoscaler's memory; it is not
 * shared between threads without the caller's lock.
 */
#ifndef GPUFLEET_SCALE_H
#define GPUFLEET_SCALE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/err.h>

#define GF_HPA_POLICIES_MAX 16 /* policies per direction */
/* The API server's validation bounds (manifest warnings, not errors). */
#define GF_HPA_PERIOD_MAX 1800 /* periodSeconds */
#define GF_HPA_WINDOW_MAX 3600 /* stabilizationWindowSeconds */

enum gf_hpa_target_type {
	GF_HPA_AVERAGE_VALUE = 0,
	GF_HPA_VALUE = 1,
};

enum gf_hpa_policy_type {
	GF_HPA_PODS = 0,
	GF_HPA_PERCENT = 1,
};

enum gf_hpa_select {
	GF_HPA_SELECT_MAX = 0,
	GF_HPA_SELECT_MIN = 1,
	GF_HPA_SELECT_DISABLED = 2,
};

struct gf_hpa_policy {
	enum gf_hpa_policy_type type;
	int32_t value;	  /* pods, or percent; > 0 */
	int32_t period_s; /* > 0 (the API: at most GF_HPA_PERIOD_MAX) */
};

/*
 * One direction of spec.behavior (HPAScalingRules).  The has_ flags say
 * which fields the manifest gave; gf_hpa_spec_finish() fills the others
 * with Kubernetes' defaults, one field at a time (copyHPAScalingRules).
 */
struct gf_hpa_rules {
	bool has_window, has_select, has_policies, has_tolerance;
	int32_t window_s; /* stabilizationWindowSeconds */
	enum gf_hpa_select select;
	int npolicies;
	struct gf_hpa_policy policies[GF_HPA_POLICIES_MAX];
	double tolerance; /* KEP-4951 per-direction tolerance */
};

#define GF_HPA_METRICS_MAX 8 /* entries of spec.metrics */

/* How a metric's proposal is computed (replica_calculator.go). */
enum gf_hpa_metric_kind {
	GF_HPA_EXTERNAL = 0,	/* External: a total over the workload */
	GF_HPA_PER_POD = 1,	/* Pods, or Resource AverageValue: an average */
	GF_HPA_UTILIZATION = 2, /* Resource averageUtilization (percent) */
};

/* A metric of spec.metrics after the first (the first is the spec's
 * kind, target and target_milli). */
struct gf_hpa_metric {
	enum gf_hpa_metric_kind kind;
	enum gf_hpa_target_type target; /* GF_HPA_PER_POD: AverageValue */
	int64_t target_milli;		/* > 0 */
};

struct gf_hpa_spec {
	int32_t min_replicas; /* default 1; 0 needs HPAScaleToZero */
	int32_t max_replicas; /* >= 1, >= min */
	enum gf_hpa_target_type target;
	int64_t target_milli; /* the target value, milli-units, > 0 */
	bool behavior;	      /* spec.behavior given (even `{}`) */
	struct gf_hpa_rules up, down;
	/* kube-controller-manager flags */
	double tolerance;	    /* 0.1 */
	int32_t downscale_window_s; /* 300 */
	bool finished;		    /* gf_hpa_spec_finish() was run */
	/* the first metric's kind (External unless set), then the others */
	enum gf_hpa_metric_kind kind;
	int nmore; /* 0 .. GF_HPA_METRICS_MAX - 1 */
	struct gf_hpa_metric more[GF_HPA_METRICS_MAX - 1];
};

/* Defaults: min 1, max 0 (to set), AverageValue, target 0 (to set), no
 * behavior, the controller's tolerance 0.1 and window 300 s. */
void gf_hpa_spec_init(struct gf_hpa_spec *s);

/*
 * Apply Kubernetes' defaulting (pkg/apis/autoscaling/v2/defaults.go and
 * the controller's maybeInitScaleDownStabilizationWindow) when behavior
 * is given: scaleUp window 0, Max, {Pods 4 / 15 s, Percent 100 / 15 s};
 * scaleDown window the controller's, Max, {Percent 100 / 15 s}; unset
 * tolerances take the controller's.  Then check what the decision needs
 * (min <= max, max >= 1, target > 0, policies present with values and
 * periods > 0, windows >= 0); 0, or GF_EINVAL with e saying which field
 * and why.  Idempotent.
 */
int gf_hpa_spec_finish(struct gf_hpa_spec *s, struct gf_err *e) GF_MUST_CHECK;

struct gf_hpa_rec {
	int32_t replicas;
	int64_t t_ms;
};

struct gf_hpa_event {
	int32_t change; /* absolute */
	int64_t t_ms;
	bool outdated;
};

/* One autoscaler's memory (the controller's per-HPA maps). */
struct gf_hpa {
	struct gf_hpa_spec spec; /* finished */
	bool seen;		 /* the initial recommendation is stored */
	int64_t last_ms;	 /* the last sync's time */
	struct gf_hpa_rec *recs;
	size_t nrecs, arecs;
	struct gf_hpa_event *ups, *downs;
	size_t nups, aups, ndowns, adowns;
	/* the event the last sync stored (for gf_warm_sync's floor) */
	bool last_event, last_event_up;
	size_t last_event_i;
};

/* Copy and finish spec into h (caller's storage).  0, or GF_EINVAL with
 * e set; h needs gf_hpa_release() only after 0. */
int gf_hpa_init(struct gf_hpa *h, const struct gf_hpa_spec *spec,
		struct gf_err *e) GF_MUST_CHECK;
void gf_hpa_release(struct gf_hpa *h);
/* Invariants (times in order of storage are not required; changes > 0;
 * counts within allocations); 0, or -1 with msg set. */
int gf_hpa_check(const struct gf_hpa *h, char *msg, size_t size) GF_MUST_CHECK;

struct gf_hpa_input {
	int64_t now_ms;		 /* never before the previous sync */
	int32_t spec_replicas;	 /* scale.Spec.Replicas: the current count */
	int32_t status_replicas; /* scale.Status.Replicas */
	int32_t ready_replicas;	 /* ready pods (the Value target's factor) */
	bool metric_ok;		 /* false: the metric could not be read */
	int64_t usage_milli;	 /* the metric's total, milli-units, >= 0 */
};

enum gf_hpa_reason {
	GF_HPA_REASON_COMPUTED = 0, /* from the metric */
	GF_HPA_REASON_DISABLED,	    /* current 0, min != 0 */
	GF_HPA_REASON_ABOVE_MAX,    /* current > max: to max */
	GF_HPA_REASON_BELOW_MIN,    /* current < min: to min */
	GF_HPA_REASON_NO_METRIC,    /* metric unavailable: nothing changes */
	GF_HPA_REASON_ACTIVATE,	    /* KEDA: 0 -> min or 1 */
	GF_HPA_REASON_DEACTIVATE,   /* KEDA: to 0 after the cooldown */
	GF_HPA_REASON_KEDA_MIN,	    /* KEDA: inactive and below its min */
	GF_HPA_REASON_KEDA_PAUSED,  /* KEDA: paused-replicas annotation */
};

/* Name of a reason ("computed", "no-metric", ...), static. */
const char *gf_hpa_reason_name(enum gf_hpa_reason r);

struct gf_hpa_output {
	int32_t replicas;   /* the count after this sync */
	bool rescale;	    /* replicas != spec_replicas */
	int32_t proposal;   /* the metric's proposal, or -1 */
	int32_t stabilized; /* after stabilization, or -1 */
	enum gf_hpa_reason reason;
};

/*
 * One sync of the controller.  0, or GF_EINVAL (time going backwards,
 * negative counts or usage) with h unchanged.
 */
int gf_hpa_sync(struct gf_hpa *h, const struct gf_hpa_input *in,
		struct gf_hpa_output *out) GF_MUST_CHECK;

/*
 * What a sync sees beyond gf_hpa_input: the pods that are not ready or
 * report no per-pod metric, and the metrics after the first.  For a
 * GF_HPA_PER_POD metric, in->ready_replicas are the ready pods that
 * report it and usage its total over them; unready pods are left out of
 * the average and count as 0 on a scale-up, missing pods count as the
 * target on a scale-down and 0 on a scale-up (calcPlainMetricReplicas).
 */
struct gf_hpa_more {
	int32_t unready_replicas;	 /* not ready (or pending) pods, >= 0 */
	int32_t missing_replicas;	 /* pods with no per-pod metric, >= 0 */
	bool ok[GF_HPA_METRICS_MAX - 1]; /* spec.more[i] was read */
	int64_t usage_milli[GF_HPA_METRICS_MAX - 1]; /* >= 0 */
};

/*
 * gf_hpa_sync() with more (NULL: no unready or missing pods, the other
 * metrics unread).  Each valid metric proposes a count and the largest
 * wins; no metric valid, or one invalid while the largest is below the
 * spec count, is GF_HPA_REASON_NO_METRIC (computeReplicasForMetrics).
 */
int gf_hpa_sync_more(struct gf_hpa *h, const struct gf_hpa_input *in,
		     const struct gf_hpa_more *more,
		     struct gf_hpa_output *out) GF_MUST_CHECK;

/* A metric sample at one sync: the total, or ok false when unread. */
struct gf_hpa_sample {
	int64_t t_ms;
	int64_t usage_milli;
	bool ok;
};

/*
 * The reference's replay: start at `start` replicas, one sync per
 * sample, replicas ready at once (status = ready = spec).  out[i] is the
 * count after sample i.  0, or GF_EINVAL (bad spec, samples out of
 * order, negative values) with e set.
 */
int gf_hpa_replay(const struct gf_hpa_spec *spec, int32_t start,
		  const struct gf_hpa_sample *s, size_t n, int32_t *out,
		  struct gf_err *e) GF_MUST_CHECK;

/* What a sample adds to gf_hpa_sample: counts are -1 when not given
 * (status = spec, ready = status - unready - missing, the others 0). */
struct gf_hpa_sample_more {
	int32_t status, ready, unready, missing;
	bool ok[GF_HPA_METRICS_MAX - 1];
	int64_t usage_milli[GF_HPA_METRICS_MAX - 1];
};

/* gf_hpa_replay() with more[i] beside s[i] (more NULL: as there). */
int gf_hpa_replay_more(const struct gf_hpa_spec *spec, int32_t start,
		       const struct gf_hpa_sample *s,
		       const struct gf_hpa_sample_more *more, size_t n,
		       int32_t *out, struct gf_err *e) GF_MUST_CHECK;

/* The replay loop of any scaler whose sync is sync(scaler, ...) (the HPA,
 * KEDA): as gf_hpa_replay() once the scaler is made and start checked. */
typedef int (*gf_scale_sync_fn)(void *scaler, const struct gf_hpa_input *in,
				struct gf_hpa_output *out);
int gf_scale_replay(gf_scale_sync_fn sync, void *scaler, int32_t start,
		    const struct gf_hpa_sample *s, size_t n, int32_t *out,
		    struct gf_err *e) GF_MUST_CHECK;

/*
 * KEDA's ScaledObject around the HPA it generates (keda-hpa-NAME):
 * activation (0 <-> 1) by KEDA's operator at each pollingInterval,
 * scaling (1 <-> N) by the HPA at every sync.  Sources: kedacore/keda
 * pkg/scaling/executor/scale_scaledobjects.go, the reference's A3:
 *   - paused-replicas N: held at N, nothing else runs; paused: held
 *     at the current count, nothing else runs;
 *   - active: the value is strictly above activationThreshold, or
 *     minReplicaCount >= 1 without idleReplicaCount; a scaler error is
 *     never active;
 *   - at 0 replicas (or, with idleReplicaCount, below minReplicaCount)
 *     and active: to minReplicaCount, or 1;
 *   - active: lastActiveTime refreshed;
 *   - not active, no error, replicas > 0 and minReplicaCount 0 (or
 *     replicas above idleReplicaCount): to 0 (to idleReplicaCount) once
 *     lastActiveTime + cooldownPeriod is strictly before now (at once
 *     when never active), not within initialCooldownPeriod of creation;
 *   - not active because of an error: nothing (no scale to zero);
 *   - not active, below minReplicaCount, no idleReplicaCount: to
 *     minReplicaCount;
 *   - fallback: after failureThreshold consecutive errors the HPA sees
 *     target * fallback.replicas (AverageValue targets).
 * When the executor changes the count at a sync, that is the sync's
 * decision and the HPA does not run at it (they are separate loops in
 * Kubernetes; we order them executor first).
 */
struct gf_keda_spec {
	int32_t min_replicas;	    /* minReplicaCount, default 0 */
	int32_t max_replicas;	    /* maxReplicaCount, default 100 */
	int64_t activation_milli;   /* activationThreshold, default 0 */
	int32_t polling_s;	    /* pollingInterval, default 30 */
	int32_t cooldown_s;	    /* cooldownPeriod, default 300 */
	int32_t initial_cooldown_s; /* initialCooldownPeriod, default 0 */
	int32_t fallback_failures;  /* fallback.failureThreshold; 0: none */
	int32_t fallback_replicas;  /* fallback.replicas */
	int32_t idle_replicas;	    /* idleReplicaCount; -1: not set */
	bool min_set;		    /* minReplicaCount given (its bound) */
	/* metadata.annotations: autoscaling.keda.sh/paused-replicas (-1:
	 * none; the target held at it) and autoscaling.keda.sh/paused (the
	 * target held where it is); paused-replicas wins */
	int32_t paused_replicas;
	bool paused;
	/* the trigger's target and advanced...behavior; min and max are
	 * set from the fields above by gf_keda_init() */
	struct gf_hpa_spec hpa;
};

/* KEDA's defaults, and hpa as gf_hpa_spec_init(). */
void gf_keda_spec_init(struct gf_keda_spec *s);

/* KEDA's replica bounds: 0 <= min <= max and max >= 1 (min 0: scale to
 * zero). */
static inline bool gf_keda_replicas_ok(int32_t min, int32_t max)
{
	return min >= 0 && max >= 1 && min <= max;
}

struct gf_keda {
	struct gf_keda_spec spec;
	struct gf_hpa
		hpa; /* min max(minReplicaCount, 1), max maxReplicaCount */
	int64_t created_ms;
	bool polled;
	int64_t last_poll_ms;
	bool active;
	bool has_last_active;
	int64_t last_active_ms;
	int32_t failures; /* consecutive scaler errors */
};

/* created_ms: the ScaledObject's creation (initialCooldownPeriod).  0 or
 * GF_EINVAL with e set; release after 0. */
int gf_keda_init(struct gf_keda *k, const struct gf_keda_spec *spec,
		 int64_t created_ms, struct gf_err *e) GF_MUST_CHECK;
void gf_keda_release(struct gf_keda *k);
/* One sync (every 15 s; KEDA's own poll runs when due).  in as for
 * gf_hpa_sync(); 0 or GF_EINVAL. */
int gf_keda_sync(struct gf_keda *k, const struct gf_hpa_input *in,
		 struct gf_hpa_output *out) GF_MUST_CHECK;

/*
 * Warm-up-aware mode, on top of the HPA (AverageValue targets).  A
 * starting replica serves nothing for warmup_s.  At each sync it
 * projects, from the arrival rate, the requests the fleet will hold
 * when a replica started now becomes ready, counting what the ready
 * replicas and those still warming (from their remaining warm-up) can
 * serve until then, and proposes the replicas that carry the arrival
 * rate at the target occupancy and drain that projected backlog within
 * drain_s; never fewer than the requests held now need at that
 * occupancy.  The proposal goes through the HPA's own tolerance,
 * stabilization windows and policies (the metric the HPA sees is
 * proposal * target), and a scale-down never goes below the replicas
 * still warming: the actuator removes ready replicas only.
 */
struct gf_warm_spec {
	double warmup_s;  /* a new replica's warm-up, >= 0 */
	int32_t slots;	  /* requests one replica serves at once, >= 1 */
	double occupancy; /* target share of slots busy, (0, 1] */
	double drain_s;	  /* drain the projected backlog within, > 0 */
};

struct gf_warm_input {
	int32_t ready;		   /* replicas serving */
	int32_t nwarming;	   /* replicas warming up */
	const double *warm_left_s; /* each one's remaining warm-up, s */
	double waiting;		   /* requests waiting for a slot */
	double running;		   /* requests holding a slot */
	double arrival_rate;	   /* requests per second, recent */
	double service_s;	   /* mean time a request holds a slot */
};

/* The replicas needed when a replica started now is ready (>= 0). */
int32_t gf_warm_need(const struct gf_warm_spec *ws,
		     const struct gf_warm_input *wi);

/* One sync: in->usage_milli is replaced by the projection (in->metric_ok
 * still says whether the inputs could be read).  0 or GF_EINVAL (bad
 * spec or input, a Value target). */
int gf_warm_sync(struct gf_hpa *h, const struct gf_warm_spec *ws,
		 const struct gf_warm_input *wi, const struct gf_hpa_input *in,
		 struct gf_hpa_output *out) GF_MUST_CHECK;

/*
 * A Kubernetes quantity ("5", "500m", "1.5", "2k", "1Ki", "1e3") as
 * milli-units, rounded up as Quantity.MilliValue() does.  0, or
 * GF_EPARSE (not a quantity), GF_ERANGE (negative, or beyond int64
 * milli-units).
 */
int gf_quantity_milli(const char *s, int64_t *out) GF_MUST_CHECK;

#endif
