/*
 * charge.h - chargeback: who used which GPUs, CPUs and memory, at what
 * cost, with idle capacity and shared costs allocated the way OpenCost
 * allocates them (core/pkg/opencost/allocation.go, AggregateBy), plus
 * what OpenCost does not do: GPU shares billed at their fraction, MIG
 * instances at their slice fraction, and GPU efficiency and waste from
 * GPU telemetry (never from CPU).  docs/chargeback.md has the model.
 *
 *   struct gf_charge_input in;
 *   gf_charge_input_init(&in);
 *   ... gf_charge_add_asset(&in, &a); gf_charge_add_record(&in, &r); ...
 *   struct gf_charge_opts o;
 *   gf_charge_opts_init(&o, start_ms, end_ms);
 *   gf_charge_key_parse(&in, "namespace", &o.agg[o.nagg++], &e);
 *   o.share_idle = true;
 *   struct gf_charge_result res;
 *   if (gf_charge_run(&in, &o, &res, &e) == 0) {
 *           ... res.steps[0].rows[i] ...
 *           gf_charge_result_release(&res);
 *   }
 *   gf_charge_input_release(&in);
 *
 * Pure: no I/O, no clock (the caller passes "now" for the one rule that
 * reads it), no threads.  An input is used by one thread at a time;
 * gf_charge_run only reads it, so several runs may share one input.
 *
 * Units: times in milliseconds since the epoch; CPU in cores, memory in
 * GiB, prices in currency per unit-hour; costs in currency.
 */
#ifndef GPUFLEET_CHARGE_H
#define GPUFLEET_CHARGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/err.h>

#define GF_CHARGE_MAX_KEYS    4		 /* aggregation keys */
#define GF_CHARGE_MAX_MATCH   16	 /* --share / --filter terms */
#define GF_CHARGE_MAX_SHARED  16	 /* --shared-hourly entries */
#define GF_CHARGE_NAME_MAX    64	 /* a shared-hourly name, with NUL */
#define GF_CHARGE_STR_MAX     256	 /* bytes of one interned string */
#define GF_CHARGE_RECORDS_MAX (1u << 28) /* records in one input */
#define GF_CHARGE_ASSETS_MAX  (1u << 22)
#define GF_CHARGE_TELE_MAX    (1u << 26)
#define GF_CHARGE_STEPS_MAX   4000 /* steps of one run (days of 10 years) */
#define GF_CHARGE_SKIPS_KEPT                                         \
	1000			 /* skipped records listed, the rest \
				    counted */
#define GF_CHARGE_GPU_IDS_MAX 16 /* GPU ids one record may name */

/* The names OpenCost gives its special rows. */
#define GF_CHARGE_IDLE	   "__idle__"
#define GF_CHARGE_FILTERED "__filtered__"
#define GF_CHARGE_UNALLOC  "__unallocated__"
#define GF_CHARGE_SHARED   "__shared__"

/* How a MIG instance is billed: its compute slices of the GPU's (the
 * default: what the controller's gpu_ms counts), or its memory slices. */
enum gf_charge_mig_rule {
	GF_CHARGE_MIG_COMPUTE = 0,
	GF_CHARGE_MIG_MEMORY,
};

/* The agent's diagnoses (docs/telemetry.md) that make waste. */
enum gf_charge_waste {
	GF_CHARGE_WASTE_IDLE = 0, /* allocated-idle */
	GF_CHARGE_WASTE_STARVED,  /* data-starvation */
	GF_CHARGE_WASTE_OVERPROV, /* memory-overprovisioned */
	GF_CHARGE_NWASTE
};

/* The diagnosis's name ("allocated-idle"), and back (-1 unknown). */
const char *gf_charge_waste_name(enum gf_charge_waste w);
int gf_charge_waste_parse(const char *s) GF_MUST_CHECK;

/* GPU activity signals, best first (bit i of a signals mask). */
enum gf_charge_signal {
	GF_CHARGE_SIG_GR = 0, /* DCGM_FI_PROF_GR_ENGINE_ACTIVE */
	GF_CHARGE_SIG_SM,     /* DCGM_FI_PROF_SM_ACTIVE */
	GF_CHARGE_SIG_UTIL,   /* DCGM_FI_DEV_GPU_UTIL */
	GF_CHARGE_NSIG
};

const char *gf_charge_signal_name(enum gf_charge_signal s);

/* --- the input --------------------------------------------------------- */

/*
 * One record of use: a container (OpenCost's unit) on a node from start
 * to end.  cpu and ram are averages over the record; NaN is absent (the
 * cost takes max(request, usage) of the sides present, as OpenCost's
 * container_cpu_allocation does).  gpus is GPU units: 1 a whole GPU,
 * 0.25 a 250-milli share; with a MIG profile it counts instances of
 * that profile (NaN: one).  String fields are ids from gf_charge_intern
 * (0 = "").
 */
