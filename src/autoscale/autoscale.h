/*
 * autoscale.h - the autoscaler's adapters (docs/autoscaling.md): the
 * manifests it reads (a Kubernetes autoscaling/v2 HorizontalPodAutoscaler
 * or a KEDA ScaledObject, YAML through util/yaml), the metric samples of
 * `gpufleet autoscale recommend`, the metric sources of the live loop
 * (the controller's /metrics, or a Prometheus instant query), the
 * manifests it writes, and the loop itself with its actuator seam.
 */
#ifndef GF_AUTOSCALE_H
#define GF_AUTOSCALE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/err.h>
#include <gpufleet/scale.h>

#include "util/buf.h"

#define GF_AS_MANIFEST_MAX (1u << 20) /* bytes of a manifest file */
#define GF_AS_SAMPLES_MAX  10000000   /* samples in a CSV */
#define GF_AS_LABELS_MAX   8	      /* label filters of a source */

enum gf_as_kind {
	GF_AS_HPA = 0,	/* autoscaling/v2 HorizontalPodAutoscaler */
	GF_AS_KEDA = 1, /* keda.sh/v1alpha1 ScaledObject */
};

/* Which metric an entry of an HPA's spec.metrics names (the core's
 * gf_hpa_metric has its kind and target only): what the live loop reads
 * for it (gf_as_metric_sources). */
enum gf_as_metric_type {
	GF_AS_METRIC_EXTERNAL = 0, /* external.metric */
	GF_AS_METRIC_PODS = 1,	   /* pods.metric */
	GF_AS_METRIC_RESOURCE = 2, /* resource.name (cpu, memory) */
};

struct gf_as_metric_ref {
	enum gf_as_metric_type type;
	char name[128]; /* metric.name, or resource.name */
	int line;	/* its entry's line in the manifest */
	/* metric.selector.matchLabels, in the manifest's order */
	int nlabels;
	char labels[GF_AS_LABELS_MAX][2][128];
	/* metric.selector.matchExpressions given (not read: the loop
	 * refuses such a metric) */
	bool expressions;
};

/* What a manifest says. */
struct gf_as_scaler {
	enum gf_as_kind kind;
	char name[128];	  /* metadata.name */
	char metric[256]; /* HPA: the External metric's name */
	char server[512]; /* KEDA: the prometheus trigger's serverAddress */
	char query[2048]; /* KEDA: its query */
	/* HPA: each entry of spec.metrics, in order (hpa.nmore + 1) */
	int nmetrics;
	struct gf_as_metric_ref metrics[GF_HPA_METRICS_MAX];
	struct gf_hpa_spec hpa;	  /* HPA: the spec (not finished) */
	struct gf_keda_spec keda; /* KEDA: the ScaledObject, its HPA in .hpa */
	int nwarn;		  /* unknown fields seen (the first 8 kept) */
	char warn[8][300];	  /* "FILE:LINE: unknown field 'x' in spec" */
};

/*
 * Read an HPA or a ScaledObject.  The HPA has 1 to 8 metrics (External,
 * Pods or Resource; each one's name and selector kept in ->metrics);
 * absent behavior (or
 * `behavior: null`) keeps the legacy path, `behavior: {}` the defaulted
 * one.  The ScaledObject must have one trigger with a threshold (the
 * prometheus scaler's metadata).  Unknown fields are ignored and listed
 * in out->warn, as the API server's default field validation warns.
 * 0, or a negative code with e saying FILE:LINE: what.
 */
int gf_as_read_manifest(const char *path, struct gf_as_scaler *out,
			struct gf_err *e) GF_MUST_CHECK;
/* The same from memory; name stands for the file in messages. */
int gf_as_parse_manifest(const char *text, size_t len, const char *name,
			 struct gf_as_scaler *out,
			 struct gf_err *e) GF_MUST_CHECK;

struct gf_as_samples {
	struct gf_hpa_sample *s;
	char (*t_text)[32]; /* each sample's t_s as written */
	size_t n;
	/* a header beyond `t_s,value`: more[i] beside s[i], else NULL */
	struct gf_hpa_sample_more *more;
	int nvalues; /* value columns (value, value2, ...): the metrics */
};

/*
 * A samples CSV: an optional header `t_s,value`, then lines `t_s,value`
 * (seconds, a quantity).  A header may name more columns, in any order
 * after t_s: value2 .. value8 (the HPA's other metrics, in spec.metrics
 * order), ready, unready, missing, status (pod counts; empty: not
 * given); a value `-` is a metric that could not be read.  Blank lines and
 * lines starting with '#' are skipped.  Errors name FILE:LINE: a line without
 * two fields, a t_s that is not a finite number or not after the previous one,
 * a value that is not a number, NaN or negative.  0, or a negative code with e
 * set; release with gf_as_samples_release() after 0.
 */
