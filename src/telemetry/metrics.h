/*
 * metrics.h - the GPU metrics the agent exports, under dcgm-exporter's
 * names, types and help texts (reference/dcgm-exporter/
 * default-counters.csv), and the parser of its counters CSV format, which
 * chooses among them.
 */
#ifndef GF_TELEMETRY_METRICS_H
#define GF_TELEMETRY_METRICS_H

#include <stdbool.h>

#include <gpufleet/err.h>

enum gf_metric {
	GF_M_SM_CLOCK = 0,
	GF_M_MEM_CLOCK,
	GF_M_GPU_TEMP,
	GF_M_POWER,
	GF_M_ENERGY,
	GF_M_PCIE_REPLAY,
	GF_M_GPU_UTIL,
	GF_M_MEM_COPY_UTIL,
	GF_M_ENC_UTIL,
	GF_M_DEC_UTIL,
	GF_M_XID,
	GF_M_FB_FREE,
	GF_M_FB_USED,
	GF_M_FB_RESERVED,
	GF_M_UNC_REMAPPED,
	GF_M_COR_REMAPPED,
	GF_M_REMAP_FAILURE,
	GF_M_PROF_GR,	  /* GPM, Hopper and newer */
	GF_M_PROF_TENSOR, /* GPM */
	GF_M_PROF_DRAM,	  /* GPM */
	GF_M_PCIE_TX,
	GF_M_PCIE_RX,
	/* commented out in dcgm-exporter's default CSV: opt-in */
	GF_M_PROF_SM_ACTIVE, /* GPM */
	GF_M_ECC_SBE_VOL,
	GF_M_ECC_DBE_VOL,
	GF_M_ECC_SBE_AGG,
	GF_M_ECC_DBE_AGG,
	GF_M_COUNT
};

struct gf_metric_def {
	const char *name; /* DCGM field name */
	const char *type; /* "gauge" or "counter" */
	const char *help;
	bool per_mig; /* also reported per MIG instance */
	bool opt_in;  /* only when a counters file lists it */
};

const struct gf_metric_def *gf_metric_def(enum gf_metric m);
/* GF_M_COUNT when unknown */
enum gf_metric gf_metric_by_name(const char *name);

/* What the agent exports: metrics in CSV order, and label fields. */
struct gf_counters {
	enum gf_metric order[GF_M_COUNT];
	int n;
	bool driver_label;    /* DCGM_FI_DRIVER_VERSION, label */
	char skipped[64][64]; /* names in the file gpufleet cannot collect */
	int skipped_line[64]; /* and their lines */
	int nskipped;
};

/* Every metric of dcgm-exporter's default CSV we collect, in its order. */
void gf_counters_default(struct gf_counters *c);

/*
 * Parse dcgm-exporter's CSV format: "NAME, TYPE, HELP" lines, '#'
 * comments, blanks.  Errors name file:line (GF_EPARSE): a line without
 * three fields, a type other than gauge/counter/label, a known metric with
 * another type than dcgm's.  Names gpufleet cannot collect are listed in
 * c->skipped, not errors.
 */
int gf_counters_read(const char *path, struct gf_counters *c,
		     struct gf_err *e) GF_MUST_CHECK;

#endif