struct gf_charge_record {
	int64_t start_ms, end_ms;
	double gpus;
	double cpu_req, cpu_use; /* cores */
	double ram_req, ram_use; /* GiB */
	double other_cost;	 /* costs outside CPU, GPU and RAM (storage,
				    network) over the whole record; never idle */
	uint32_t cluster, node, ns, pod, container;
	uint32_t extra; /* gf_charge_extra id: labels, model, MIG, GPU ids */
	uint32_t src;	/* where it was read (a file name), for messages */
	uint32_t line;
};

/* What few records carry, kept once per distinct combination. */
struct gf_charge_extra {
	uint32_t labels;      /* "k=v;k=v" (as interned), 0 none */
	uint32_t gpu_model;   /* overrides the node's, 0 none */
	uint32_t mig_profile; /* "3g.40gb", 0 none */
	uint32_t gpu_ids;     /* "0;1" or UUIDs: joins telemetry, 0 none */
	/* the pod's owner, as OpenCost's properties: controllerKind
	 * ("deployment", as OpenCost writes it), controller (its name) */
	uint32_t controller_kind, controller;
	uint32_t services;    /* "svc;svc" (OpenCost keys by the first) */
	uint32_t annotations; /* "k=v;k=v", as labels */
};

/*
 * A node's capacity and prices over [start, end).  A node may have
 * several rows over time (they must not overlap).  Prices are per
 * unit-hour; NaN means unknown, an error once something needs it.
 */
struct gf_charge_asset {
	int64_t start_ms, end_ms;
	double gpus, cpu_cores, ram_gib;
	double gpu_price_hr, cpu_price_hr, ram_price_hr;
	uint32_t cluster, node, gpu_model;
	uint32_t src, line;
};

/*
 * GPU telemetry over [start, end) for one GPU (or MIG device) of a node,
 * named as the records' gpu_ids name it.  activity: percent 0..100 of
 * the signal named; negative when not known.  waste: a diagnosis that
 * held over the interval, or -1.
 */
struct gf_charge_tele {
	int64_t start_ms, end_ms;
	double activity;
	uint32_t node, gpu; /* node names are taken as unique */
	int8_t signal;	    /* enum gf_charge_signal */
	int8_t waste;	    /* enum gf_charge_waste or -1 */
	uint32_t src, line;
};

struct gf_charge_strs;
struct gf_charge_hash;

struct gf_charge_input {
	struct gf_charge_strs *strs;
	struct gf_charge_record *rec;
	size_t nrec, rec_alloc;
	struct gf_charge_asset *asset;
	size_t nasset, asset_alloc;
	struct gf_charge_tele *tele;
	size_t ntele, tele_alloc;
	struct gf_charge_extra *extra; /* [0] is "none" */
	size_t nextra, extra_alloc;
	struct gf_charge_hash *extra_ix;
};

void gf_charge_input_init(struct gf_charge_input *in);
void gf_charge_input_release(struct gf_charge_input *in);

/*
 * Intern len bytes of s (no NUL needed): the same text always gets the
 * same id; "" is 0.  GF_ETOOBIG past GF_CHARGE_STR_MAX bytes (returned
 * negative, *id untouched).
 */
int gf_charge_intern(struct gf_charge_input *in, const char *s, size_t len,
		     uint32_t *id) GF_MUST_CHECK;
/* The text of an id (borrowed, valid until the input is released). */
const char *gf_charge_str(const struct gf_charge_input *in, uint32_t id);
/* The id of a text already interned, or 0 when it never was. */
uint32_t gf_charge_lookup(const struct gf_charge_input *in, const char *s);

/* The extra id of a combination (0 when every field is 0). */
uint32_t gf_charge_extra_id(struct gf_charge_input *in,
			    const struct gf_charge_extra *x);

/* Append one row (copied).  GF_ETOOBIG past the caps. */
int gf_charge_add_record(struct gf_charge_input *in,
			 const struct gf_charge_record *r) GF_MUST_CHECK;
int gf_charge_add_asset(struct gf_charge_input *in,
			const struct gf_charge_asset *a) GF_MUST_CHECK;
int gf_charge_add_tele(struct gf_charge_input *in,
		       const struct gf_charge_tele *t) GF_MUST_CHECK;

/* --- options ---------------------------------------------------------- */