int gf_as_read_samples(const char *path, struct gf_as_samples *out,
		       struct gf_err *e) GF_MUST_CHECK;
void gf_as_samples_release(struct gf_as_samples *s);

/*
 * The decisions for samples under scaler, starting at start replicas,
 * replicas ready at once: out[i] after sample i (caller's array of n).
 * 0 or GF_EINVAL with e set.
 */
int gf_as_recommend(const struct gf_as_scaler *scaler, int32_t start,
		    const struct gf_as_samples *s, int32_t *out,
		    struct gf_err *e) GF_MUST_CHECK;

/* Where the live loop reads the queue depth. */
enum gf_as_source_kind {
	GF_AS_SOURCE_METRICS = 0, /* a Prometheus text page (/metrics) */
	GF_AS_SOURCE_PROMQL = 1,  /* Prometheus /api/v1/query */
};

struct gf_as_source {
	enum gf_as_source_kind kind;
	char base[512];	  /* http://HOST:PORT */
	char path[256];	  /* GF_AS_SOURCE_METRICS: "/metrics" */
	char query[2048]; /* GF_AS_SOURCE_PROMQL */
	char metric[128]; /* GF_AS_SOURCE_METRICS: the family summed */
	int nlabels;	  /* and the label values it must have */
	char labels[GF_AS_LABELS_MAX][2][128];
	const char *token;  /* bearer token, or NULL */
	long timeout_ms;    /* 0: 5 s */
	const char *ca;	    /* https: the CA file (--ca), or NULL */
	bool insecure_http; /* the token over http to a non-loopback host */
};

/*
 * Sum of the metric's samples on a text page whose labels match, in
 * value; the family present with no matching sample is 0 (the
 * controller writes no series for an empty queue).  GF_ENOTFOUND when
 * the page does not have the family at all, GF_EPARSE for a line that
 * is not Prometheus text, GF_ERANGE for NaN, infinite or negative sums.
 */
int gf_as_parse_metrics_page(const char *text, size_t len,
			     const struct gf_as_source *src, double *value,
			     struct gf_err *e) GF_MUST_CHECK;
/*
 * Sum of an instant query's answer (vector or scalar); an empty vector
 * is 0, as KEDA's ignoreNullValues (default true).  GF_EPARSE for an
 * answer that is not Prometheus' JSON or says "error", GF_ERANGE as
 * above.
 */
int gf_as_parse_query_answer(const char *json, size_t len, double *value,
			     struct gf_err *e) GF_MUST_CHECK;
/* Read the source once over HTTP (util client).  0 with *value, or a
 * negative code with e naming the URL and the cause. */
int gf_as_source_read(const struct gf_as_source *src, double *value,
		      struct gf_err *e) GF_MUST_CHECK;

/*
 * The live loop's source of each metric of sc (an HPA's spec.metrics in
 * order; a ScaledObject has one): out[0] is first (the command line's
 * --metric and labels, or --query); out[i] is a source of the same kind
 * for metrics[i]: on a text page the family metric.name with
 * selector.matchLabels as the label filters; from Prometheus queries[i]
 * when i < nqueries and it is not NULL, else sum(NAME{K="V",...}) (the
 * selector's labels).  out has room for GF_HPA_METRICS_MAX; *n is the
 * count.  0, or GF_EINVAL naming the entry and its line: a Resource
 * metric (no family to read), no metric.name, a matchExpressions
 * selector (not read), more queries than metrics; GF_ETOOBIG.
 */
int gf_as_metric_sources(const struct gf_as_scaler *sc,
			 const struct gf_as_source *first,
			 const char *const *queries, int nqueries,
			 struct gf_as_source *out, int *n,
			 struct gf_err *e) GF_MUST_CHECK;

/*
 * The actuator: what the loop does with a decision.  apply() makes the
 * target's count `desired` (it was `current`); 0 or a negative code.
 * current() (optional) reads the target's count before each sync; when
 * NULL the loop trusts its own last decision.
 */
struct gf_as_actuator {
	const char *name;
	int (*apply)(void *ctx, int32_t current, int32_t desired,
		     struct gf_err *e);
	int (*current)(void *ctx, int32_t *replicas, struct gf_err *e);
	void *ctx;
	/* after current() succeeded: the pods it saw ready (running) and
	 * not yet ready (pending); false when it saw none (NULL: never) */
	bool (*pods)(void *ctx, int32_t *ready, int32_t *unready);
};

