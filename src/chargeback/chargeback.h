/*
 * chargeback.h - the adapters around the chargeback core
 * (include/gpufleet/charge.h): readers that fill a gf_charge_input from
 * files (the records and assets CSVs of the scripts' contract, a prices
 * file in YAML, Slurm's `sacct --parsable2`, GPU telemetry) or from the
 * controller's store, and renderers of a result (OpenCost-shaped JSON,
 * CSV, a text table, one self-contained HTML page).  Formats:
 * docs/chargeback.md.
 *
 * Every reader names the file, the line and the field of what it cannot
 * read ("'records.csv':12: field 'gpus': expected a number, got 'x'").
 * With lenient set, a bad row is skipped and listed in *sk instead (a
 * bad header or file still fails).  Readers append to the input; on
 * failure the input may hold the rows read before the bad one, and the
 * caller drops it.
 */
#ifndef GF_CHARGEBACK_H
#define GF_CHARGEBACK_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/charge.h>

#include "util/buf.h"

/* Rows the readers skipped (lenient), as the core lists records. */
struct gf_cb_skips {
	struct gf_charge_skip *v; /* the first GF_CHARGE_SKIPS_KEPT */
	size_t n, total;
};

void gf_cb_skips_release(struct gf_cb_skips *sk);

/* A time: RFC3339 ("2024-05-01T00:00:00Z", offsets, fractions) or unix
 * seconds ("1714521600", "1714521600.5").  0, or -1 when it is not one. */
int gf_cb_parse_time(const char *s, int64_t *ms) GF_MUST_CHECK;

/*
 * A window: "START,END" (each as gf_cb_parse_time), or a duration ending
 * now ("7d", "24h", "90m": now_ms rounded down to the minute).  0 or
 * GF_EINVAL with e saying what is wrong.
 */
int gf_cb_parse_window(const char *s, int64_t now_ms, int64_t *start,
		       int64_t *end, struct gf_err *e) GF_MUST_CHECK;

/*
 * Prices: per GPU model, per CPU core, per GiB (per hour), a whole
 * node's price where only that is known, and the MIG rule.  NaN:
 * not given.
 */
#define GF_CB_MODELS_MAX 64
#define GF_CB_NODES_MAX	 4096

struct gf_cb_prices {
	char currency[16];
	int nmodels;
	char model[GF_CB_MODELS_MAX][64];
	double model_hr[GF_CB_MODELS_MAX];
	double gpu_default_hr; /* any model not listed */
	double cpu_core_hr, ram_gib_hr;
	int nnodes;
	char (*node)[64]; /* owned */
	double *node_hr;
	bool has_mig_rule;
	enum gf_charge_mig_rule mig_rule;
};

/* OpenCost's defaults (configs/default.json): the base prices a node
 * price is split by when the prices file gives none. */
#define GF_CB_BASE_GPU_HR 0.95
#define GF_CB_BASE_CPU_HR 0.031611
#define GF_CB_BASE_RAM_HR 0.004237

void gf_cb_prices_init(struct gf_cb_prices *p);
void gf_cb_prices_release(struct gf_cb_prices *p);
/* Read a prices file (format in docs/chargeback.md): GF_EPARSE naming
 * the file, line and key of what is wrong. */
int gf_cb_read_prices(const char *path, struct gf_cb_prices *p,
		      struct gf_err *e) GF_MUST_CHECK;
/* The GPU price of a model (case-insensitive), or the default, or NaN. */
double gf_cb_gpu_price(const struct gf_cb_prices *p, const char *model);

/* The records CSV of the contract; its optional columns labels,
 * gpu_model, mig_profile, gpu_ids, other_cost. */
int gf_cb_read_records(struct gf_charge_input *in, const char *path,
		       bool lenient, struct gf_cb_skips *sk,
		       struct gf_err *e) GF_MUST_CHECK;

/* The assets CSV of the contract; optional gpu_model, node_price_hr.
 * Prices left empty come from p (NULL: none): see docs/chargeback.md. */
int gf_cb_read_assets(struct gf_charge_input *in, const char *path,
		      const struct gf_cb_prices *p,
		      struct gf_err *e) GF_MUST_CHECK;

/* GPU telemetry: node,gpu,start,end and any of gr_engine_active,
 * sm_active, gpu_util (percent), diagnosis. */