enum gf_charge_key_kind {
	GF_CHARGE_KEY_CLUSTER = 0,
	GF_CHARGE_KEY_NODE,
	GF_CHARGE_KEY_NAMESPACE,
	GF_CHARGE_KEY_POD,
	GF_CHARGE_KEY_CONTAINER,
	GF_CHARGE_KEY_LABEL,
	GF_CHARGE_KEY_GPU_MODEL,
	/* OpenCost's AllocationProperties keys (GenerateKey) */
	GF_CHARGE_KEY_CONTROLLER_KIND,
	GF_CHARGE_KEY_CONTROLLER,  /* "kind:name", or "name" without kind */
	GF_CHARGE_KEY_SERVICE,	   /* the first service */
	GF_CHARGE_KEY_DEPLOYMENT,  /* the controller when its kind is */
	GF_CHARGE_KEY_STATEFULSET, /* that key's name, else */
	GF_CHARGE_KEY_DAEMONSET,   /* "__unallocated__" */
	GF_CHARGE_KEY_ANNOTATION,
};

struct gf_charge_key {
	enum gf_charge_key_kind kind;
	uint32_t label;	   /* GF_CHARGE_KEY_LABEL, _ANNOTATION: its name */
	const char *alias; /* gpufleet's name as parsed ("team"), else NULL:
			      what gf_charge_key_name says (static) */
};

/*
 * Parse a key: cluster, node, namespace, pod, container, label:NAME,
 * gpu_model, controllerKind, controller, service, deployment,
 * statefulset, daemonset, annotation:NAME; and the names gpufleet's own records
 * use: team (namespace), job (pod), class (label:class), user (label:user).
 * GF_EINVAL with e naming it.
 */
int gf_charge_key_parse(struct gf_charge_input *in, const char *s,
			struct gf_charge_key *k,
			struct gf_err *e) GF_MUST_CHECK;
/* The key's name as parsed back ("namespace", "label:team"). */
void gf_charge_key_name(const struct gf_charge_input *in,
			const struct gf_charge_key *k, char *out, size_t size);

/* KEY=VALUE: an allocation whose KEY is VALUE. */
struct gf_charge_match {
	struct gf_charge_key key;
	uint32_t value;
};

int gf_charge_match_parse(struct gf_charge_input *in, const char *s,
			  struct gf_charge_match *m,
			  struct gf_err *e) GF_MUST_CHECK;

enum gf_charge_split {
	GF_CHARGE_SPLIT_WEIGHTED = 0,
	GF_CHARGE_SPLIT_EVEN,
};

struct gf_charge_shared_hourly {
	char name[GF_CHARGE_NAME_MAX];
	double cost_hr;
};

struct gf_charge_opts {
	int64_t start_ms, end_ms; /* the window */
	int64_t now_ms;		  /* > 0: shared hourly costs stop here (as
				     OpenCost's for a window ending later) */
	int64_t step_ms;	  /* 0: one step; else steps of this */
	struct gf_charge_key agg[GF_CHARGE_MAX_KEYS];
	int nagg;	   /* 0: everything in one row named "" */
	bool share_idle;   /* OpenCost's shareIdle (= "__weighted__") */
	bool idle_by_node; /* idle per node, not per cluster */
	bool split_idle;   /* keep idle rows per cluster (or node) */
	bool lenient;	   /* skip bad records (listed), not fail */
	enum gf_charge_split share_split;
	/* allocations matching any of these are shared */
	struct gf_charge_match share[GF_CHARGE_MAX_MATCH];
	int nshare;
	/* only allocations matching: terms on one key OR, keys AND */
	struct gf_charge_match filter[GF_CHARGE_MAX_MATCH];
	int nfilter;
	struct gf_charge_shared_hourly shared_hourly[GF_CHARGE_MAX_SHARED];
	int nshared_hourly;
	enum gf_charge_mig_rule mig_rule;
	/* fill each row's shares (OpenCost's IncludeSharedCostBreakdown) */
	bool shared_breakdown;
};

/* Defaults over [start_ms, end_ms): OpenCost's (no idle sharing, idle
 * by cluster, merged, weighted split), MIG by compute slices. */
void gf_charge_opts_init(struct gf_charge_opts *o, int64_t start_ms,
			 int64_t end_ms);

/* GPU units of `count` instances of MIG profile `profile` on a GPU of
 * model `model` (gf_mig_model_by_id's names): 0 with *units set, or
 * GF_ENOTFOUND naming what is unknown in e. */
int gf_charge_mig_units(const char *model, const char *profile, double count,
			enum gf_charge_mig_rule rule, double *units,
			struct gf_err *e);

/* --- the result ------------------------------------------------------- */

enum gf_charge_row_kind {
	GF_CHARGE_ROW_ALLOC = 0,
	GF_CHARGE_ROW_IDLE,
};