/*
 * An actuator that changes the replica count of an inference service
 * registered with the controller (PUT /v1/services/NAME/replicas; its
 * current count from GET /v1/services/NAME), with conn's bearer token
 * (or none), CA and insecure_http (its other fields unused; copied).
 * Release it with gf_as_actuator_release.  0, or GF_EINVAL for a missing
 * URL or name.
 */
int gf_as_controller_actuator(const char *base_url,
			      const struct gf_as_source *conn,
			      const char *service, struct gf_as_actuator *out,
			      struct gf_err *e) GF_MUST_CHECK;
/* Free what an actuator holds (a dry-run one holds nothing). */
void gf_as_actuator_release(struct gf_as_actuator *act);

/* One sync of the loop, for its report. */
struct gf_as_tick {
	double t_s;   /* since the loop started */
	bool ok;      /* the metric was read (the first: metrics[0]) */
	double value; /* its value when ok */
	int nmetrics; /* the metrics read at each sync (1 .. 8) */
	bool oks[GF_HPA_METRICS_MAX];	   /* each was read */
	double values[GF_HPA_METRICS_MAX]; /* and its value when so */
	int32_t ready, unready; /* the actuator's pods, or -1 when unknown */
	int32_t before;		/* replicas before */
	int32_t after;		/* the decision */
	enum gf_hpa_reason reason;
	/* the unread metrics' errors ("metrics[i]: ...; ..." when
	 * several) */
	char why[GF_ERR_MSG_MAX];
	/* the actuator's error (the count unread or unchanged), "" if none:
	 * the loop goes on, as an HPA does when it cannot get or update a
	 * scale */
	char act_why[GF_ERR_MSG_MAX];
};

/* How the loop reads a source (tests pass their own; NULL:
 * gf_as_source_read). */
typedef int (*gf_as_read_fn)(void *ctx, const struct gf_as_source *src,
			     double *value, struct gf_err *e);

struct gf_as_loop {
	const struct gf_as_scaler *scaler;
	/* one source per metric (gf_as_metric_sources), nsrc of them; an
	 * HPA of several metrics needs one for each */
	const struct gf_as_source *src;
	int nsrc; /* 0 counts as 1 */
	gf_as_read_fn read;
	void *read_ctx;
	int32_t start;	  /* replicas at the start (dry-run's count) */
	long interval_ms; /* between syncs, default 15000 */
	long count;	  /* syncs to run; 0: until *stop */
	struct gf_as_actuator act;
	void (*report)(void *ctx, const struct gf_as_tick *t);
	void *report_ctx;
	volatile sig_atomic_t *stop; /* set by a signal handler */
};

/*
 * Run the loop: read every metric's source, decide (the HPA with each
 * metric's value, or KEDA and its HPA), apply, report.  A metric that
 * cannot be read is unread for the HPA (gf_hpa_sync_more: the largest
 * proposal of the others may scale up, never down; none read changes
 * nothing); an actuator that cannot read or set the count is reported
 * (the tick's act_why) and changes nothing.  0 when count syncs ran or
 * *stop was set; a negative code when the decision itself failed, or
 * the sources do not match the HPA's metrics (e set).
 */
int gf_as_loop_run(const struct gf_as_loop *l, struct gf_err *e) GF_MUST_CHECK;

/* The manifests `gpufleet autoscale manifests` writes. */
struct gf_as_manifest_opts {
	const char *name;	 /* the ScaledObject's and the HPA's name */
	const char *ns;		 /* namespace, or NULL */
	const char *target_api;	 /* scaleTargetRef.apiVersion: apps/v1 */
	const char *target_kind; /* Deployment */
	const char *target_name;
	const char *prometheus; /* KEDA serverAddress */
	const char *query;	/* KEDA query */
	const char *metric;	/* the HPA's External metric name */
	int nlabels;		/* its selector.matchLabels */
	char labels[GF_AS_LABELS_MAX][2][128];
	const char *target_value; /* a quantity: per replica */
	const char *activation;	  /* KEDA activationThreshold */
	int32_t min_replicas, max_replicas;
	int32_t polling_s, cooldown_s;
	int32_t down_window_s; /* scaleDown.stabilizationWindowSeconds */
	bool keda, hpa;	       /* which to write */
};

/* Multi-document YAML into out; 0 or GF_ETOOBIG / GF_EINVAL with e. */
int gf_as_render_manifests(const struct gf_as_manifest_opts *o,
			   struct gf_buf *out, struct gf_err *e) GF_MUST_CHECK;

#endif