int gf_cb_read_telemetry(struct gf_charge_input *in, const char *path,
			 bool lenient, struct gf_cb_skips *sk,
			 struct gf_err *e) GF_MUST_CHECK;

/*
 * `sacct --parsable2` output with its header (-P, and -X for
 * allocations): JobID, Account, NodeList, Start, End, AllocTRES
 * required; Cluster, User, Partition, QOS, JobName, State optional.
 * Times are read as UTC (run sacct with TZ=UTC); a job still running
 * (End "Unknown") ends at now_ms; one never started is not usage and is
 * left out.  A job on several nodes becomes a record per node, its TRES
 * split evenly.
 */
int gf_cb_read_sacct(struct gf_charge_input *in, const char *path,
		     int64_t now_ms, bool lenient, struct gf_cb_skips *sk,
		     struct gf_err *e) GF_MUST_CHECK;

/*
 * The controller's store (a gf_store_open URL): one record per run kept
 * (job, attempt, replica that ended), on the run's node from its start
 * to its end: cluster `cluster`, namespace the job's team, pod its id,
 * container the replica, labels class, job_name, attempt and reason; its
 * GPUs as the job asked (whole, milli share, MIG profile with the job's
 * GPU model or its node's); CPU and memory requests (no usage known).
 */
int gf_cb_read_db(struct gf_charge_input *in, const char *url,
		  const char *cluster, int64_t now_ms,
		  struct gf_err *e) GF_MUST_CHECK;

/*
 * The store's nodes (those that joined, as they registered: CPUs,
 * memory, GPUs and their model) as asset rows over [start_ms, end_ms),
 * priced by p (a GPU model without a price: GF_EINVAL naming it and the
 * node).  0 or the store's error.
 */
int gf_cb_db_assets(struct gf_charge_input *in, const char *url,
		    const char *cluster, const struct gf_cb_prices *p,
		    int64_t start_ms, int64_t end_ms,
		    struct gf_err *e) GF_MUST_CHECK;

/*
 * The `prices:` block of a YAML document (serve.yaml): GPU model to its
 * per-GPU-hour price, and the names cpu_core, ram_gib (per hour),
 * currency and default (any model not listed):
 *
 *   prices:
 *     h100-sxm: 2.50
 *     l40s: 1.10
 *     cpu_core: 0.03
 *
 * gf_cb_prices_block reads the block at v (r's document: errors name
 * its file and line); gf_cb_read_prices_block reads the file at path and
 * its top-level `prices:` (*found false, 0, when it has none).
 * GF_EPARSE naming file:line and key.
 */
struct gf_yr;
struct gf_yn;
int gf_cb_prices_block(const struct gf_yr *r, const struct gf_yn *v,
		       struct gf_cb_prices *p) GF_MUST_CHECK;
int gf_cb_read_prices_block(const char *path, struct gf_cb_prices *p,
			    bool *found, struct gf_err *e) GF_MUST_CHECK;

/* What the renderers are told besides the result. */
struct gf_cb_view {
	const struct gf_charge_input *in;
	const struct gf_charge_opts *o;
	const struct gf_cb_skips *read_skips; /* may be NULL */
	const char *currency;		      /* "USD" */
	const char *title;		      /* HTML title, may be NULL */
};

/* {"code": 200, "data": [ {name: allocation, ...} per step ]} (OpenCost's
 * allocation API; floats rounded to 5 decimals). */
int gf_cb_render_json(const struct gf_cb_view *v,
		      const struct gf_charge_result *res,
		      struct gf_buf *out) GF_MUST_CHECK;
/* One CSV line per row and step, with a header. */
int gf_cb_render_csv(const struct gf_cb_view *v,
		     const struct gf_charge_result *res,
		     struct gf_buf *out) GF_MUST_CHECK;
/* The text table. */
int gf_cb_render_table(const struct gf_cb_view *v,
		       const struct gf_charge_result *res,
		       struct gf_buf *out) GF_MUST_CHECK;
/* The page: res over the window, daily over it by day (may be NULL). */
int gf_cb_render_html(const struct gf_cb_view *v,
		      const struct gf_charge_result *res,
		      const struct gf_charge_result *daily,
		      struct gf_buf *out) GF_MUST_CHECK;

/* "'FILE':LINE: why" lines for every skipped record (reader and core),
 * and the count. */
void gf_cb_skips_text(const struct gf_cb_view *v,
		      const struct gf_charge_result *res, struct gf_buf *out);

#endif