/* What one shared allocation gave a row: name is its aggregation key,
 * or "overheadCost" for the hourly overheads together (OpenCost's
 * SharedCostBreakdown). */
struct gf_charge_share {
	char *name; /* owned by the result */
	double cpu_cost, gpu_cost, ram_cost, other_cost, total_cost;
};

/*
 * One aggregated allocation (OpenCost's Allocation after AggregateBy).
 * Costs include the idle shared into them (also kept apart in *_idle)
 * and sharedCost holds what shared allocations and hourly overheads
 * added.  Sums of minutes are kept so that averages can be formed as
 * OpenCost forms them (see gf_charge_row_* below).
 */
struct gf_charge_row {
	char *name; /* owned by the result */
	enum gf_charge_row_kind kind;
	uint32_t keyval[GF_CHARGE_MAX_KEYS]; /* string ids, per agg key */
	int64_t start_ms, end_ms;
	double cpu_core_hours, cpu_req_min, cpu_use_min; /* core-minutes */
	double cpu_cost, cpu_cost_idle;
	double gpu_hours, gpu_req_min; /* GPU-minutes */
	double gpu_cost, gpu_cost_idle;
	double ram_gib_hours, ram_req_min, ram_use_min; /* GiB-minutes */
	double ram_cost, ram_cost_idle;
	double other_cost, shared_cost;
	/* telemetry: GPU-hours it covered, and of those the active ones
	 * (activity x units x hours); the signals read */
	double gpu_tele_hours, gpu_active_hours;
	unsigned signals;
	double waste[GF_CHARGE_NWASTE]; /* GPU cost under each diagnosis */
	/* with opts.shared_breakdown: sharedCost by shared allocation
	 * (owned by the result), sorted by name */
	struct gf_charge_share *shares;
	size_t nshares;
};

double gf_charge_row_total(const struct gf_charge_row *r);
double gf_charge_row_minutes(const struct gf_charge_row *r);
double gf_charge_row_idle(const struct gf_charge_row *r);
double gf_charge_row_waste(const struct gf_charge_row *r);
/* NaN when there is nothing to say (no telemetry for the GPU one). */
double gf_charge_row_cpu_eff(const struct gf_charge_row *r);
double gf_charge_row_ram_eff(const struct gf_charge_row *r);
double gf_charge_row_gpu_eff(const struct gf_charge_row *r);
double gf_charge_row_total_eff(const struct gf_charge_row *r);

struct gf_charge_step {
	int64_t start_ms, end_ms;
	struct gf_charge_row *rows; /* sorted by name, as OpenCost's JSON */
	size_t nrows;
	/* the priced capacity of the step (assets) and what the rows sum
	 * to; they differ by the idle a filter dropped, by undistributed
	 * filtered shares and by hourly overheads */
	double asset_cost, rows_cost;
};

/* A record left out (lenient) and why. */
struct gf_charge_skip {
	uint32_t src, line;
	char why[240];
};

struct gf_charge_result {
	struct gf_charge_step *steps;
	int nsteps;
	struct gf_charge_skip *skipped; /* the first GF_CHARGE_SKIPS_KEPT */
	size_t nskipped;		/* listed */
	size_t nskipped_total;		/* all of them */
};

/*
 * Price every record against its node's asset rows over the window (and
 * each step of it), check that no GPU is held past its capacity, and
 * aggregate as OpenCost's AggregateBy does with the options given.
 *
 * Errors (e names the record as "FILE:LINE" and the field): GF_EINVAL
 * for a record ending before it starts, a negative quantity, a node with
 * no asset row at the record's time, a GPU model or MIG profile unknown,
 * a price unknown where one is needed, records of one node (or one GPU,
 * where records name their GPUs) holding more GPU than it has, at once;
 * asset rows of a node that overlap; GF_EINVAL for options that do not
 * fit (an empty window, too many steps).  With o->lenient, bad records
 * are skipped and listed in out->skipped instead (bad assets still
 * fail).  On success the caller releases out with
 * gf_charge_result_release; on failure out holds nothing.
 */
int gf_charge_run(const struct gf_charge_input *in,
		  const struct gf_charge_opts *o, struct gf_charge_result *out,
		  struct gf_err *e) GF_MUST_CHECK;

void gf_charge_result_release(struct gf_charge_result *r);

/* Round as OpenCost's API does: to 5 decimals, half away from zero. */
double gf_charge_round(double v);

/* Format ms since the epoch as RFC3339 UTC ("2024-05-01T00:00:00Z"). */
void gf_charge_time_str(int64_t ms, char *out, size_t size);

#endif
